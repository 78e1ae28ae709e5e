package legacymock

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func validScopes() map[string]any {
	return map[string]any{"accountId": fbAccount, "groupIds": []string{fbJoined}, "canSendMessages": true, "canReceiveMessages": false}
}

func TestAPIKeyCreateShowsSecretOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	c := newClient(t, Config{StatePath: path})
	r := c.must(201, "POST", "/api-keys", map[string]any{"name": "Zapier bridge", "scopes": validScopes()})
	secret, _ := r.body["key"].(string)
	if !strings.HasPrefix(secret, "svc_mock_") || len(secret) < 40 {
		t.Fatalf("key %q", secret)
	}
	k := r.obj("apiKey")
	if k["prefix"] != secret[:13] || k["name"] != "Zapier bridge" || k["lastUsedAt"] != nil || k["createdAt"] != "2024-07-01T12:00:00.000Z" {
		t.Errorf("record %v", k)
	}
	sc := k["scopes"].(map[string]any)
	if sc["accountId"] != fbAccount || sc["canSendMessages"] != true || sc["canReceiveMessages"] != false || len(sc["groupIds"].([]any)) != 1 {
		t.Errorf("scopes %v", sc)
	}
	list := c.must(200, "GET", "/api-keys", nil)
	for _, raw := range []string{r.raw[:strings.Index(r.raw, `"key"`)] + "}", list.raw} {
		if strings.Contains(raw, secret) {
			t.Errorf("the secret leaked: %s", raw)
		}
	}
	// The spec's record shape has secretHash: the SHA-256 of the secret.
	for _, k := range []map[string]any{k, list.list("apiKeys")[0]} {
		if sum := sha256.Sum256([]byte(secret)); k["secretHash"] != hex.EncodeToString(sum[:]) {
			t.Errorf("secretHash %v, want the secret's SHA-256", k["secretHash"])
		}
	}
	if len(list.list("apiKeys")) != 1 || list.list("apiKeys")[0]["prefix"] != secret[:13] {
		t.Errorf("list %s", list.raw)
	}
	// Only the prefix and the SHA-256 are stored.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(secret))
	if !strings.Contains(string(data), hex.EncodeToString(sum[:])) || strings.Contains(string(data), secret) {
		t.Error("state file must hold the hash and never the secret")
	}
}

func TestAPIKeyCreateValidation(t *testing.T) {
	c := newClient(t, Config{})
	with := func(mut func(sc map[string]any)) map[string]any {
		sc := validScopes()
		mut(sc)
		return map[string]any{"name": "k", "scopes": sc}
	}
	for _, tt := range []struct {
		name string
		body any
		msg  string
	}{
		{"no name", map[string]any{"scopes": validScopes()}, "A key needs a name"},
		{"blank name", map[string]any{"name": "   ", "scopes": validScopes()}, "A key needs a name"},
		{"long name", map[string]any{"name": strings.Repeat("n", 101), "scopes": validScopes()}, ""},
		{"no scopes", map[string]any{"name": "k"}, ""},
		{"scopes not an object", map[string]any{"name": "k", "scopes": []string{"read"}}, "scopes must be an object"},
		{"unknown scope", with(func(sc map[string]any) { sc["canDelete"] = true }), ""},
		{"no accountId", with(func(sc map[string]any) { delete(sc, "accountId") }), "scopes.accountId must be the id of an account"},
		{"accountId not a string", with(func(sc map[string]any) { sc["accountId"] = 12 }), "scopes.accountId must be the id of an account"},
		{"unknown accountId", with(func(sc map[string]any) { sc["accountId"] = "account-1-zzz" }), ""},
		{"groupIds not strings", with(func(sc map[string]any) { sc["groupIds"] = []int{1} }), "scopes.groupIds must be an array of community ids"},
		{"blank group", with(func(sc map[string]any) { sc["groupIds"] = []string{""} }), ""},
		{"unknown group", with(func(sc map[string]any) { sc["groupIds"] = []string{"fb-nope"} }), ""},
		{"send flag not bool", with(func(sc map[string]any) { sc["canSendMessages"] = "yes" }), "scopes.canSendMessages must be a boolean"},
		{"receive flag not bool", with(func(sc map[string]any) { sc["canReceiveMessages"] = 1 }), "scopes.canReceiveMessages must be a boolean"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c.fails(400, tt.msg, "POST", "/api-keys", tt.body)
		})
	}
	if r := c.must(200, "GET", "/api-keys", nil); len(r.list("apiKeys")) != 0 {
		t.Errorf("a refused create stored a key: %s", r.raw)
	}
}

func TestAPIKeyScopeDefaults(t *testing.T) {
	c := newClient(t, Config{})
	r := c.must(201, "POST", "/api-keys", map[string]any{"name": "read only", "scopes": map[string]any{"accountId": redditAccount}})
	sc := r.obj("apiKey")["scopes"].(map[string]any)
	if len(sc["groupIds"].([]any)) != 0 || sc["canSendMessages"] != false || sc["canReceiveMessages"] != false {
		t.Errorf("defaults %v", sc)
	}
}

func TestAPIKeyNameUniqueIgnoringCase(t *testing.T) {
	c := newClient(t, Config{})
	c.must(201, "POST", "/api-keys", map[string]any{"name": "Dashboard", "scopes": validScopes()})
	c.fails(409, `A key named "Dashboard" already exists`, "POST", "/api-keys", map[string]any{"name": " dashBOARD ", "scopes": validScopes()})
}

func TestAPIKeyRevoke(t *testing.T) {
	c := newClient(t, Config{})
	a := c.must(201, "POST", "/api-keys", map[string]any{"name": "a", "scopes": validScopes()}).obj("apiKey")["id"].(string)
	c.must(201, "POST", "/api-keys", map[string]any{"name": "b", "scopes": validScopes()})
	r := c.must(200, "DELETE", "/api-keys/"+a, nil)
	if keys := r.list("apiKeys"); len(keys) != 1 || keys[0]["name"] != "b" {
		t.Errorf("remaining %s", r.raw)
	}
	if keys := c.must(200, "GET", "/api-keys", nil).list("apiKeys"); len(keys) != 1 {
		t.Error("revocation is not immediate")
	}
	// Unknown ids are a no-op 200.
	r = c.must(200, "DELETE", "/api-keys/key-0-nope", nil)
	if len(r.list("apiKeys")) != 1 {
		t.Errorf("no-op changed keys: %s", r.raw)
	}
	// The name is free again once revoked.
	c.must(201, "POST", "/api-keys", map[string]any{"name": "A", "scopes": validScopes()})
}
