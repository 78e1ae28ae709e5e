package gormstore

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

type phraseRow struct {
	ID                                   string `gorm:"primaryKey"`
	OwnerID, Phrase, Platform, Community string
	Fold                                 string // core.FoldKey of Phrase: duplicates are found by it
	Status, LastSource                   string
	Matches                              int64
	Filters                              string // JSON of core.PhraseFilters; empty for none (phrasefilters.go)
	CreatedAt, LastCheckedAt             int64  `gorm:"autoCreateTime:false"` // µs
}

func (phraseRow) TableName() string { return "phrases" }

func (r phraseRow) phrase() core.Phrase {
	return core.Phrase{
		ID: r.ID, OwnerID: r.OwnerID, Phrase: r.Phrase, Platform: core.Platform(r.Platform),
		Community: r.Community, Status: core.PhraseStatus(r.Status), Matches: int(r.Matches),
		LastCheckedAt: fromMicros(r.LastCheckedAt), LastSource: core.Source(r.LastSource),
		CreatedAt: fromMicros(r.CreatedAt), Filters: decodeFilters(r.Filters),
	}
}

type idempotencyRow struct {
	OwnerID, Key string `gorm:"primaryKey"`
	PhraseID     string
	CreatedAt    int64 `gorm:"autoCreateTime:false"`
}

func (idempotencyRow) TableName() string { return "idempotency_keys" }

// PhraseStore keeps phrases: each owner's (ports.PhraseStore) and the
// listening ones the readers of posts take (ports.ListeningStore).
type PhraseStore struct{ db *DB }

func NewPhraseStore(db *DB) *PhraseStore { return &PhraseStore{db: db} }

// CreatePhrase implements ports.PhraseStore. The owner lock orders
// concurrent creates of one owner, so the idempotency record, the
// duplicate check and the limit all see the create before.
func (s *PhraseStore) CreatePhrase(ctx context.Context, p *core.Phrase, limits core.Limits, idem ports.Idempotency) (replayed bool, err error) {
	err = s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := lockOwner(tx, p.OwnerID); err != nil {
			return err
		}
		if idem.Key != "" { // an expired record frees its key
			if err := tx.Where("owner_id = ? AND key = ? AND created_at < ?", p.OwnerID, idem.Key, micros(idem.Since)).
				Delete(&idempotencyRow{}).Error; err != nil {
				return err
			}
			var row phraseRow
			err := tx.Joins("JOIN idempotency_keys k ON k.phrase_id = phrases.id").
				Take(&row, "k.owner_id = ? AND k.key = ?", p.OwnerID, idem.Key).Error
			if err == nil {
				*p, replayed = row.phrase(), true
			}
			if !errors.Is(err, gorm.ErrRecordNotFound) {
				return err
			}
		}
		var dup int64
		if err := tx.Model(&phraseRow{}).Where("owner_id = ? AND platform = ? AND community = ? AND fold = ?",
			p.OwnerID, p.Platform, p.Community, core.FoldKey(p.Phrase)).Count(&dup).Error; err != nil || dup > 0 {
			return cmp.Or[error](err, core.Errorf(core.KindConflict, "the phrase %q already exists on %s", p.Phrase, p.Platform))
		}
		u, err := usage(tx, p.OwnerID)
		if err == nil {
			err = limits.CheckNewPhrase(u, p.Platform)
		}
		if err != nil {
			return err
		}
		now := tx.NowFunc().Truncate(time.Microsecond)
		p.ID, p.CreatedAt, p.LastCheckedAt, p.Matches = newID(), now, now, 0
		if err := tx.Create(&phraseRow{
			ID: p.ID, OwnerID: p.OwnerID, Phrase: p.Phrase, Fold: core.FoldKey(p.Phrase), Platform: string(p.Platform),
			Community: p.Community, Status: string(p.Status), LastCheckedAt: micros(now),
			LastSource: string(p.LastSource), CreatedAt: micros(now), Filters: encodeFilters(p.Filters),
		}).Error; err != nil {
			return err
		}
		if err := bumpPhraseVersion(tx, p.OwnerID); err != nil || idem.Key == "" {
			return err
		}
		return tx.Create(&idempotencyRow{OwnerID: p.OwnerID, Key: idem.Key, PhraseID: p.ID, CreatedAt: micros(now)}).Error
	})
	return replayed, translate(err, "phrase")
}

func (s *PhraseStore) Phrase(ctx context.Context, ownerID, id string) (core.Phrase, error) {
	return one(s.db.with(ctx), "phrase", phraseRow.phrase, "id = ? AND owner_id = ?", id, ownerID)
}

func (s *PhraseStore) Phrases(ctx context.Context, ownerID string, f ports.PhraseFilter) ([]core.Phrase, error) {
	q := s.db.with(ctx).Where("owner_id = ?", ownerID).Where(&phraseRow{Platform: string(f.Platform), Status: string(f.Status)}) // zero fields are no condition
	return list(q.Order("created_at, id"), "phrase", phraseRow.phrase)
}

