package legacymock

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
)

// mockKeyPrefix marks the mock's secrets so one is never mistaken for a
// key of the live service (svc_api_).
const mockKeyPrefix = "svc_mock_"

// prefixLen is how much of a secret is kept and shown: the marker and
// four characters, enough to tell keys apart in a list.
const prefixLen = len(mockKeyPrefix) + 4

const maxKeyName = 100

// apiKey is a stored key. The secret itself is never stored: only its
// prefix and its SHA-256.
type apiKey struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	Prefix     string    `json:"prefix"`
	SecretHash string    `json:"secretHash"`
	Scopes     keyScopes `json:"scopes"`
	CreatedAt  string    `json:"createdAt"`
	LastUsedAt *string   `json:"lastUsedAt"`
}

type keyScopes struct {
	AccountID          string   `json:"accountId"`
	GroupIDs           []string `json:"groupIds"`
	CanSendMessages    bool     `json:"canSendMessages"`
	CanReceiveMessages bool     `json:"canReceiveMessages"`
}

// keys is the key list as the API shows it: the records as stored (the
// spec's record shape has secretHash; the secret itself is never
// stored), [] when there are none.
func (st *state) keys() []apiKey {
	return append([]apiKey{}, st.APIKeys...)
}

func (s *Server) listAPIKeys(context.Context, any) (any, error) {
	return s.store.read(func(st *state) (result, error) {
		return ok(map[string]any{"apiKeys": st.keys()}), nil
	})
}

type createAPIKeyRequest struct {
	Name   optional[string] `json:"name"`
	Scopes json.RawMessage  `json:"scopes"`
}

var decodeCreateAPIKey = decodeBody[createAPIKeyRequest]

var scopeFields = []string{"accountId", "groupIds", "canSendMessages", "canReceiveMessages"}

// parseScopes checks the shape of a scopes object: accountId is required
// (keys are scoped by account), groupIds defaults to none and the two
// message flags to false. Unknown fields are refused, so a typo never
// silently grants less than intended.
func parseScopes(raw json.RawMessage) (keyScopes, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return keyScopes{}, core.Errorf(core.KindInvalid, "A key needs scopes: accountId, groupIds, canSendMessages, canReceiveMessages")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return keyScopes{}, core.Errorf(core.KindInvalid, "scopes must be an object")
	}
	var unknown []string
	for name := range fields {
		if !oneOf(name, scopeFields) {
			unknown = append(unknown, name)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return keyScopes{}, core.Errorf(core.KindInvalid, "unknown scope %q: scopes are %s", unknown[0], strings.Join(scopeFields, ", "))
	}
	sc := keyScopes{GroupIDs: []string{}}
	if json.Unmarshal(fields["accountId"], &sc.AccountID) != nil || strings.TrimSpace(sc.AccountID) == "" {
		return keyScopes{}, core.Errorf(core.KindInvalid, "scopes.accountId must be the id of an account")
	}
	sc.AccountID = strings.TrimSpace(sc.AccountID)
	if g, set := fields["groupIds"]; set && string(g) != "null" {
		var ids []string
		if json.Unmarshal(g, &ids) != nil {
			return keyScopes{}, core.Errorf(core.KindInvalid, "scopes.groupIds must be an array of community ids")
		}
		for _, id := range ids {
			id = strings.TrimSpace(id)
			if id == "" {
				return keyScopes{}, core.Errorf(core.KindInvalid, "scopes.groupIds must not contain blank ids")
			}
			if !oneOf(id, sc.GroupIDs) {
				sc.GroupIDs = append(sc.GroupIDs, id)
			}
		}
	}
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"canSendMessages", &sc.CanSendMessages}, {"canReceiveMessages", &sc.CanReceiveMessages}} {
		if v, set := fields[f.name]; set && json.Unmarshal(v, f.dst) != nil {
			return keyScopes{}, core.Errorf(core.KindInvalid, "scopes.%s must be a boolean", f.name)
		}
	}
	return sc, nil
}

// newMockSecret returns a fresh secret: the marker and 32 random bytes in
// unpadded base64url.
func newMockSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return mockKeyPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// createAPIKey answers the full secret once, as key; afterwards only its
// prefix is ever shown.
func (s *Server) createAPIKey(_ context.Context, request any) (any, error) {
	req := request.(createAPIKeyRequest)
	name := strings.TrimSpace(req.Name.Value)
	if name == "" {
		return nil, core.Errorf(core.KindInvalid, "A key needs a name")
	}
	if utf8.RuneCountInString(name) > maxKeyName {
		return nil, core.Errorf(core.KindInvalid, "A key name is at most %d characters", maxKeyName)
	}
	scopes, err := parseScopes(req.Scopes)
	if err != nil {
		return nil, err
	}
	secret, err := newMockSecret()
	if err != nil {
		return nil, core.Wrap(core.KindInternal, err, "")
	}
	return s.store.write(func(st *state) (result, error) {
		for _, k := range st.APIKeys {
			if strings.EqualFold(k.Name, name) {
				return result{}, core.Errorf(core.KindConflict, "A key named %q already exists", k.Name)
			}
		}
		if st.findAccount(scopes.AccountID) == nil {
			return result{}, core.Errorf(core.KindInvalid, "scopes.accountId %s does not match any account", scopes.AccountID)
		}
		for _, id := range scopes.GroupIDs {
			if st.findCommunity(id) == nil {
				return result{}, core.Errorf(core.KindInvalid, "scopes.groupIds: %s is not a known community", id)
			}
		}
		k := apiKey{
			ID: s.store.newID("key"), Name: name, Prefix: secret[:prefixLen],
			SecretHash: core.HashSecret(secret), Scopes: scopes, CreatedAt: s.store.stamp(),
		}
		st.APIKeys = append(st.APIKeys, k)
		return created(map[string]any{"apiKey": k, "apiKeys": st.keys(), "key": secret}), nil
	})
}

var decodeRevokeAPIKey = decodePath("id")

// revokeAPIKey deletes the key at once; an unknown id is a no-op.
func (s *Server) revokeAPIKey(_ context.Context, request any) (any, error) {
	id := request.(string)
	return s.store.write(func(st *state) (result, error) {
		for i := range st.APIKeys {
			if st.APIKeys[i].ID == id {
				st.APIKeys = append(st.APIKeys[:i], st.APIKeys[i+1:]...)
				break
			}
		}
		return ok(map[string]any{"apiKeys": st.keys()}), nil
	})
}
