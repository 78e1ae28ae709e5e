package gormstore

import (
	"context"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
)

// ownerRow is a row of owners; phrase_version is the phrase store's,
// last_match_us ingest's, the alert columns the alert store's.
type ownerRow struct {
	ID                                   string `gorm:"primaryKey"`
	Email, Name                          string
	PhraseVersion                        int64
	AlertFrequency, AlertZone            string
	AlertHour                            int
	CreatedAt, LastMatchUs, AlertsSentAt int64 `gorm:"autoCreateTime:false"` // µs
}

func (ownerRow) TableName() string { return "owners" }

func (r ownerRow) owner() core.Owner {
	return core.Owner{ID: r.ID, Email: r.Email, Name: r.Name, CreatedAt: fromMicros(r.CreatedAt)}
}

// lockOwner locks the owner's row: checking a limit, then inserting,
// runs one at a time per owner.
func lockOwner(tx *gorm.DB, ownerID string) (row ownerRow, err error) {
	err = tx.Clauses(lockForUpdate).Take(&row, "id = ?", ownerID).Error
	return row, err
}

// translateOwnerRef reports a missing owner, behind a foreign key or as
// its row not found under lockOwner, as the owner's own lookups do.
func translateOwnerRef(err error, what string) error {
	if foreignKey(err) || errors.Is(err, gorm.ErrRecordNotFound) {
		return core.Errorf(core.KindNotFound, "owner not found")
	}
	return translate(err, what)
}

// OwnerStore keeps owners.
type OwnerStore struct{ db *DB }

func NewOwnerStore(db *DB) *OwnerStore { return &OwnerStore{db: db} }

func (s *OwnerStore) CreateOwner(ctx context.Context, o *core.Owner) error {
	o.ID, o.CreatedAt = newID(), s.db.gorm.NowFunc().Truncate(time.Microsecond)
	return translate(s.db.write(ctx).Create(&ownerRow{ID: o.ID, Email: o.Email, Name: o.Name, CreatedAt: micros(o.CreatedAt)}).Error, "owner")
}

func (s *OwnerStore) Owner(ctx context.Context, id string) (core.Owner, error) {
	return one(s.db.with(ctx), "owner", ownerRow.owner, "id = ?", id)
}

func (s *OwnerStore) CountOwners(ctx context.Context) (int, error) {
	var n int64
	err := s.db.with(ctx).Model(&ownerRow{}).Count(&n).Error
	return int(n), translate(err, "owner")
}

func (s *OwnerStore) Owners(ctx context.Context) ([]core.Owner, error) {
	return list(s.db.with(ctx).Order("created_at, id"), "owner", ownerRow.owner)
}

func (s *OwnerStore) UpdateOwner(ctx context.Context, o core.Owner) error {
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		row, err := lockOwner(tx, o.ID)
		if err != nil {
			return err
		}
		old := row.Email
		if err := tx.Model(&row).Updates(map[string]any{"email": o.Email, "name": o.Name}).Error; err != nil { // sets row's too
			return err
		}
		if old == o.Email {
			return nil
		}
		return forgetLinks(tx, o.ID, "")
	})
	return translateOwnerRef(err, "owner with this email")
}

// forgetLinks deletes the owner's address changes, all but keep, and its
// unused sign-in links, as the owner's address changes: links still in a
// mailbox the owner no longer has, or never had, must not take the
// account.
func forgetLinks(tx *gorm.DB, ownerID, keep string) error {
	if err := tx.Where("owner_id = ? AND hash <> ?", ownerID, keep).Delete(&emailChangeRow{}).Error; err != nil {
		return err
	}
	return tx.Where("owner_id = ? AND used_at = 0", ownerID).Delete(&loginLinkRow{}).Error
}

type emailChangeRow struct {
	Hash                         string `gorm:"primaryKey"`
	OwnerID, Email               string
	CreatedAt, ExpiresAt, UsedAt int64 `gorm:"autoCreateTime:false"` // µs
}

func (emailChangeRow) TableName() string { return "email_changes" }

// CreateEmailChange implements ports.OwnerStore. It holds the owner's
// row, as UseEmailChange does before it takes a change's, so requests
// and confirmations of one owner run one after the other and never
// deadlock on each other's rows.
func (s *OwnerStore) CreateEmailChange(ctx context.Context, c core.EmailChange) error {
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := lockOwner(tx, c.OwnerID); err != nil {
			return err
		}
		// Used and expired changes are of no use, and a pending one is an
		// address the owner no longer asks for.
		if err := tx.Where("owner_id = ?", c.OwnerID).Delete(&emailChangeRow{}).Error; err != nil {
			return err
		}
		return tx.Create(&emailChangeRow{Hash: c.Hash, OwnerID: c.OwnerID, Email: c.Email,
			CreatedAt: micros(c.CreatedAt), ExpiresAt: micros(c.ExpiresAt)}).Error
	})
	return translateOwnerRef(err, "email change")
}

// UseEmailChange implements ports.OwnerStore.
func (s *OwnerStore) UseEmailChange(ctx context.Context, hash string, now time.Time) (core.Owner, string, error) {
	const unknown = "this link was used already, has expired, was replaced by a later one, or is unknown"
	var row ownerRow
	var old string
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		// The owner's row first, as CreateEmailChange takes it before it
		// deletes the owner's changes; the change is then checked and
		// consumed under that lock, so one replaced meanwhile is gone.
		var c emailChangeRow
		err := tx.Select("owner_id").Take(&c, "hash = ?", hash).Error
		if errors.Is(err, gorm.ErrRecordNotFound) {
			return core.Errorf(core.KindNotFound, unknown)
		}
		if err == nil {
			row, err = lockOwner(tx, c.OwnerID)
		}
		if err == nil {
			c, err = useLink[emailChangeRow](tx, hash, now, unknown)
		}
		if err != nil {
			return err
		}
		old = row.Email
		err = tx.Model(&row).Update("email", c.Email).Error // sets row.Email too
		if errors.Is(err, gorm.ErrDuplicatedKey) {
			return core.Errorf(core.KindConflict, "another owner has the address %s", c.Email)
		}
		if err != nil {
			return err
		}
		return forgetLinks(tx, row.ID, hash)
	})
	if err != nil {
		return core.Owner{}, old, translate(err, "owner")
	}
	return row.owner(), old, nil
}
