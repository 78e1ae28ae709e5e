package core

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// KeyKind tells the two kinds of key apart: API keys for /api/v1 and
// ingest keys for the helper endpoints. Neither works where the other does.
type KeyKind string

const (
	APIKey    KeyKind = "api"    // for /api/v1; secrets start "svc_api_"
	IngestKey KeyKind = "ingest" // for the helper endpoints; secrets start "svc_ingest_"
)

// Prefix is the fixed start of every secret of the kind.
func (k KeyKind) Prefix() string {
	if k == IngestKey {
		return "svc_ingest_"
	}
	return "svc_api_"
}

// MaxAPIKeys is how many live API keys an owner may hold.
const MaxAPIKeys = 5

// MaxIngestKeys is how many live ingest keys an owner may hold: one a
// helper is already more than any owner runs, and without a bound every
// create would add a row the owner's key lists and the key cache carry.
const MaxIngestKeys = 20

// KeptRevokedKeys is how many revoked keys of each kind an owner keeps,
// the last revoked: an older revoked key is deleted when another of its
// kind is revoked, so a key list stays bounded however often keys are
// made and revoked. A deleted key's secret is refused as unknown, as a
// revoked one is refused.
const KeptRevokedKeys = 20

// MaxLive is how many live keys of the kind an owner may hold.
func (k KeyKind) MaxLive() int {
	if k == IngestKey {
		return MaxIngestKeys
	}
	return MaxAPIKeys
}

// Label is how a message names the kind: "API" or "ingest".
func (k KeyKind) Label() string {
	if k == IngestKey {
		return "ingest"
	}
	return "API"
}

// MaxKeyNameLen is the most characters a key's name may have.
const MaxKeyNameLen = 100

// NormalizeKeyName trims the name of a key of the kind and checks it:
// valid UTF-8, no control characters (as in a phrase, tabs and line
// breaks included), at most MaxKeyNameLen characters, and not empty for
// an API key (an ingest key may have none). The one rule on every
// database: Postgres cannot store a NUL or bytes that are not UTF-8 and
// SQLite would, so neither must be asked to. A refusal is KindInvalid
// and names the field.
func NormalizeKeyName(kind KeyKind, name string) (string, error) {
	name, err := plainName("key name", name)
	if err != nil {
		return "", err
	}
	if n := utf8.RuneCountInString(name); n > MaxKeyNameLen || n == 0 && kind == APIKey {
		return "", Errorf(KindInvalid, "key name must be 1 to %d characters", MaxKeyNameLen)
	}
	return name, nil
}

// keyBytes is the number of random bytes in a secret.
const keyBytes = 32

// keyBodyLen is the length of keyBytes in unpadded base64url.
var keyBodyLen = base64.RawURLEncoding.EncodedLen(keyBytes)

// Scope is a permission of an API key.
type Scope string

const (
	ScopeRead         Scope = "read"          // read the account, phrases, matches and trends; triage matches
	ScopeWritePhrases Scope = "write:phrases" // add, change and delete phrases
	ScopeWebhooks     Scope = "webhooks"      // manage webhooks and channels
)

// AllScopes lists every scope, in the order they are shown.
var AllScopes = []Scope{ScopeRead, ScopeWritePhrases, ScopeWebhooks}

// ParseScopes reads a comma-separated scope list such as
// "read,write:phrases". Blank items are ignored; an unknown one is a
// KindInvalid error.
func ParseScopes(s string) ([]Scope, error) {
	var out []Scope
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		sc := Scope(part)
		if !sc.Valid() {
			return nil, Errorf(KindInvalid, "unknown scope %q: scopes are read, write:phrases, webhooks", part)
		}
		if !containsScope(out, sc) {
			out = append(out, sc)
		}
	}
	return out, nil
}

// Valid reports whether s is a known scope.
func (s Scope) Valid() bool {
	return s == ScopeRead || s == ScopeWritePhrases || s == ScopeWebhooks
}

func containsScope(list []Scope, s Scope) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Key is a stored key. Only the SHA-256 hash of its secret is kept.
type Key struct {
	ID        string
	OwnerID   string
	Kind      KeyKind
	Name      string
	Hash      string
	Scopes    []Scope // empty means read only: keys made before scopes existed
	CreatedAt time.Time
	RevokedAt time.Time // zero while the key is live
	// LastUsedAt is when the key last authenticated a request, to within
	// the step the app records it at; zero when it never has.
	LastUsedAt time.Time
}

// Revoked reports whether the key was revoked.
func (k Key) Revoked() bool { return !k.RevokedAt.IsZero() }

// Has reports whether the key grants scope s. Every key can read.
func (k Key) Has(s Scope) bool {
	return s == ScopeRead || containsScope(k.Scopes, s)
}

// Allow returns a KindForbidden error naming s when the key lacks it.
func (k Key) Allow(s Scope) error {
	if !k.Has(s) {
		return Errorf(KindForbidden, "this key lacks the %s scope", s)
	}
	return nil
}

// NewSecret makes a new secret of the kind and returns it with its hash.
// The secret is shown once and never stored.
func NewSecret(kind KeyKind) (secret, hash string, err error) {
	b := make([]byte, keyBytes)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	secret = kind.Prefix() + base64.RawURLEncoding.EncodeToString(b)
	return secret, HashSecret(secret), nil
}

// HashSecret returns the hex SHA-256 of a secret: the form a key is stored
// and looked up by.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// CheckSecret checks that secret has the form of a key of the kind and
// returns its hash. A malformed secret, or one of the other kind, is a
// KindUnauthorized error whose message never repeats the secret.
func CheckSecret(kind KeyKind, secret string) (string, error) {
	body, ok := strings.CutPrefix(secret, kind.Prefix())
	if !ok || len(body) < keyBodyLen || len(body) > 2*keyBodyLen {
		return "", Errorf(KindUnauthorized, "missing or malformed %s key", kind)
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return "", Errorf(KindUnauthorized, "missing or malformed %s key", kind)
		}
	}
	return HashSecret(secret), nil
}

// plainName is name trimmed, refused (naming it what) when it is not
// UTF-8 or holds a control character: both databases store the same
// thing, and a list of names keeps one a line.
func plainName(what, name string) (string, error) {
	if !utf8.ValidString(name) {
		return "", Errorf(KindInvalid, "%s must be valid UTF-8", what)
	}
	name = strings.TrimSpace(name)
	if strings.ContainsFunc(name, unicode.IsControl) {
		return "", Errorf(KindInvalid, "%s must not contain control characters", what)
	}
	return name, nil
}
