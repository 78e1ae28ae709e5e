package gormstore

import (
	"context"
	"strings"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

type accountRow struct {
	ID        string `gorm:"primaryKey"`
	OwnerID   string
	Platform  string
	Label     string
	Session   []byte
	CreatedAt int64 `gorm:"autoCreateTime:false"`
}

func (accountRow) TableName() string { return "accounts" }

func (r accountRow) account() core.Account {
	return core.Account{ID: r.ID, OwnerID: r.OwnerID, Platform: core.Platform(r.Platform), Label: r.Label,
		HasSession: len(r.Session) > 0, CreatedAt: fromMicros(r.CreatedAt)}
}

// AccountStore keeps connected accounts.
type AccountStore struct{ db *DB }

var _ ports.AccountStore = (*AccountStore)(nil)

// NewAccountStore returns the account store of db.
func NewAccountStore(db *DB) *AccountStore { return &AccountStore{db: db} }

// EnsureAccount implements ports.AccountStore.
func (s *AccountStore) EnsureAccount(ctx context.Context, ownerID string, p core.Platform, limits core.Limits) (core.Account, error) {
	// Every ingest batch asks; nearly always the account exists, and a
	// plain read through a cached statement answers without a
	// transaction. It reads the session's length, not the sealed jar.
	if found, ok := s.firstAccount(ctx, ownerID, p); ok {
		return found, nil
	}
	var out core.Account
	err := s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := lockOwner(tx, ownerID); err != nil {
			return err
		}
		var row accountRow
		err := tx.Where("owner_id = ? AND platform = ?", ownerID, p).Order("created_at, id").Take(&row).Error
		if err == nil {
			out = row.account()
			return nil
		}
		if err != gorm.ErrRecordNotFound {
			return err
		}
		u, err := usage(tx, ownerID)
		if err != nil {
			return err
		}
		if err := limits.CheckNewAccount(u, p); err != nil {
			return err
		}
		now := tx.NowFunc().Truncate(1000)
		row = accountRow{ID: newID(), OwnerID: ownerID, Platform: string(p), Label: label(p), CreatedAt: micros(now)}
		if err := tx.Create(&row).Error; err != nil {
			return err
		}
		out = row.account()
		return nil
	})
	return out, translate(err, "account")
}

// firstAccount reads the owner's first account on p; ok is false when
// there is none or the read failed (the caller then takes the slow path).
func (s *AccountStore) firstAccount(ctx context.Context, ownerID string, p core.Platform) (core.Account, bool) {
	rows, err := s.db.query(ctx, `SELECT id, owner_id, platform, label, COALESCE(length(session), 0), created_at
		FROM accounts WHERE owner_id = ? AND platform = ? ORDER BY created_at, id LIMIT 1`, ownerID, string(p))
	if err != nil {
		return core.Account{}, false
	}
	defer rows.Close()
	if !rows.Next() {
		return core.Account{}, false
	}
	var r accountRow
	var session int64
	if err := rows.Scan(&r.ID, &r.OwnerID, &r.Platform, &r.Label, &session, &r.CreatedAt); err != nil {
		return core.Account{}, false
	}
	a := r.account()
	a.HasSession = session > 0
	return a, true
}

func label(p core.Platform) string {
	if p == core.X {
		return "X"
	}
	return strings.ToUpper(string(p[:1])) + string(p[1:])
}

// SetSession implements ports.AccountStore.
func (s *AccountStore) SetSession(ctx context.Context, ownerID, accountID string, sealed []byte) error {
	res := s.db.with(ctx).Model(&accountRow{}).Where("id = ? AND owner_id = ?", accountID, ownerID).Update("session", sealed)
	if res.Error == nil && res.RowsAffected == 0 {
		return translate(gorm.ErrRecordNotFound, "account")
	}
	return translate(res.Error, "account")
}

// Session implements ports.AccountStore.
func (s *AccountStore) Session(ctx context.Context, ownerID string, p core.Platform) (core.Account, []byte, error) {
	var row accountRow
	err := s.db.with(ctx).Where("owner_id = ? AND platform = ?", ownerID, p).Order("created_at, id").Take(&row).Error
	if err != nil {
		return core.Account{}, nil, translate(err, "account")
	}
	if len(row.Session) == 0 {
		return row.account(), nil, core.Errorf(core.KindNotFound, "no session stored for the %s account", p)
	}
	return row.account(), row.Session, nil
}
