package main

import (
	"strings"
	"testing"
)

// hostile bodies: malformed JSON, wrong types, nulls, NUL bytes, a 1 MB
// string, deep nesting and SQL-looking strings.
func hostileBodies() map[string]string {
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	return map[string]string{
		"malformed":   `{"phrase": "x", "platform":`,
		"not object":  `"just a string"`,
		"array":       `[{"phrase":"x"}]`,
		"wrong types": `{"phrase": 12, "platform": true, "community": [1], "status": {}, "posts": "no", "url": 5, "title": [], "name": 7, "scopes": "all"}`,
		"nulls":       `{"phrase": null, "platform": null, "community": null, "status": null, "posts": null, "title": null, "price": null, "name": null}`,
		"nul bytes":   "{\"phrase\": \"a\\u0000b\", \"platform\": \"x\\u0000\", \"title\": \"t\\u0000\", \"name\": \"n\\u0000\", \"posts\": [{\"externalId\": \"\\u0000\"}]}",
		"huge string": `{"phrase": "` + strings.Repeat("a", 1<<20) + `", "platform": "x", "title": "` + strings.Repeat("b", 1<<20) + `"}`,
		"deep":        `{"phrase": ` + deep + `, "platform": ` + deep + `}`,
		"sql":         `{"phrase": "x'); DROP TABLE phrases; --", "platform": "x' OR '1'='1", "community": "saas; DELETE FROM matches", "status": "paused' --", "name": "'; DROP TABLE api_keys; --"}`,
		"empty":       ``,
	}
}

// Every write route of the public API and the helper endpoints answers
// hostile input with a 4xx in the documented body, stores nothing, and
// keeps serving.
func TestHostileInputLiveAPI(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=100000")
	p := dataOf(t, s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "keep", "platform": "facebook"}).want(t, 201, ""))
	routes := []struct{ method, path, key string }{
		{"POST", "/api/v1/keywords", s.APIKey},
		{"PATCH", "/api/v1/keywords/" + p["id"].(string), s.APIKey},
		{"POST", "/ingest", s.IngestKey},
	}
	for name, body := range hostileBodies() {
		for _, r := range routes {
			resp := s.call(r.method, r.path, r.key, body)
			if resp.Status < 400 || resp.Status > 499 {
				t.Fatalf("%s %s with %s: status %d, body %.200s", r.method, r.path, name, resp.Status, resp.Body)
			}
			resp.errorCode(t)
		}
	}
	list := s.call("GET", "/api/v1/keywords", s.APIKey, nil).want(t, 200, "").JSON(t)["data"].([]any)
	if len(list) != 1 || list[0].(map[string]any)["status"] != "listening" {
		t.Fatalf("hostile input changed the phrases: %v", list)
	}
	if ms := s.call("GET", "/api/v1/matches", s.APIKey, nil).JSON(t)["data"].([]any); len(ms) != 0 {
		t.Fatalf("hostile input stored %d matches", len(ms))
	}
	s.call("GET", "/healthz", "", nil).want(t, 200, "")
}

// The mock's write routes answer hostile input with a 4xx and {error:
// string}, change no state and keep serving.
func TestHostileInputMock(t *testing.T) {
	t.Parallel()
	base, stop := startMock(t, baseEnv(t.TempDir()))
	defer stop()
	before := map[string]string{}
	reads := []string{"/keywords", "/listings", "/accounts", "/api-keys", "/communities", "/brand"}
	for _, path := range reads {
		before[path] = string(mustGet(t, base+path))
	}
	writes := []struct{ method, path string }{
		{"POST", "/keywords"}, {"POST", "/listings"}, {"PUT", "/brand"}, {"POST", "/accounts"}, {"POST", "/api-keys"},
		{"POST", "/communities/join-by-url"}, {"POST", "/communities/resolve"}, {"POST", "/communities/resolve-reddit"},
		{"POST", "/brand/intelligence"}, {"POST", "/brand/index"},
	}
	for name, body := range hostileBodies() {
		for _, w := range writes {
			status, resp := mockCall(t, w.method, base+w.path, body)
			if status < 400 || status > 499 {
				if name == "empty" && w.path == "/brand/index" && status == 404 {
					continue
				}
				t.Fatalf("%s %s with %s: status %d, body %.200s", w.method, w.path, name, status, resp)
			}
			if !strings.HasPrefix(strings.TrimSpace(resp), `{"error":"`) {
				t.Fatalf("%s %s with %s: body %.200s", w.method, w.path, name, resp)
			}
		}
	}
	for _, path := range reads {
		if got := string(mustGet(t, base+path)); got != before[path] {
			t.Fatalf("hostile input changed %s", path)
		}
	}
}
