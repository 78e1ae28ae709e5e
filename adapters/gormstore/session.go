package gormstore

import (
	"context"
	"strings"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/earshothq/earshot/core"
)

type loginLinkRow struct {
	Hash                         string `gorm:"primaryKey"`
	OwnerID                      string
	CreatedAt, ExpiresAt, UsedAt int64 `gorm:"autoCreateTime:false"` // µs
}

func (loginLinkRow) TableName() string { return "login_links" }

// addLink deletes the owner's expired and used links (login_links,
// email_changes), which nobody can use, then stores row.
func addLink[R any](db *gorm.DB, row *R, ownerID string, now time.Time) error {
	if err := db.Where("owner_id = ? AND (expires_at < ? OR used_at <> 0)", ownerID, micros(now)).Delete(new(R)).Error; err != nil {
		return err
	}
	return db.Create(row).Error
}

// useLink marks the link of hash used and returns it. One UPDATE both
// checks and consumes it, so of two requests racing for it one wins.
func useLink[R any](db *gorm.DB, hash string, now time.Time, unknown string) (R, error) {
	var row R
	res := db.Model(&row).Clauses(clause.Returning{}).Where("hash = ? AND used_at = 0 AND expires_at >= ?", hash, micros(now)).
		Update("used_at", micros(now))
	if res.Error == nil && res.RowsAffected == 0 {
		return row, core.Errorf(core.KindNotFound, "%s", unknown)
	}
	return row, res.Error
}

type sessionRow struct {
	ID                    string `gorm:"primaryKey"`
	Hash, OwnerID         string
	CreatedAt, LastSeenAt int64 `gorm:"autoCreateTime:false"` // µs
}

func (sessionRow) TableName() string { return "dashboard_sessions" }

func (r sessionRow) session() core.Session {
	return core.Session{ID: r.ID, Hash: r.Hash, OwnerID: r.OwnerID, CreatedAt: fromMicros(r.CreatedAt), LastSeenAt: fromMicros(r.LastSeenAt)}
}

// SessionStore keeps dashboard sign-in links and sessions.
type SessionStore struct{ db *DB }

func NewSessionStore(db *DB) *SessionStore { return &SessionStore{db: db} }

func (s *SessionStore) OwnerByEmail(ctx context.Context, email string) (core.Owner, error) {
	return one(s.db.with(ctx), "owner", ownerRow.owner, "email = ?", strings.ToLower(email))
}

func (s *SessionStore) CreateLoginLink(ctx context.Context, l core.LoginLink) error {
	row := &loginLinkRow{Hash: l.Hash, OwnerID: l.OwnerID, CreatedAt: micros(l.CreatedAt), ExpiresAt: micros(l.ExpiresAt)}
	return translateOwnerRef(addLink(s.db.write(ctx), row, l.OwnerID, l.CreatedAt), "login link")
}

func (s *SessionStore) UseLoginLink(ctx context.Context, hash string, now time.Time) (string, error) {
	row, err := useLink[loginLinkRow](s.db.write(ctx), hash, now, "this sign-in link was used already, has expired, or is unknown")
	return row.OwnerID, translate(err, "login link")
}

func (s *SessionStore) CreateSession(ctx context.Context, ss *core.Session) error {
	ss.ID = newID()
	err := s.db.write(ctx).Create(&sessionRow{ID: ss.ID, Hash: ss.Hash, OwnerID: ss.OwnerID,
		CreatedAt: micros(ss.CreatedAt), LastSeenAt: micros(ss.LastSeenAt)}).Error
	return translateOwnerRef(err, "session")
}

func (s *SessionStore) Session(ctx context.Context, hash string) (core.Session, error) {
	return one(s.db.with(ctx), "session", sessionRow.session, "hash = ?", hash)
}

func (s *SessionStore) TouchSession(ctx context.Context, id string, at time.Time) error {
	err := s.db.write(ctx).Model(&sessionRow{}).Where("id = ? AND last_seen_at < ?", id, micros(at)).Update("last_seen_at", micros(at)).Error
	return translate(err, "session")
}

func (s *SessionStore) DeleteSession(ctx context.Context, hash string) error {
	return translate(s.db.write(ctx).Where("hash = ?", hash).Delete(&sessionRow{}).Error, "session")
}

// DeleteSessions implements ports.SessionStore; the unused links go in
// the same transaction, so none opens a session after it.
func (s *SessionStore) DeleteSessions(ctx context.Context, ownerID string) (int, error) {
	var n int64
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		res := tx.Where("owner_id = ?", ownerID).Delete(&sessionRow{})
		n = res.RowsAffected
		if res.Error != nil {
			return res.Error
		}
		return tx.Where("owner_id = ? AND used_at = 0", ownerID).Delete(&loginLinkRow{}).Error
	})
	return int(n), translate(err, "session")
}

func (s *SessionStore) DeleteIdleSessions(ctx context.Context, before time.Time) (int, error) {
	if err := s.db.write(ctx).Where("expires_at < ?", micros(before)).Delete(&loginLinkRow{}).Error; err != nil {
		return 0, translate(err, "login link")
	}
	res := s.db.write(ctx).Where("last_seen_at < ?", micros(before)).Delete(&sessionRow{})
	return int(res.RowsAffected), translate(res.Error, "session")
}