func (s *PhraseStore) SetPhraseStatus(ctx context.Context, ownerID, id string, st core.PhraseStatus) (core.Phrase, error) {
	return s.UpdatePhrase(ctx, ownerID, id, ports.PhraseChange{Status: &st})
}

// DeletePhrase implements ports.PhraseStore; its matches go by ON DELETE CASCADE.
func (s *PhraseStore) DeletePhrase(ctx context.Context, ownerID, id string) error {
	return translate(s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		if err := bumpPhraseVersion(tx, ownerID); err != nil { // the owner's row first (lockPhrases)
			return err
		}
		return affected(tx.Where("id = ? AND owner_id = ?", id, ownerID).Delete(&phraseRow{}))
	}), "phrase")
}

func (s *PhraseStore) Usage(ctx context.Context, ownerID string) (core.Usage, error) {
	u, err := usage(s.db.with(ctx), ownerID)
	return u, translate(err, "usage")
}

// usage counts what the plan limits: the owner's phrases and accounts by
// platform, its webhooks, and the deployment's owners. One statement, as
// it runs under the owner's lock.
func usage(tx *gorm.DB, ownerID string) (core.Usage, error) {
	u := core.Usage{Phrases: map[core.Platform]int{}, Accounts: map[core.Platform]int{}}
	for _, p := range core.Platforms {
		u.Phrases[p], u.Accounts[p] = 0, 0
	}
	var counts []struct {
		Tbl, Platform string
		N             int
	}
	err := tx.Raw(`SELECT 'phrases' AS tbl, platform, COUNT(*) AS n FROM phrases WHERE owner_id = @id GROUP BY platform
		UNION ALL SELECT 'accounts', platform, COUNT(*) FROM accounts WHERE owner_id = @id GROUP BY platform
		UNION ALL SELECT 'webhooks', '', COUNT(*) FROM webhooks WHERE owner_id = @id
		UNION ALL SELECT 'owners', '', COUNT(*) FROM owners`, sql.Named("id", ownerID)).Scan(&counts).Error
	by := map[string]map[core.Platform]int{"phrases": u.Phrases, "accounts": u.Accounts, "webhooks": {}, "owners": {}}
	for _, c := range counts {
		by[c.Tbl][core.Platform(c.Platform)] = c.N
	}
	u.Webhooks, u.Owners = by["webhooks"][""], by["owners"][""]
	return u, err
}

// lockPhrases holds the owner's row, as its matches' stamp does, before a
// phrase of theirs is changed, deleted or filled: a batch of posts holds
// that row and then its phrases, so taking them in the other order would
// deadlock with it, and a phrase deleted between the batch's read and its
// insert would fail it on the matches' foreign key. NO KEY, as the stamp,
// so rows referring to the owner are stored meanwhile.
func lockPhrases(tx *gorm.DB, ownerID string) error {
	return tx.Clauses(lockNoKeyUpdate).Select("id").Take(&ownerRow{}, "id = ?", ownerID).Error
}

// bumpPhraseVersion tells readers of the owner's phrases that they
// changed (PhraseVersion). It takes the owner's row (lockPhrases).
func bumpPhraseVersion(tx *gorm.DB, ownerID string) error {
	return tx.Model(&ownerRow{}).Where("id = ?", ownerID).Update("phrase_version", gorm.Expr("phrase_version + 1")).Error
}

func (s *PhraseStore) PhraseVersion(ctx context.Context, ownerID string) (int64, error) {
	return one(s.db.with(ctx).Select("phrase_version"), "owner", func(r ownerRow) int64 { return r.PhraseVersion }, "id = ?", ownerID)
}

func (s *PhraseStore) ListeningPhrases(ctx context.Context, p core.Platform) ([]core.Phrase, error) {
	return list(s.db.with(ctx).Where("platform = ? AND status = ?", p, core.Listening).Order("created_at, id"), "phrase", phraseRow.phrase)
}

func (s *PhraseStore) OwnerListeningPhrases(ctx context.Context, ownerID string, p core.Platform) ([]core.Phrase, error) {
	return s.Phrases(ctx, ownerID, ports.PhraseFilter{Platform: p, Status: core.Listening})
}

func (s *PhraseStore) MarkChecked(ctx context.Context, ids []string, src core.Source, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	// The ids as one JSON value: the reddit poller's list, of every
	// owner, may pass either database's limit on bound values.
	list, _ := json.Marshal(ids)
	err := s.db.write(ctx).Model(&phraseRow{}).Where("id IN (SELECT value FROM "+s.db.jsonValues()+")", string(list)).
		Updates(map[string]any{"last_checked_at": micros(at), "last_source": string(src)}).Error
	return translate(err, "phrase")
}
