package main

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// The spec's limits on a deployment left at its defaults: 60 requests a
// minute per key in the headers, the Free plan's limits in GET /me,
// webhooks refused as plan_limit, 5 API keys per owner, a batch of
// exactly 100 posts taken whole, and a match's post.text cut at 2000
// characters (characters, not bytes), counted on its phrase.
func TestOutsideDefaultLimits(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false")
	a := newTenant(t, s, "a@example.com")

	r := s.call("GET", "/api/v1/me", a.readOnly, nil).want(t, 200, "")
	if r.Header.Get("X-RateLimit-Limit") != "60" || r.Header.Get("X-RateLimit-Remaining") != "59" {
		t.Fatalf("rate headers %q %q, want 60 and 59", r.Header.Get("X-RateLimit-Limit"), r.Header.Get("X-RateLimit-Remaining"))
	}
	if l := fmt.Sprint(dataOf(t, r)["limits"]); l != "map[accountsPerPlatform:1 phrasesPerPlatform:1 webhooksPerPerson:0]" {
		t.Fatalf("default limits: %s", l)
	}
	s.call("POST", "/api/v1/webhooks", a.full, map[string]any{"url": "https://hooks.example.com/in"}).want(t, 403, "plan_limit")

	// newTenant made 3 keys: two more are allowed, a sixth is not.
	s.mustAdmin("key", "create", "--owner", a.id, "--name", "k4")
	s.mustAdmin("key", "create", "--owner", a.id, "--name", "k5")
	if _, err := s.admin("key", "create", "--owner", a.id, "--name", "k6"); err == nil || !strings.Contains(err.Error(), "at most 5 API keys") {
		t.Fatalf("a sixth API key: %v", err)
	}

	phraseID := dataOf(t, s.call("POST", "/api/v1/keywords", a.full, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, ""))["id"].(string)
	long := "acme " + strings.Repeat("é", 2600)
	posts := []any{xPost("long", "ada", long)}
	for i := 1; i < 100; i++ {
		posts = append(posts, xPost(fmt.Sprint("p", i), "ada", "nothing here"))
	}
	got := s.call("POST", "/ingest", a.ingest, map[string]any{"platform": "x", "posts": posts}).want(t, 200, "").JSON(t)
	if got["ingested"] != 100.0 || got["skipped"] != 0.0 {
		t.Fatalf("a batch of 100: %v", got)
	}
	m := s.call("GET", "/api/v1/matches", a.readOnly, nil).want(t, 200, "").JSON(t)["data"].([]any)
	if len(m) != 1 {
		t.Fatalf("%d matches, want 1", len(m))
	}
	text := m[0].(map[string]any)["post"].(map[string]any)["text"].(string)
	if n := utf8.RuneCountInString(text); n != 2000 || !strings.HasPrefix(long, text) {
		t.Fatalf("post.text of %d characters (%d bytes), want the first 2000", n, len(text))
	}
	if p := dataOf(t, s.call("GET", "/api/v1/keywords/"+phraseID, a.readOnly, nil).want(t, 200, "")); p["matches"] != 1.0 || p["lastSource"] != "helper" {
		t.Fatalf("the phrase after its match: %v", p)
	}
}
