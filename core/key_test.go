package core_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// sha256Hex is the fingerprint computed without core, so HashSecret is
// checked against the standard library rather than against itself.
func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestKeyKindPrefix(t *testing.T) {
	if got := core.APIKey.Prefix(); got != "svc_api_" {
		t.Errorf("APIKey.Prefix() = %q", got)
	}
	if got := core.IngestKey.Prefix(); got != "svc_ingest_" {
		t.Errorf("IngestKey.Prefix() = %q", got)
	}
	if core.MaxAPIKeys != 5 {
		t.Errorf("MaxAPIKeys = %d, want 5", core.MaxAPIKeys)
	}
}

func TestNewSecret(t *testing.T) {
	for _, kind := range []core.KeyKind{core.APIKey, core.IngestKey} {
		t.Run(string(kind), func(t *testing.T) {
			seen := map[string]bool{}
			for i := 0; i < 50; i++ {
				secret, hash, err := core.NewSecret(kind)
				if err != nil {
					t.Fatalf("NewSecret: %v", err)
				}
				body, ok := strings.CutPrefix(secret, kind.Prefix())
				if !ok {
					t.Fatalf("secret %q lacks prefix %q", secret, kind.Prefix())
				}
				// 32 random bytes in unpadded base64url: 43 characters.
				if len(body) != 43 {
					t.Fatalf("body has %d characters, want 43", len(body))
				}
				raw, err := base64.RawURLEncoding.DecodeString(body)
				if err != nil || len(raw) < 32 {
					t.Fatalf("body %q decodes to %d bytes, %v", body, len(raw), err)
				}
				if hash != sha256Hex(secret) {
					t.Fatalf("hash = %s, want hex SHA-256 of the secret", hash)
				}
				checked, err := core.CheckSecret(kind, secret)
				if err != nil || checked != hash {
					t.Fatalf("CheckSecret of a fresh secret = %q, %v", checked, err)
				}
				if seen[secret] || seen[hash] {
					t.Fatalf("secret repeated after %d calls", i)
				}
				seen[secret], seen[hash] = true, true
			}
		})
	}
}

