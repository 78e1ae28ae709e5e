package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func ingestPost(id string, body ...string) map[string]any {
	return map[string]any{"externalId": id, "authorName": "ada", "body": body, "url": "https://x.com/ada/status/" + id, "likes": 3, "comments": 1}
}

func TestIngestEndpoints(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000", "EARSHOT_PLAN_PHRASES_PER_PLATFORM=3")
	a, b := newTenant(t, s, "a@example.com"), newTenant(t, s, "b@example.com")
	s.call("POST", "/api/v1/keywords", a.full, map[string]any{"phrase": "acme crm", "platform": "x"}).want(t, 201, "")
	paused := dataOf(t, s.call("POST", "/api/v1/keywords", a.full, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, ""))
	s.call("PATCH", "/api/v1/keywords/"+paused["id"].(string), a.full, map[string]any{"status": "paused"}).want(t, 200, "")
	s.call("POST", "/api/v1/keywords", a.full, map[string]any{"phrase": "Go", "platform": "facebook"}).want(t, 201, "")

	// Ingest keys only; the owner comes from the key.
	s.call("GET", "/phrases?platform=x", "", nil).want(t, 401, "unauthorized")
	s.call("GET", "/phrases?platform=x", a.full, nil).want(t, 401, "unauthorized")
	s.call("POST", "/api/v1/keywords", a.ingest, map[string]any{"phrase": "q", "platform": "x"}).want(t, 401, "unauthorized")
	ph := s.call("GET", "/phrases?platform=x", a.ingest, nil).want(t, 200, "").JSON(t)
	if fmt.Sprint(ph) != "map[items:[map[community: phrase:acme crm]] phrases:[acme crm] platform:x]" {
		t.Fatalf("GET /phrases: %v (paused phrases are left out)", ph)
	}
	s.call("GET", "/phrases?platform=myspace", a.ingest, nil).want(t, 400, "invalid_parameter")
	if l := s.call("GET", "/phrases?platform=x", b.ingest, nil).JSON(t)["phrases"].([]any); len(l) != 0 {
		t.Fatalf("owner B sees A's phrases: %v", l)
	}

	posts := []any{
		ingestPost("1", "Anyone using ACME  CRM for invoices?"),
		ingestPost("2", "nothing to see"),
		ingestPost("3", "first part", "switching from acme crm next month"),
		map[string]any{"externalId": "", "body": []string{"acme crm"}, "url": "https://x.com/a"},      // no id
		map[string]any{"externalId": "5", "body": []string{"  "}, "url": "https://x.com/a"},           // empty body
		map[string]any{"externalId": "6", "body": []string{"acme crm"}, "url": "javascript:alert(1)"}, // bad url
		map[string]any{"externalId": "7", "body": "acme crm", "url": "https://x.com/a"},               // wrong type
		"not an object",
		ingestPost("1", "a resend of post 1 in the same batch"),
	}
	r := s.call("POST", "/ingest", a.ingest, map[string]any{"platform": "x", "posts": posts}).want(t, 200, "").JSON(t)
	if r["ingested"] != 3.0 || r["skipped"] != 6.0 || r["accountId"] == "" {
		t.Fatalf("POST /ingest: %v", r)
	}
	again := s.call("POST", "/ingest", a.ingest, map[string]any{"platform": "x", "posts": posts[:3]}).want(t, 200, "").JSON(t)
	if again["ingested"] != 0.0 || again["skipped"] != 3.0 || again["accountId"] != r["accountId"] {
		t.Fatalf("resent batch: %v", again)
	}
	ms := s.call("GET", "/api/v1/matches", a.full, nil).want(t, 200, "").JSON(t)["data"].([]any)
	if len(ms) != 2 {
		t.Fatalf("%d matches, want 2 (posts 1 and 3)", len(ms))
	}
	m := ms[0].(map[string]any)
	post := m["post"].(map[string]any)
	if m["phrase"] != "acme crm" || m["platform"] != "x" || post["text"] != "first part\n\nswitching from acme crm next month" ||
		post["url"] != "https://x.com/ada/status/3" || post["author"] != "ada" || post["title"] != nil {
		t.Fatalf("match of post 3: %v", m)
	}
	if s.call("GET", "/api/v1/matches", b.full, nil).JSON(t)["data"].([]any) != nil &&
		len(s.call("GET", "/api/v1/matches", b.full, nil).JSON(t)["data"].([]any)) != 0 {
		t.Fatal("owner B sees A's matches")
	}
	me := dataOf(t, s.call("GET", "/api/v1/me", a.full, nil))
	if fmt.Sprint(me["usage"].(map[string]any)["accounts"]) != "map[facebook:0 reddit:0 x:1]" {
		t.Fatalf("usage.accounts: %v", me["usage"])
	}

	// Word boundaries: "Go" does not match "google", matches "go,".
	r = s.call("POST", "/ingest", a.ingest, map[string]any{"platform": "facebook", "posts": []any{
		ingestPost("f1", "I googled it"), ingestPost("f2", "Let's GO, team"),
	}}).want(t, 200, "").JSON(t)
	if r["ingested"] != 2.0 {
		t.Fatalf("facebook ingest: %v", r)
	}
	fb := s.call("GET", "/api/v1/matches?platform=facebook", a.full, nil).JSON(t)["data"].([]any)
	if len(fb) != 1 || fb[0].(map[string]any)["post"].(map[string]any)["text"] != "Let's GO, team" {
		t.Fatalf("facebook matches: %v", fb)
	}

	// Refused whole: over 100 posts, a missing platform, bad JSON.
	many := make([]any, 101)
	for i := range many {
		many[i] = ingestPost(fmt.Sprint("m", i), "acme crm")
	}
	s.call("POST", "/ingest", a.ingest, map[string]any{"platform": "x", "posts": many}).want(t, 400, "invalid_parameter")
	s.call("POST", "/ingest", a.ingest, map[string]any{"posts": posts}).want(t, 400, "invalid_parameter")
	s.call("POST", "/ingest", a.ingest, map[string]any{"platform": "myspace", "posts": posts}).want(t, 400, "invalid_parameter")
	s.call("POST", "/ingest", a.ingest, `{"platform":`).want(t, 400, "invalid_json")
	big := `{"platform":"x","posts":[{"externalId":"big","body":["` + strings.Repeat("a", 1<<20) + `"]}]}`
	s.call("POST", "/ingest", a.ingest, big).want(t, 413, "payload_too_large")
	s.call("GET", "/proxy", a.ingest, nil).want(t, 503, "service_unavailable")
}

