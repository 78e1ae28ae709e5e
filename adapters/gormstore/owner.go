package gormstore

import (
	"context"

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
	return core.Owner{ID: row.ID, Email: row.Email, Name: row.Name, CreatedAt: fromMicros(row.CreatedAt)}, nil
}

// CountOwners implements ports.OwnerStore.
func (s *OwnerStore) CountOwners(ctx context.Context) (int, error) {
	var n int64
	err := s.db.with(ctx).Model(&ownerRow{}).Count(&n).Error
	return int(n), translate(err, "owner")
}
