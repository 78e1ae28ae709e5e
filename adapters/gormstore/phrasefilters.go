package gormstore

import (
	"context"
	"encoding/json"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// filtersJSON is the phrases table's filters column: a JSON object in the
// API's names, each field left out when it filters nothing.
type filtersJSON struct {
	Exclude            []string `json:"exclude,omitempty"`
	Require            []string `json:"require,omitempty"`
	ExcludeAuthors     []string `json:"excludeAuthors,omitempty"`
	ExcludeCommunities []string `json:"excludeCommunities,omitempty"`
	MinLikes           int      `json:"minLikes,omitempty"`
	MinComments        int      `json:"minComments,omitempty"`
	TitleOnly          bool     `json:"titleOnly,omitempty"`
}

// encodeFilters is the column's value for f: empty for no filter, as
// every phrase made before filters has.
func encodeFilters(f core.PhraseFilters) string {
	if f.IsZero() {
		return ""
	}
	b, _ := json.Marshal(filtersJSON(f)) // strings, numbers and a bool: cannot fail
	return string(b)
}

// decodeFilters reads the column. A value it cannot read is no filter,
// rather than a phrase that cannot be read.
func decodeFilters(s string) core.PhraseFilters {
	var f filtersJSON
	if s == "" || json.Unmarshal([]byte(s), &f) != nil {
		return core.PhraseFilters{}
	}
	return core.PhraseFilters(f)
}

// UpdatePhrase implements ports.PhraseStore. The row is locked from its
// read to its write, so a change of other fields made meanwhile is kept.
func (s *PhraseStore) UpdatePhrase(ctx context.Context, ownerID, id string, ch ports.PhraseChange) (core.Phrase, error) {
	var p core.Phrase
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		var row phraseRow
		if err := lockPhrases(tx, ownerID); err != nil {
			return err
		}
		if err := tx.Clauses(lockForUpdate).Take(&row, "id = ? AND owner_id = ?", id, ownerID).Error; err != nil {
			return err
		}
		p = row.phrase()
		set := map[string]any{}
		if ch.Status != nil {
			p.Status = *ch.Status
			set["status"] = string(p.Status)
		}
		if !ch.Filters.IsZero() {
			p.Filters = p.Filters.With(ch.Filters)
			set["filters"] = encodeFilters(p.Filters)
		}
		if len(set) == 0 {
			return nil
		}
		if err := tx.Model(&phraseRow{}).Where("id = ?", id).Updates(set).Error; err != nil {
			return err
		}
		return bumpPhraseVersion(tx, ownerID)
	})
	if err != nil {
		return core.Phrase{}, translate(err, "phrase")
	}
	return p, nil
}