func TestIngestAccountLimitAndSessions(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_PLAN_ACCOUNTS_PER_PLATFORM=0",
		"EARSHOT_PROXY_URL=http://helper:s3cret@proxy.example:3128", "EARSHOT_PROXY_REQUIRED=false")
	a := newTenant(t, s, "a@example.com")
	s.call("POST", "/ingest", a.ingest, map[string]any{"platform": "x", "posts": []any{ingestPost("1", "hi")}}).want(t, 403, "plan_limit")
	p := s.call("GET", "/proxy", a.ingest, nil).want(t, 200, "").JSON(t)
	if fmt.Sprint(p) != "map[proxy:map[password:s3cret server:http://proxy.example:3128 username:helper] required:false]" {
		t.Fatalf("GET /proxy: %v", p)
	}

	// session set connects the account within the plan limit.
	cookie := "sess-" + randomHex(t)
	jar := filepath.Join(t.TempDir(), "jar.json")
	os.WriteFile(jar, []byte(`[{"name":"c_user","value":"`+cookie+`","domain":".facebook.com"}]`), 0o600)
	if _, err := s.admin("session", "set", "--owner", a.id, "--platform", "facebook", "--file", jar); err == nil {
		t.Fatal("session set passed a plan limit of 0")
	} else if strings.Contains(err.Error(), cookie) {
		t.Fatal("an error quotes the cookie")
	}
	s.call("GET", "/session?platform=facebook", a.ingest, nil).want(t, 404, "not_found")
}

