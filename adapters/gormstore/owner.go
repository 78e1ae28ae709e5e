package gormstore

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

type ownerRow struct {
	ID          string `gorm:"primaryKey"`
	Email       string
	Name        string
	LastMatchUs int64
	CreatedAt   int64 `gorm:"autoCreateTime:false"`
}

func (ownerRow) TableName() string { return "owners" }

// OwnerStore keeps owners.
type OwnerStore struct{ db *DB }

var _ ports.OwnerStore = (*OwnerStore)(nil)

// NewOwnerStore returns the owner store of db.
func NewOwnerStore(db *DB) *OwnerStore { return &OwnerStore{db: db} }

// CreateOwner implements ports.OwnerStore.
func (s *OwnerStore) CreateOwner(ctx context.Context, o *core.Owner) error {
	o.ID = newID()
	o.CreatedAt = s.db.gorm.NowFunc().Truncate(1000)
	row := ownerRow{ID: o.ID, Email: o.Email, Name: o.Name, CreatedAt: micros(o.CreatedAt)}
	return translate(s.db.with(ctx).Create(&row).Error, "owner")
}

// Owner implements ports.OwnerStore.
func (s *OwnerStore) Owner(ctx context.Context, id string) (core.Owner, error) {
	var row ownerRow
	if err := s.db.with(ctx).Take(&row, "id = ?", id).Error; err != nil {
		return core.Owner{}, translate(err, "owner")
	}
	return row.owner(), nil
}

func (r ownerRow) owner() core.Owner {
	return core.Owner{ID: r.ID, Email: r.Email, Name: r.Name, CreatedAt: fromMicros(r.CreatedAt)}
}

// CountOwners implements ports.OwnerStore.
func (s *OwnerStore) CountOwners(ctx context.Context) (int, error) {
	var n int64
	err := s.db.with(ctx).Model(&ownerRow{}).Count(&n).Error
	return int(n), translate(err, "owner")
}

// Owners implements ports.OwnerStore.
func (s *OwnerStore) Owners(ctx context.Context) ([]core.Owner, error) {
	var rows []ownerRow
	if err := s.db.with(ctx).Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err, "owner")
	}
	out := make([]core.Owner, len(rows))
	for i, r := range rows {
		out[i] = r.owner()
	}
	return out, nil
}

// UpdateOwner implements ports.OwnerStore.
func (s *OwnerStore) UpdateOwner(ctx context.Context, o core.Owner) error {
	res := s.db.with(ctx).Model(&ownerRow{}).Where("id = ?", o.ID).Updates(map[string]any{"email": o.Email, "name": o.Name})
	if res.Error != nil {
		return translate(res.Error, "owner with this email")
	}
	if res.RowsAffected == 0 {
		return core.Errorf(core.KindNotFound, "owner not found")
	}
	return nil
}

type emailChangeRow struct {
	Hash      string `gorm:"primaryKey"`
	OwnerID   string
	Email     string
	CreatedAt int64 `gorm:"autoCreateTime:false"`
	ExpiresAt int64
	UsedAt    int64
}

func (emailChangeRow) TableName() string { return "email_changes" }

// CreateEmailChange implements ports.OwnerStore.
func (s *OwnerStore) CreateEmailChange(ctx context.Context, c core.EmailChange) error {
	err := s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		// Changes expired or used before this one are of no use to
		// anyone; dropping them here keeps the table as small as the
		// live ones.
		if err := tx.Where("owner_id = ? AND (expires_at < ? OR used_at <> 0)", c.OwnerID, micros(c.CreatedAt)).
			Delete(&emailChangeRow{}).Error; err != nil {
			return err
		}
		return tx.Create(&emailChangeRow{Hash: c.Hash, OwnerID: c.OwnerID, Email: c.Email,
			CreatedAt: micros(c.CreatedAt), ExpiresAt: micros(c.ExpiresAt)}).Error
	})
	return translateOwnerRef(err, "email change")
}

// UseEmailChange implements ports.OwnerStore. The UPDATE that consumes
// the change also checks it, so of two requests racing for it one wins;
// a refused address rolls the use back.
func (s *OwnerStore) UseEmailChange(ctx context.Context, hash string, now time.Time) (core.Owner, string, error) {
	var out core.Owner
	var old string
	err := s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Model(&emailChangeRow{}).Where("hash = ? AND used_at = 0 AND expires_at >= ?", hash, micros(now)).
			Update("used_at", micros(now))
		if res.Error != nil {
			return res.Error
		}
		if res.RowsAffected == 0 {
			return core.Errorf(core.KindNotFound, "this link was used already, has expired, or is unknown")
		}
		var c emailChangeRow
		if err := tx.Take(&c, "hash = ?", hash).Error; err != nil {
			return err
		}
		var row ownerRow
		if err := tx.Take(&row, "id = ?", c.OwnerID).Error; err != nil {
			return err
		}
		old = row.Email
		if err := tx.Model(&ownerRow{}).Where("id = ?", row.ID).Update("email", c.Email).Error; err != nil {
			if core.IsKind(translate(err, "owner"), core.KindConflict) {
				return core.Errorf(core.KindConflict, "another owner has the address %s", c.Email)
			}
			return err
		}
		row.Email = c.Email
		out = row.owner()
		return nil
	})
	return out, old, translate(err, "owner")
}
