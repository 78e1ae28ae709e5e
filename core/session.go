package core

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"time"
)

// LoginLinkTTL is how long a dashboard sign-in link works.
const LoginLinkTTL = 15 * time.Minute

// DefaultSessionIdle is how long a dashboard session lasts without use,
// unless the operator sets another value.
const DefaultSessionIdle = 14 * 24 * time.Hour

// tokenBytes is the entropy of sign-in link and session tokens: 256 bits.
const tokenBytes = 32

// LoginLink is a single-use sign-in link, known to the store only by the
// hash of its token.
type LoginLink struct {
	Hash      string
	OwnerID   string
	CreatedAt time.Time
	ExpiresAt time.Time
}

// Session is a signed-in browser, known to the store only by the hash of
// the token in its cookie.
type Session struct {
	ID         string
	Hash       string
	OwnerID    string
	CreatedAt  time.Time
	LastSeenAt time.Time
}

// Expired reports whether the session went unused for longer than idle at
// now.
func (s Session) Expired(now time.Time, idle time.Duration) bool {
	return now.Sub(s.LastSeenAt) > idle
}

// NewToken returns a random token for a sign-in link or a session cookie
// and the hash it is stored under. The token itself is never stored.
func NewToken() (token, hash string, err error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	token = base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token), nil
}

// HashToken returns the hex SHA-256 of a token.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// WellFormedToken reports whether s has the shape of a token NewToken
// makes, so that a malformed cookie or link never reaches the store.
func WellFormedToken(s string) bool {
	if len(s) != base64.RawURLEncoding.EncodedLen(tokenBytes) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