func TestSessionsSealed(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false")
	a, b := newTenant(t, s, "a@example.com"), newTenant(t, s, "b@example.com")
	cookie := "sess-" + randomHex(t)
	jar := filepath.Join(t.TempDir(), "jar.json")
	body := `[{"name":"c_user","value":"` + cookie + `","domain":".facebook.com"},{"name":"xs","value":"x` + cookie + `","domain":".facebook.com"}]`
	os.WriteFile(jar, []byte(body), 0o600)
	// The jar is stored, and handed out, in the one canonical shape.
	want := `[{"domain":".facebook.com","name":"c_user","value":"` + cookie + `","path":"/","secure":false,"httpOnly":false},` +
		`{"domain":".facebook.com","name":"xs","value":"x` + cookie + `","path":"/","secure":false,"httpOnly":false}]`
	if out := s.mustAdmin("session", "set", "--owner", a.id, "--platform", "facebook", "--file", jar); out != "" {
		t.Fatalf("session set printed %q", out)
	}
	got := s.call("GET", "/session?platform=facebook", a.ingest, nil).want(t, 200, "")
	if strings.TrimSpace(string(got.Body)) != want {
		t.Fatalf("GET /session: %s", got.Body)
	}
	s.call("GET", "/session?platform=facebook", b.ingest, nil).want(t, 404, "not_found")
	s.call("GET", "/session?platform=facebook", a.full, nil).want(t, 401, "unauthorized")
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"value":"`+cookie+`"`), 0o600)
	if _, err := s.admin("session", "set", "--owner", a.id, "--platform", "x", "--file", bad); err == nil || strings.Contains(err.Error(), cookie) {
		t.Fatalf("malformed jar: %v", err)
	}
	// The jar is sealed at rest: the database file never holds the value.
	for _, f := range []string{"earshot.db", "earshot.db-wal"} {
		raw, _ := os.ReadFile(filepath.Join(strings.TrimPrefix(dbPath(s), "sqlite://"), "..", f))
		if strings.Contains(string(raw), cookie) {
			t.Fatalf("%s holds the cookie in the clear", f)
		}
	}
	if strings.Contains(s.logs.String(), cookie) {
		t.Fatal("the cookie reached the log")
	}
	s.restart() // the generated key is kept: the jar still opens
	if got := s.call("GET", "/session?platform=facebook", a.ingest, nil).want(t, 200, ""); strings.TrimSpace(string(got.Body)) != want {
		t.Fatalf("after restart: %s", got.Body)
	}
}

func dbPath(s *instance) string {
	for _, kv := range s.env {
		if v, ok := strings.CutPrefix(kv, "EARSHOT_DATABASE_URL="); ok {
			return v
		}
	}
	return ""
}

func randomHex(t *testing.T) string {
	b := make([]byte, 8)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// A scored match is visible within two seconds of ingest, on both buses.
func TestIngestScoredWithinTwoSeconds(t *testing.T) {
	for _, name := range []string{"memory", "amqp"} {
		t.Run(name, func(t *testing.T) {
			var env []string
			if name == "amqp" {
				u := os.Getenv("EARSHOT_TEST_AMQP_URL")
				if u == "" {
					t.Skip("EARSHOT_TEST_AMQP_URL is unset: AMQP case skipped")
				}
				env = []string{"EARSHOT_BUS_URL=" + u, "EARSHOT_BUS_PREFIX=e2e-" + randomHex(t)}
			}
			s := start(t, append(env, "EARSHOT_BOOTSTRAP=false", "EARSHOT_SCORING_INTERVAL=1h")...)
			a := newTenant(t, s, "a@example.com")
			s.call("POST", "/api/v1/keywords", a.full, map[string]any{"phrase": "acme crm", "platform": "x"}).want(t, 201, "")
			s.call("POST", "/ingest", a.ingest, map[string]any{"platform": "x", "posts": []any{
				ingestPost("1", "Can anyone recommend an alternative to Acme CRM? Looking to buy this week."),
			}}).want(t, 200, "")
			var ms []any
			waitUntil(t, 2*time.Second, 50*time.Millisecond, func() bool {
				ms = s.call("GET", "/api/v1/matches?min_score=0", a.full, nil).JSON(t)["data"].([]any)
				return len(ms) == 1
			}, func() string { return fmt.Sprintf("no scored match within 2 s; logs:\n%s", s.logs) })
			if m := ms[0].(map[string]any); m["score"] == nil || m["intent"] == nil || m["reason"] == nil {
				t.Fatalf("scored match: %v", m)
			}
		})
	}
}

// A match stored while nothing scored it (the bus lost the event, or the
// process stopped) is scored by the sweep at the next start.
func TestScoringSweepAfterRestart(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_SCORING_INTERVAL=1h")
	a := newTenant(t, s, "a@example.com")
	s.stop()
	seedMatches(t, s, a.id, 30) // stored straight into the database: no event
	s.launch()
	var body []any
	unscored := 0
	waitUntil(t, 5*time.Second, 100*time.Millisecond, func() bool {
		body = s.call("GET", "/api/v1/matches?limit=100", a.full, nil).JSON(t)["data"].([]any)
		unscored = 0
		for _, m := range body {
			if m.(map[string]any)["score"] == nil {
				unscored++
			}
		}
		return len(body) == 30 && unscored == 0
	}, func() string { return fmt.Sprintf("%d of %d matches unscored 5 s after start", unscored, len(body)) })
}
