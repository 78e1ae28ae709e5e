package gormstore

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

var lockForUpdate = clause.Locking{Strength: "UPDATE"}

type phraseRow struct {
	ID            string `gorm:"primaryKey"`
	OwnerID       string
	Phrase        string
	Fold          string
	Platform      string
	Community     string
	Status        string
	Matches       int64
	LastCheckedAt int64
	LastSource    string
	CreatedAt     int64 `gorm:"autoCreateTime:false"`
}

func (phraseRow) TableName() string { return "phrases" }

func (r phraseRow) phrase() core.Phrase {
	return core.Phrase{
		ID: r.ID, OwnerID: r.OwnerID, Phrase: r.Phrase, Platform: core.Platform(r.Platform),
		Community: r.Community, Status: core.PhraseStatus(r.Status), Matches: int(r.Matches),
		LastCheckedAt: fromMicros(r.LastCheckedAt), LastSource: core.Source(r.LastSource),
		CreatedAt: fromMicros(r.CreatedAt),
	}
}

type idempotencyRow struct {
	OwnerID   string `gorm:"primaryKey"`
	Key       string `gorm:"primaryKey"`
	PhraseID  string
	CreatedAt int64 `gorm:"autoCreateTime:false"`
}

func (idempotencyRow) TableName() string { return "idempotency_keys" }

// PhraseStore keeps phrases.
type PhraseStore struct{ db *DB }

var _ ports.PhraseStore = (*PhraseStore)(nil)

// NewPhraseStore returns the phrase store of db.
func NewPhraseStore(db *DB) *PhraseStore { return &PhraseStore{db: db} }

// CreatePhrase implements ports.PhraseStore.
func (s *PhraseStore) CreatePhrase(ctx context.Context, p *core.Phrase, limits core.Limits, idem ports.Idempotency) (replayed bool, err error) {
	err = s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		// The owner lock orders concurrent creates of one owner, so the
		// idempotency record, the duplicate check and the limit all see
		// the work of the create before.
		if _, err := lockOwner(tx, p.OwnerID); err != nil {
			return err
		}
		if idem.Key != "" {
			var rec idempotencyRow
			err := tx.Take(&rec, "owner_id = ? AND key = ?", p.OwnerID, idem.Key).Error
			switch {
			case err == nil && rec.CreatedAt >= micros(idem.Since):
				var row phraseRow
				if err := tx.Take(&row, "id = ?", rec.PhraseID).Error; err != nil {
					return err
				}
				*p = row.phrase()
				replayed = true
				return nil
			case err == nil:
				if err := tx.Delete(&rec).Error; err != nil {
					return err
				}
			case !errors.Is(err, gorm.ErrRecordNotFound):
				return err
			}
		}
		var dup int64
		if err := tx.Model(&phraseRow{}).Where("owner_id = ? AND platform = ? AND community = ? AND fold = ?",
			p.OwnerID, p.Platform, p.Community, core.FoldKey(p.Phrase)).Count(&dup).Error; err != nil {
			return err
		}
		if dup > 0 {
			return core.Errorf(core.KindConflict, "the phrase %q already exists on %s", p.Phrase, p.Platform)
		}
		usage, err := usage(tx, p.OwnerID)
		if err != nil {
			return err
		}
		if err := limits.CheckNewPhrase(usage, p.Platform); err != nil {
			return err
		}
		now := tx.NowFunc().Truncate(1000)
		p.ID, p.CreatedAt, p.LastCheckedAt, p.Matches = newID(), now, now, 0
		if err := tx.Create(&phraseRow{
			ID: p.ID, OwnerID: p.OwnerID, Phrase: p.Phrase, Fold: core.FoldKey(p.Phrase), Platform: string(p.Platform),
			Community: p.Community, Status: string(p.Status), LastCheckedAt: micros(now),
			LastSource: string(p.LastSource), CreatedAt: micros(now),
		}).Error; err != nil {
			return err
		}
		if err := bumpPhraseVersion(tx, p.OwnerID); err != nil {
			return err
		}
		if idem.Key != "" {
			return tx.Create(&idempotencyRow{OwnerID: p.OwnerID, Key: idem.Key, PhraseID: p.ID, CreatedAt: micros(now)}).Error
		}
		return nil
	})
	return replayed, translate(err, "phrase")
}

// Phrase implements ports.PhraseStore.
func (s *PhraseStore) Phrase(ctx context.Context, ownerID, id string) (core.Phrase, error) {
	var row phraseRow
	if err := s.db.with(ctx).Take(&row, "id = ? AND owner_id = ?", id, ownerID).Error; err != nil {
		return core.Phrase{}, translate(err, "phrase")
	}
	return row.phrase(), nil
}

// Phrases implements ports.PhraseStore.
func (s *PhraseStore) Phrases(ctx context.Context, ownerID string, f ports.PhraseFilter) ([]core.Phrase, error) {
	// Every dashboard page with a phrase menu lists them, so this runs as
	// a cached prepared statement with a hand-written scan (gorm's took
	// as long as the inbox query itself).
	q := "SELECT id, owner_id, phrase, platform, community, status, matches, last_checked_at, last_source, created_at FROM phrases WHERE owner_id = ?"
	args := []any{ownerID}
	if f.Platform != "" {
		q += " AND platform = ?"
		args = append(args, string(f.Platform))
	}
	if f.Status != "" {
		q += " AND status = ?"
		args = append(args, string(f.Status))
	}
	rows, err := s.db.query(ctx, q+" ORDER BY created_at, id", args...)
	if err != nil {
		return nil, translate(err, "phrase")
	}
	defer rows.Close()
	out := []core.Phrase{}
	for rows.Next() {
		var r phraseRow
		if err := rows.Scan(&r.ID, &r.OwnerID, &r.Phrase, &r.Platform, &r.Community, &r.Status, &r.Matches,
			&r.LastCheckedAt, &r.LastSource, &r.CreatedAt); err != nil {
			return nil, translate(err, "phrase")
		}
		out = append(out, r.phrase())
	}
	return out, translate(rows.Err(), "phrase")
}

