package gormstore

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
	"github.com/earshothq/earshot/ports"
)

type accountRow struct {
	ID                                   string `gorm:"primaryKey"`
	OwnerID, Platform, Label, LastIssue  string
	RawSignal                            string // rawSignalJSON; empty when none
	Session                              []byte // the sealed cookie jar; read only by AccountStore.Session
	HasSession                           bool   `gorm:"->"`                   // read through accountColumns
	CreatedAt, LastCheckedAt, RetryAfter int64  `gorm:"autoCreateTime:false"` // µs
}

func (accountRow) TableName() string { return "accounts" }

// accountColumns are what every read names: not the jar, which only
// Session needs, and has_session, which is no column.
const accountColumns = "id, owner_id, platform, label, COALESCE(length(session), 0) > 0 AS has_session, created_at, " +
	"last_issue, raw_signal, last_checked_at, retry_after"

// rawSignalJSON is the stored form of a health.RawSignal, as shipped.
type rawSignalJSON struct {
	Status     int  `json:"status"`
	Code       int  `json:"code"`
	Subcode    int  `json:"subcode"`
	NoResponse bool `json:"noResponse"`
	ViaProxy   bool `json:"viaProxy"`
}

func (r accountRow) account() core.Account {
	return core.Account{ID: r.ID, OwnerID: r.OwnerID, Platform: core.Platform(r.Platform), Label: r.Label,
		HasSession: r.HasSession, CreatedAt: fromMicros(r.CreatedAt)}
}

func (r accountRow) health() ports.AccountHealth {
	a := ports.AccountHealth{Account: r.account(), Health: health.Record{LastIssue: health.Issue(r.LastIssue),
		LastCheckedAt: fromMicros(r.LastCheckedAt), RetryAfter: fromMicros(r.RetryAfter)}}
	var raw rawSignalJSON
	if r.RawSignal != "" && json.Unmarshal([]byte(r.RawSignal), &raw) == nil {
		s := health.RawSignal(raw)
		a.Health.RawSignal = &s
	}
	return a
}

func healthColumns(h health.Record) map[string]any {
	raw := ""
	if s := h.RawSignal; s != nil {
		b, _ := json.Marshal(rawSignalJSON(*s))
		raw = string(b)
	}
	return map[string]any{"last_issue": string(h.LastIssue), "raw_signal": raw,
		"last_checked_at": micros(h.LastCheckedAt), "retry_after": micros(h.RetryAfter)}
}

// firstAccount reads cols of the owner's first account on p.
func firstAccount(db *gorm.DB, ownerID string, p core.Platform, cols string) (row accountRow, err error) {
	err = db.Select(cols).Where("owner_id = ? AND platform = ?", ownerID, p).Order("created_at, id").Take(&row).Error
	return row, err
}

// AccountStore keeps connected accounts.
type AccountStore struct{ db *DB }

func NewAccountStore(db *DB) *AccountStore { return &AccountStore{db: db} }

func (s *AccountStore) EnsureAccount(ctx context.Context, ownerID string, p core.Platform, limits core.Limits) (core.Account, error) {
	// Every ingest batch asks, and the account nearly always exists: no lock then.
	if row, err := firstAccount(s.db.with(ctx), ownerID, p, accountColumns); err == nil {
		return row.account(), nil
	}
	var row accountRow
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) (err error) {
		if _, err := lockOwner(tx, ownerID); err != nil {
			return err
		}
		if row, err = firstAccount(tx, ownerID, p, accountColumns); !errors.Is(err, gorm.ErrRecordNotFound) {
			return err
		}
		u, err := usage(tx, ownerID)
		if err == nil {
			err = limits.CheckNewAccount(u, p)
		}
		if err != nil {
			return err
		}
		label := strings.ToUpper(string(p[:1])) + string(p[1:])
		row = accountRow{ID: newID(), OwnerID: ownerID, Platform: string(p), Label: label, CreatedAt: micros(tx.NowFunc())}
		return tx.Create(&row).Error
	})
	if err != nil {
		return core.Account{}, translate(err, "account")
	}
	return row.account(), nil
}

func (s *AccountStore) SetSession(ctx context.Context, ownerID, accountID string, sealed []byte) error {
	return translate(affected(s.db.write(ctx).Model(&accountRow{}).Where("id = ? AND owner_id = ?", accountID, ownerID).Update("session", sealed)), "account")
}

func (s *AccountStore) Session(ctx context.Context, ownerID string, p core.Platform) (core.Account, []byte, error) {
	row, err := firstAccount(s.db.with(ctx), ownerID, p, accountColumns+", session")
	if err == nil && len(row.Session) == 0 {
		err = core.Errorf(core.KindNotFound, "no session stored for the %s account", p)
	}
	return row.account(), row.Session, translate(err, "account")
}

// AccountHealthStore keeps the health of connected accounts: the same
// store, under the port's name.
type AccountHealthStore = AccountStore

func NewAccountHealthStore(db *DB) *AccountHealthStore { return &AccountStore{db: db} }

func (s *AccountStore) AccountHealth(ctx context.Context, ownerID string) ([]ports.AccountHealth, error) {
	return list(s.db.with(ctx).Select(accountColumns).Where("owner_id = ?", ownerID).Order("created_at, id"), "account", accountRow.health)
}

func (s *AccountStore) UpdateHealth(ctx context.Context, ownerID, accountID string,
	change func(ports.AccountHealth) (health.Record, *core.Notification, error)) (ports.AccountHealth, error) {
	var out ports.AccountHealth
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		var row accountRow
		if err := tx.Select(accountColumns).Clauses(lockForUpdate).Take(&row, "id = ? AND owner_id = ?", accountID, ownerID).Error; err != nil {
			return err
		}
		next, note, err := change(row.health())
		if err == nil {
			out = ports.AccountHealth{Account: row.account(), Health: next}
			err = tx.Model(&accountRow{}).Where("id = ?", accountID).Updates(healthColumns(next)).Error
		}
		if err != nil || note == nil {
			return err
		}
		note.OwnerID = ownerID
		return addNotification(tx, note)
	})
	if err != nil {
		return ports.AccountHealth{}, translate(err, "account")
	}
	return out, nil
}