func TestHashSecret(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
		{"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"svc_api_x", sha256Hex("svc_api_x")},
		{"svc_ingest_" + strings.Repeat("A", 43), sha256Hex("svc_ingest_" + strings.Repeat("A", 43))},
	}
	for _, c := range cases {
		if got := core.HashSecret(c.in); got != c.want {
			t.Errorf("HashSecret(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestCheckSecret(t *testing.T) {
	api, _, err := core.NewSecret(core.APIKey)
	if err != nil {
		t.Fatal(err)
	}
	ingest, _, err := core.NewSecret(core.IngestKey)
	if err != nil {
		t.Fatal(err)
	}
	body43 := strings.Repeat("aZ0-_", 9)[:43]
	cases := []struct {
		name   string
		kind   core.KeyKind
		secret string
		ok     bool
	}{
		{"fresh api key", core.APIKey, api, true},
		{"fresh ingest key", core.IngestKey, ingest, true},
		{"well-formed api key", core.APIKey, "svc_api_" + body43, true},
		{"well-formed ingest key", core.IngestKey, "svc_ingest_" + body43, true},

		{"ingest key on the api", core.APIKey, ingest, false},
		{"api key on the helper", core.IngestKey, api, false},
		{"ingest body under api prefix mix", core.APIKey, "svc_ingest_" + body43, false},
		{"empty", core.APIKey, "", false},
		{"empty ingest", core.IngestKey, "", false},
		{"prefix only", core.APIKey, "svc_api_", false},
		{"ingest prefix only", core.IngestKey, "svc_ingest_", false},
		{"one short", core.APIKey, "svc_api_" + body43[:42], false},
		{"short body", core.APIKey, "svc_api_abc", false},
		{"no prefix", core.APIKey, body43, false},
		{"upper-case prefix", core.APIKey, "SVC_API_" + body43, false},
		{"bearer left in", core.APIKey, "Bearer svc_api_" + body43, false},
		{"standard base64 plus", core.APIKey, "svc_api_" + body43[:42] + "+", false},
		{"standard base64 slash", core.APIKey, "svc_api_" + body43[:42] + "/", false},
		{"padding", core.APIKey, "svc_api_" + body43 + "=", false},
		{"trailing newline", core.APIKey, api + "\n", false},
		{"inner space", core.APIKey, "svc_api_" + body43[:20] + " " + body43[20:], false},
		{"non-ASCII", core.APIKey, "svc_api_" + body43[:41] + "é", false},
		{"very long", core.APIKey, "svc_api_" + strings.Repeat("a", 1000), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hash, err := core.CheckSecret(c.kind, c.secret)
			if c.ok {
				if err != nil || hash != sha256Hex(c.secret) {
					t.Fatalf("CheckSecret = %q, %v; want the SHA-256 hex", hash, err)
				}
				return
			}
			requireKind(t, err, core.KindUnauthorized)
			if hash != "" {
				t.Errorf("hash %q returned with the error", hash)
			}
			// Neither what the caller sees nor what is logged repeats the
			// secret, so a key pasted into the wrong place does not leak.
			body := strings.TrimPrefix(strings.TrimPrefix(c.secret, c.kind.Prefix()), "Bearer ")
			for _, text := range []string{core.Message(err), err.Error()} {
				if len(body) >= 8 && strings.Contains(text, body[:8]) {
					t.Errorf("error %q repeats the secret", text)
				}
			}
		})
	}
}

func TestParseScopes(t *testing.T) {
	all := []core.Scope{core.ScopeRead, core.ScopeWritePhrases, core.ScopeWebhooks}
	cases := []struct {
		in   string
		want []core.Scope
		bad  string // non-empty: refused with KindInvalid naming it
	}{
		{"", nil, ""},
		{" , ,", nil, ""},
		{"read", []core.Scope{core.ScopeRead}, ""},
		{"read,write:phrases,webhooks", all, ""},
		{" webhooks , read ", []core.Scope{core.ScopeWebhooks, core.ScopeRead}, ""},
		{",,read,,", []core.Scope{core.ScopeRead}, ""},
		{"read,read,webhooks,read,webhooks", []core.Scope{core.ScopeRead, core.ScopeWebhooks}, ""},
		{"write:phrases", []core.Scope{core.ScopeWritePhrases}, ""},

		{"admin", nil, "admin"},
		{"read,admin", nil, "admin"},
		{"READ", nil, "READ"},
		{"write", nil, "write"},
		{"read webhooks", nil, "read webhooks"},
		{"read;webhooks", nil, "read;webhooks"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := core.ParseScopes(c.in)
			if c.bad != "" {
				requireKind(t, err, core.KindInvalid)
				if !strings.Contains(core.Message(err), c.bad) {
					t.Errorf("message %q does not name %q", core.Message(err), c.bad)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseScopes(%q): %v", c.in, err)
			}
			if len(got) != 0 || len(c.want) != 0 {
				if !reflect.DeepEqual(got, c.want) {
					t.Errorf("ParseScopes(%q) = %v, want %v", c.in, got, c.want)
				}
			}
		})
	}
	if !reflect.DeepEqual(core.AllScopes, all) {
		t.Errorf("AllScopes = %v", core.AllScopes)
	}
	for _, s := range core.AllScopes {
		if !s.Valid() {
			t.Errorf("%q.Valid() = false", s)
		}
	}
}

func TestKeyHasAndAllow(t *testing.T) {
	cases := []struct {
		name   string
		scopes []core.Scope
		scope  core.Scope
		has    bool
	}{
		{"no scopes reads", nil, core.ScopeRead, true},
		{"no scopes cannot write", nil, core.ScopeWritePhrases, false},
		{"no scopes has no webhooks", nil, core.ScopeWebhooks, false},
		{"empty list is read only", []core.Scope{}, core.ScopeWritePhrases, false},
		{"write key reads", []core.Scope{core.ScopeWritePhrases}, core.ScopeRead, true},
		{"write key writes", []core.Scope{core.ScopeWritePhrases}, core.ScopeWritePhrases, true},
		{"write key has no webhooks", []core.Scope{core.ScopeWritePhrases}, core.ScopeWebhooks, false},
		{"webhooks key", []core.Scope{core.ScopeWebhooks}, core.ScopeWebhooks, true},
		{"webhooks key cannot write", []core.Scope{core.ScopeWebhooks}, core.ScopeWritePhrases, false},
		{"every scope", core.AllScopes, core.ScopeWebhooks, true},
		{"unknown scope never granted", core.AllScopes, "admin", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			k := core.Key{Kind: core.APIKey, Scopes: c.scopes}
			if got := k.Has(c.scope); got != c.has {
				t.Errorf("Has(%q) = %v, want %v", c.scope, got, c.has)
			}
			err := k.Allow(c.scope)
			if c.has {
				if err != nil {
					t.Errorf("Allow(%q) = %v", c.scope, err)
				}
				return
			}
			requireKind(t, err, core.KindForbidden)
			if !strings.Contains(core.Message(err), string(c.scope)) {
				t.Errorf("message %q does not name the scope %q", core.Message(err), c.scope)
			}
		})
	}
}

func TestKeyRevoked(t *testing.T) {
	if (core.Key{}).Revoked() {
		t.Error("a key with no revocation time is revoked")
	}
	if !(core.Key{RevokedAt: time.Unix(1700000000, 0)}).Revoked() {
		t.Error("a key with a revocation time is live")
	}
}

// A key's name is trimmed and must be valid UTF-8 without control
// characters, at most MaxKeyNameLen characters; an API key needs one, an
// ingest key may have none. The refusal names the field.
func TestNormalizeKeyName(t *testing.T) {
	for _, c := range []struct {
		kind     core.KeyKind
		in, want string
	}{
		{core.APIKey, "  ci  ", "ci"},
		{core.APIKey, "café ☕", "café ☕"},
		{core.APIKey, strings.Repeat("é", core.MaxKeyNameLen), strings.Repeat("é", core.MaxKeyNameLen)},
		{core.IngestKey, "laptop helper", "laptop helper"},
		{core.IngestKey, "  ", ""},
	} {
		got, err := core.NormalizeKeyName(c.kind, c.in)
		if err != nil || got != c.want {
			t.Errorf("NormalizeKeyName(%s, %q) = %q, %v; want %q", c.kind, c.in, got, err, c.want)
		}
	}
	for _, kind := range []core.KeyKind{core.APIKey, core.IngestKey} {
		for _, in := range []string{"a\x00b", "a\xffb", "a\x07b", "a\tb", "a\nb", "a\u0085b", "a\u007fb", strings.Repeat("x", core.MaxKeyNameLen+1)} {
			_, err := core.NormalizeKeyName(kind, in)
			if !core.IsKind(err, core.KindInvalid) || !strings.HasPrefix(core.Message(err), "key name ") {
				t.Errorf("NormalizeKeyName(%s, %q) = %v; want invalid_parameter about the key name", kind, in, err)
			}
		}
	}
	if _, err := core.NormalizeKeyName(core.APIKey, " "); !core.IsKind(err, core.KindInvalid) {
		t.Errorf("a blank API key name: %v", err)
	}
}

func TestKeyKindBounds(t *testing.T) {
	for _, c := range []struct {
		kind  core.KeyKind
		max   int
		label string
	}{
		{core.APIKey, 5, "API"},
		{core.IngestKey, 20, "ingest"},
	} {
		if got := c.kind.MaxLive(); got != c.max {
			t.Errorf("%s.MaxLive() = %d, want %d", c.kind, got, c.max)
		}
		if got := c.kind.Label(); got != c.label {
			t.Errorf("%s.Label() = %q, want %q", c.kind, got, c.label)
		}
	}
	if core.KeptRevokedKeys != 20 {
		t.Errorf("KeptRevokedKeys = %d, want 20", core.KeptRevokedKeys)
	}
}
