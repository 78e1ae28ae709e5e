package ports

import (
	"context"
	"time"

	"github.com/earshothq/earshot/core"
)

// SessionStore keeps dashboard sign-in links and sessions, each under the
// hash of its token only.
type SessionStore interface {
	// OwnerByEmail returns the owner with the address (compared as
	// stored: lower case). KindNotFound when there is none.
	OwnerByEmail(ctx context.Context, email string) (core.Owner, error)
	// CreateLoginLink stores l and removes the owner's links that expired
	// before l.CreatedAt. KindNotFound for an unknown owner.
	CreateLoginLink(ctx context.Context, l core.LoginLink) error
	// UseLoginLink consumes the link stored under hash and returns its
	// owner. It succeeds once: a link used already, expired at now, or
	// unknown is KindNotFound, also when two requests race for it.
	UseLoginLink(ctx context.Context, hash string, now time.Time) (ownerID string, err error)
	// CreateSession stores s, setting its ID. KindNotFound for an unknown
	// owner.
	CreateSession(ctx context.Context, s *core.Session) error
	// Session returns the session stored under hash. KindNotFound.
	Session(ctx context.Context, hash string) (core.Session, error)
	// TouchSession records that the session id was used at at.
	TouchSession(ctx context.Context, id string, at time.Time) error
	// DeleteSession removes the session stored under hash; an unknown
	// hash changes nothing.
	DeleteSession(ctx context.Context, hash string) error
	// DeleteSessions removes every session of the owner and its unused
	// sign-in links, and returns how many sessions there were: the owner
	// who signs out everywhere may fear their mail is read.
	DeleteSessions(ctx context.Context, ownerID string) (int, error)
	// DeleteIdleSessions removes every owner's sessions last used before
	// before, and links expired before it.
	DeleteIdleSessions(ctx context.Context, before time.Time) (int, error)
}
