package gormstore

import (
	"context"
	"errors"
	"strings"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// SessionStore keeps dashboard sign-in links and sessions.
type SessionStore struct{ db *DB }

var _ ports.SessionStore = (*SessionStore)(nil)

// NewSessionStore returns the session store of db.
func NewSessionStore(db *DB) *SessionStore { return &SessionStore{db: db} }

// OwnerByEmail implements ports.SessionStore.
func (s *SessionStore) OwnerByEmail(ctx context.Context, email string) (core.Owner, error) {
	var row ownerRow
	if err := s.db.with(ctx).Take(&row, "email = ?", strings.ToLower(email)).Error; err != nil {
		return core.Owner{}, translate(err, "owner")
	}
	return core.Owner{ID: row.ID, Email: row.Email, Name: row.Name, CreatedAt: fromMicros(row.CreatedAt)}, nil
}

// CreateLoginLink implements ports.SessionStore.
func (s *SessionStore) CreateLoginLink(ctx context.Context, l core.LoginLink) error {
	err := s.db.inTx(ctx, func(tx *tx) error {
		// Links expired or used before this one are of no use to anyone;
		// dropping them here keeps the table as small as the live links.
		if _, err := tx.exec("DELETE FROM login_links WHERE owner_id = ? AND (expires_at < ? OR used_at <> 0)",
			l.OwnerID, micros(l.CreatedAt)); err != nil {
			return err
		}
		_, err := tx.exec("INSERT INTO login_links (hash, owner_id, created_at, expires_at) VALUES (?, ?, ?, ?)",
			l.Hash, l.OwnerID, micros(l.CreatedAt), micros(l.ExpiresAt))
		return err
	})
	return translateOwnerRef(err, "login link")
}

// UseLoginLink implements ports.SessionStore. One UPDATE both checks and
// consumes the link, so of two requests racing for it one wins.
func (s *SessionStore) UseLoginLink(ctx context.Context, hash string, now time.Time) (string, error) {
	var ownerID string
	err := s.db.inTx(ctx, func(tx *tx) error {
		rows, err := tx.query("UPDATE login_links SET used_at = ? WHERE hash = ? AND used_at = 0 AND expires_at >= ? RETURNING owner_id",
			micros(now), hash, micros(now))
		if err != nil {
			return err
		}
		defer rows.Close()
		if !rows.Next() {
			if err := rows.Err(); err != nil {
				return s.db.driverErr(err)
			}
			return core.Errorf(core.KindNotFound, "this sign-in link was used already, has expired, or is unknown")
		}
		if err := rows.Scan(&ownerID); err != nil {
			return err
		}
		return s.db.driverErr(rows.Close())
	})
	return ownerID, translate(err, "login link")
}

// CreateSession implements ports.SessionStore.
func (s *SessionStore) CreateSession(ctx context.Context, ss *core.Session) error {
	ss.ID = newID()
	err := s.db.with(ctx).Exec("INSERT INTO dashboard_sessions (id, hash, owner_id, created_at, last_seen_at) VALUES (?, ?, ?, ?, ?)",
		ss.ID, ss.Hash, ss.OwnerID, micros(ss.CreatedAt), micros(ss.LastSeenAt)).Error
	return translateOwnerRef(err, "session")
}

// Session implements ports.SessionStore. Every dashboard request reads
// it, so it runs as a cached prepared statement.
func (s *SessionStore) Session(ctx context.Context, hash string) (core.Session, error) {
	rows, err := s.db.query(ctx, "SELECT id, owner_id, created_at, last_seen_at FROM dashboard_sessions WHERE hash = ?", hash)
	if err != nil {
		return core.Session{}, translate(err, "session")
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return core.Session{}, translate(err, "session")
		}
		return core.Session{}, core.Errorf(core.KindNotFound, "session not found")
	}
	var out core.Session
	var created, seen int64
	if err := rows.Scan(&out.ID, &out.OwnerID, &created, &seen); err != nil {
		return core.Session{}, translate(err, "session")
	}
	out.Hash, out.CreatedAt, out.LastSeenAt = hash, fromMicros(created), fromMicros(seen)
	return out, nil
}

// TouchSession implements ports.SessionStore.
func (s *SessionStore) TouchSession(ctx context.Context, id string, at time.Time) error {
	err := s.db.with(ctx).Exec("UPDATE dashboard_sessions SET last_seen_at = ? WHERE id = ? AND last_seen_at < ?",
		micros(at), id, micros(at)).Error
	return translate(err, "session")
}

// DeleteSession implements ports.SessionStore.
func (s *SessionStore) DeleteSession(ctx context.Context, hash string) error {
	return translate(s.db.with(ctx).Exec("DELETE FROM dashboard_sessions WHERE hash = ?", hash).Error, "session")
}

// DeleteSessions implements ports.SessionStore.
func (s *SessionStore) DeleteSessions(ctx context.Context, ownerID string) (int, error) {
	res := s.db.with(ctx).Exec("DELETE FROM dashboard_sessions WHERE owner_id = ?", ownerID)
	return int(res.RowsAffected), translate(res.Error, "session")
}

// DeleteIdleSessions implements ports.SessionStore.
func (s *SessionStore) DeleteIdleSessions(ctx context.Context, before time.Time) (int, error) {
	res := s.db.with(ctx).Exec("DELETE FROM dashboard_sessions WHERE last_seen_at < ?", micros(before))
	if res.Error != nil {
		return 0, translate(res.Error, "session")
	}
	err := s.db.with(ctx).Exec("DELETE FROM login_links WHERE expires_at < ?", micros(before)).Error
	return int(res.RowsAffected), translate(err, "login link")
}

// translateOwnerRef reads a missing owner behind a foreign key as
// KindNotFound, as the owner's own lookups report it.
func translateOwnerRef(err error, what string) error {
	if errors.Is(err, gorm.ErrForeignKeyViolated) {
		return core.Errorf(core.KindNotFound, "owner not found")
	}
	return translate(err, what)
}