// SetPhraseStatus implements ports.PhraseStore.
func (s *PhraseStore) SetPhraseStatus(ctx context.Context, ownerID, id string, st core.PhraseStatus) (core.Phrase, error) {
	var out core.Phrase
	err := s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&phraseRow{}).Where("id = ? AND owner_id = ?", id, ownerID).Update("status", string(st))
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return gorm.ErrRecordNotFound
		}
		if err := bumpPhraseVersion(tx, ownerID); err != nil {
			return err
		}
		var row phraseRow
		if err := tx.Take(&row, "id = ?", id).Error; err != nil {
			return err
		}
		out = row.phrase()
		return nil
	})
	return out, translate(err, "phrase")
}

// DeletePhrase implements ports.PhraseStore.
func (s *PhraseStore) DeletePhrase(ctx context.Context, ownerID, id string) error {
	return translate(s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		// Foreign keys cascade too; deleting the matches first keeps the
		// rule true on databases where they are switched off.
		if err := tx.Where("phrase_id = ? AND owner_id = ?", id, ownerID).Delete(&matchRow{}).Error; err != nil {
			return err
		}
		if err := tx.Where("phrase_id = ? AND owner_id = ?", id, ownerID).Delete(&idempotencyRow{}).Error; err != nil {
			return err
		}
		res := tx.Where("id = ? AND owner_id = ?", id, ownerID).Delete(&phraseRow{})
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return gorm.ErrRecordNotFound
		}
		return bumpPhraseVersion(tx, ownerID)
	}), "phrase")
}

// Usage implements ports.PhraseStore.
func (s *PhraseStore) Usage(ctx context.Context, ownerID string) (core.Usage, error) {
	u, err := usage(s.db.with(ctx), ownerID)
	return u, translate(err, "usage")
}

func usage(tx *gorm.DB, ownerID string) (core.Usage, error) {
	u := core.Usage{Phrases: map[core.Platform]int{}, Accounts: map[core.Platform]int{}}
	for _, p := range core.Platforms {
		u.Phrases[p], u.Accounts[p] = 0, 0
	}
	type count struct {
		Platform string
		N        int
	}
	var counts []count
	if err := tx.Raw("SELECT platform, COUNT(*) AS n FROM phrases WHERE owner_id = ? GROUP BY platform", ownerID).
		Scan(&counts).Error; err != nil {
		return u, err
	}
	for _, c := range counts {
		u.Phrases[core.Platform(c.Platform)] = c.N
	}
	counts = nil
	if err := tx.Raw("SELECT platform, COUNT(*) AS n FROM accounts WHERE owner_id = ? GROUP BY platform", ownerID).
		Scan(&counts).Error; err != nil {
		return u, err
	}
	for _, c := range counts {
		u.Accounts[core.Platform(c.Platform)] = c.N
	}
	if err := tx.Raw("SELECT COUNT(*) FROM webhooks WHERE owner_id = ?", ownerID).Scan(&u.Webhooks).Error; err != nil {
		return u, err
	}
	if err := tx.Raw("SELECT COUNT(*) FROM owners").Scan(&u.Owners).Error; err != nil {
		return u, err
	}
	return u, nil
}

func bumpPhraseVersion(tx *gorm.DB, ownerID string) error {
	return tx.Exec("UPDATE owners SET phrase_version = phrase_version + 1 WHERE id = ?", ownerID).Error
}

// PhraseVersion implements ports.PhraseStore.
func (s *PhraseStore) PhraseVersion(ctx context.Context, ownerID string) (int64, error) {
	rows, err := s.db.query(ctx, "SELECT phrase_version FROM owners WHERE id = ?", ownerID)
	if err != nil {
		return 0, translate(err, "owner")
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return 0, translate(err, "owner")
		}
		return 0, translate(gorm.ErrRecordNotFound, "owner")
	}
	var v int64
	return v, translate(rows.Scan(&v), "owner")
}

// ListeningPhrases implements ports.PhraseStore.
func (s *PhraseStore) ListeningPhrases(ctx context.Context, p core.Platform) ([]core.Phrase, error) {
	var rows []phraseRow
	if err := s.db.with(ctx).Where("platform = ? AND status = ?", p, core.Listening).
		Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err, "phrase")
	}
	out := make([]core.Phrase, len(rows))
	for i, r := range rows {
		out[i] = r.phrase()
	}
	return out, nil
}

// MarkChecked implements ports.PhraseStore.
func (s *PhraseStore) MarkChecked(ctx context.Context, ids []string, src core.Source, at time.Time) error {
	if len(ids) == 0 {
		return nil
	}
	err := s.db.with(ctx).Model(&phraseRow{}).Where("id IN ?", ids).
		Updates(map[string]any{"last_checked_at": micros(at), "last_source": string(src)}).Error
	return translate(err, "phrase")
}
