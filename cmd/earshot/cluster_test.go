package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/mailtest"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// TestCluster runs two serve processes on one Postgres and one RabbitMQ
// and pushes 10,000 posts through both: every match is stored once and
// scored once, no match is emailed twice, and a key's rate limit holds
// across both. It is heavy, so it runs from `make e2e-cluster` (which
// sets EARSHOT_CLUSTER=1), and CI runs that.
func TestCluster(t *testing.T) {
	if os.Getenv("EARSHOT_CLUSTER") == "" {
		t.Skip("EARSHOT_CLUSTER is unset: run make e2e-cluster")
	}
	amqp := os.Getenv("EARSHOT_TEST_AMQP_URL")
	if amqp == "" || os.Getenv(pgtest.Env) == "" {
		t.Fatal("make e2e-cluster needs EARSHOT_TEST_POSTGRES_URL and EARSHOT_TEST_AMQP_URL")
	}
	smtp := mailtest.NewServer(t)
	env := []string{
		"EARSHOT_DATABASE_URL=" + pgtest.URL(t),
		"EARSHOT_BUS_URL=" + amqp,
		"EARSHOT_BUS_PREFIX=cluster-" + randomHex(t),
		"EARSHOT_SECRET_KEY=" + strings.Repeat("k", 40),
		"EARSHOT_RATE_LIMIT_PER_MINUTE=1000000",
		"EARSHOT_SMTP_URL=" + smtp.URL(),
		"EARSHOT_ALERT_INTERVAL=1s",
		"EARSHOT_ALERT_MIN_SCORE=0",
		"EARSHOT_SCORING_INTERVAL=2s",
		"EARSHOT_PLAN_WEBHOOKS_PER_PERSON=2",
		"EARSHOT_WEBHOOK_ALLOW_PRIVATE=true",
	}
	a := start(t, env...)
	b := start(t, append(env, "EARSHOT_BOOTSTRAP=false")...)
	b.APIKey, b.IngestKey = a.APIKey, a.IngestKey
	a.call("POST", "/api/v1/keywords", a.APIKey, map[string]any{"phrase": "acme crm", "platform": "x"}).want(t, 201, "")
	_, wants := hook(t, a, a.APIKey, map[string]any{"min_score": 0})
	_, wantsNone := hook(t, b, a.APIKey, map[string]any{"min_score": 0, "platforms": []string{"facebook"}})

	const batches, per = 100, 100
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range work {
				s := a
				if n%2 == 1 {
					s = b
				}
				posts := make([]any, per)
				for i := range posts {
					posts[i] = ingestPost(fmt.Sprintf("c-%d-%d", n, i), "we moved to Acme CRM last year")
				}
				r := s.call("POST", "/ingest", s.IngestKey, map[string]any{"platform": "x", "posts": posts})
				if r.Status != 200 {
					t.Errorf("batch %d: %d %s", n, r.Status, r.Body)
				}
			}
		}()
	}
	for n := 0; n < batches; n++ {
		work <- n
	}
	close(work)
	wg.Wait()
	// Resending through the other replica stores nothing new.
	r := b.call("POST", "/ingest", b.IngestKey, map[string]any{"platform": "x", "posts": []any{ingestPost("c-0-0", "we moved to Acme CRM last year")}}).JSON(t)
	if r["ingested"] != 0.0 || r["skipped"] != 1.0 {
		t.Fatalf("resend through the other replica: %v", r)
	}

	unscored := 0
	waitUntil(t, time.Minute, 500*time.Millisecond, func() bool {
		var total int
		if total, unscored = countMatches(t, a); total != batches*per {
			t.Fatalf("%d matches stored, want %d", total, batches*per)
		}
		return unscored == 0
	}, func() string { return fmt.Sprintf("%d matches unscored after a minute", unscored) })
	scored := metric(t, a, `earshot_events_total{event="matches_scored"}`) + metric(t, b, `earshot_events_total{event="matches_scored"}`)
	if scored != batches*per {
		t.Fatalf("the replicas stored %d scores for %d matches", scored, batches*per)
	}

	// Each match goes once to the webhook that wants it, from whichever
	// replica sent it, and never to the one that does not.
	msgs := wants.WaitFor(batches*per, 90*time.Second)
	byMatch := map[string]int{}
	for _, m := range msgs {
		if m.Event == "match.created" {
			byMatch[m.JSON["data"].(map[string]any)["id"].(string)]++
		}
	}
	if len(byMatch) != batches*per {
		t.Fatalf("%d distinct matches delivered, want %d", len(byMatch), batches*per)
	}
	for id, n := range byMatch {
		if n != 1 {
			t.Fatalf("match %s delivered %d times", id, n)
		}
	}
	if n := len(wantsNone.Messages()); n != 0 {
		t.Fatalf("a webhook for facebook got %d x matches", n)
	}

	// Alerts: a few more sweeps on both replicas; no match goes out
	// twice. Every sweep finds matches to send (one email of the best
	// few per owner, and thousands are owed), so each leaves an email to
	// wait on.
	seen := map[string]int{}
	link := regexp.MustCompile(`https://x\.com/ada/status/\S+`)
	for _, m := range smtp.WaitFor(len(smtp.Messages())+alertSweeps, time.Minute) {
		for _, u := range link.FindAllString(m.Body, -1) {
			seen[u]++
		}
	}
	if len(seen) == 0 {
		t.Fatal("no alert email carried a match")
	}
	for u, n := range seen {
		if n > 1 {
			t.Fatalf("%s was emailed %d times", u, n)
		}
	}
	t.Logf("%d alert emails carried %d distinct matches, none twice", len(smtp.Messages()), len(seen))

	// A key's limit holds across replicas: 50 a minute, 80 requests.
	limited := start(t, append(env, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=50")...)
	limited2 := start(t, append(env, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=50")...)
	fresh := a.mustAdmin("key", "create", "--owner", a.OwnerID, "--name", "limited")
	ok := 0
	for i := 0; i < 40; i++ {
		for _, s := range []*instance{limited, limited2} {
			if s.call("GET", "/api/v1/me", fresh, nil).Status == 200 {
				ok++
			}
		}
	}
	if ok != 50 {
		t.Fatalf("%d of 80 requests allowed across two replicas, want 50", ok)
	}
}

// alertSweeps is how many more alert emails TestCluster waits for
// before it looks for a match emailed twice: at
// EARSHOT_ALERT_INTERVAL=1s, a few sweeps of the replicas.
const alertSweeps = 4

// allMatches pages through every match of the bootstrap owner.
func allMatches(t *testing.T, s *instance) []map[string]any {
	var out []map[string]any
	before := ""
	for {
		q := "/api/v1/matches?limit=100"
		if before != "" {
			q += "&before=" + before
		}
		body := s.call("GET", q, s.APIKey, nil).want(t, 200, "").JSON(t)
		for _, d := range body["data"].([]any) {
			out = append(out, d.(map[string]any))
		}
		next, ok := body["nextCursor"].(float64)
		if !ok {
			return out
		}
		before = strconv.FormatFloat(next, 'f', -1, 64)
	}
}

// countMatches counts every match and those not scored.
func countMatches(t *testing.T, s *instance) (total, unscored int) {
	ms := allMatches(t, s)
	for _, m := range ms {
		if m["score"] == nil {
			unscored++
		}
	}
	return len(ms), unscored
}

// metric reads one sample of the server's /metrics.
func metric(t *testing.T, s *instance, name string) int {
	t.Helper()
	resp, err := http.Get(s.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	for _, line := range strings.Split(buf.String(), "\n") {
		if v, ok := strings.CutPrefix(line, name+" "); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return int(n)
		}
	}
	return 0
}
