package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/bus"
	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/adapters/smtpmail"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/mailtest"
	"github.com/earshothq/earshot/testkit/pgtest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type world struct {
	db      *gormstore.DB
	phrases ports.PhraseStore
	matches ports.MatchStore
	owners  *Owners
	leases  ports.LeaseStore
}

func newWorld(t *testing.T) world { return newWorldAt(t, "sqlite://:memory:") }

func newWorldAt(t *testing.T, url string) world {
	t.Helper()
	db, err := gormstore.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	os := gormstore.NewOwnerStore(db)
	return world{db: db, phrases: gormstore.NewPhraseStore(db), matches: gormstore.NewMatchStore(db),
		owners: NewOwners(os, NewKeys(gormstore.NewKeyStore(db), os, ports.SystemClock{})), leases: gormstore.NewLeaseStore(db)}
}

func (w world) owner(t *testing.T, email string) core.Owner {
	o, err := w.owners.Create(context.Background(), email, "")
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func (w world) phrase(t *testing.T, owner, text, community string) core.Phrase {
	p, err := core.NewPhrase(owner, text, "reddit", community)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.phrases.CreatePhrase(context.Background(), &p, core.Limits{PhrasesPerPlatform: 10}, ports.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	return p
}

// redditServer speaks reddit's Listing JSON for the posts it holds and
// counts reads per path.
type redditServer struct {
	*httptest.Server
	mu     sync.Mutex
	reads  map[string]int
	status map[string]int // path -> forced status
	posts  map[string][]map[string]any
}

func newRedditServer(t *testing.T) *redditServer {
	rs := &redditServer{reads: map[string]int{}, status: map[string]int{}, posts: map[string][]map[string]any{}}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		rs.reads[r.URL.Path]++
		if st := rs.status[r.URL.Path]; st != 0 {
			w.WriteHeader(st)
			return
		}
		children := []map[string]any{}
		if strings.HasSuffix(r.URL.Path, "/new.json") {
			for _, p := range rs.posts[r.URL.Path] {
				children = append(children, map[string]any{"kind": "t3", "data": p})
			}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"kind": "Listing", "data": map[string]any{"after": nil, "children": children}})
	}))
	t.Cleanup(rs.Close)
	return rs
}

func (rs *redditServer) add(community, id, title, text string) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	path := "/r/" + community + "/new.json"
	rs.posts[path] = append(rs.posts[path], map[string]any{
		"id": id, "name": "t3_" + id, "subreddit": community, "author": "someone", "title": title, "selftext": text,
		"permalink": "/r/" + community + "/comments/" + id + "/x/", "score": 5, "num_comments": 2,
		"created_utc": float64(time.Now().Unix()),
	})
}

func (rs *redditServer) readsOf(path string) int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.reads[path]
}

func noSleep(context.Context, time.Duration) error { return nil }

// databases runs f on SQLite and, when EARSHOT_TEST_POSTGRES_URL is set,
// on Postgres, where two pollers stand for two replicas.
func databases(t *testing.T, f func(t *testing.T, w world)) {
	t.Run("sqlite", func(t *testing.T) { f(t, newWorld(t)) })
	t.Run("postgres", func(t *testing.T) { f(t, newWorldAt(t, pgtest.URL(t))) })
}

func TestRedditCycle(t *testing.T) { databases(t, testRedditCycle) }

func testRedditCycle(t *testing.T, w world) {
	ctx := context.Background()
	a, b := w.owner(t, "a@example.com"), w.owner(t, "b@example.com")
	pa := w.phrase(t, a.ID, "generics", "golang")
	pb := w.phrase(t, b.ID, "go modules", "r/golang")
	paused := w.phrase(t, a.ID, "paused thing", "golang")
	w.phrases.SetPhraseStatus(ctx, a.ID, paused.ID, core.Paused)
	rust := w.phrase(t, b.ID, "borrow checker", "rust")
	before, _ := w.phrases.Phrase(ctx, b.ID, rust.ID)

	rs := newRedditServer(t)
	rs.add("golang", "p1", "Generics question", "how do I use generics with go modules?")
	rs.add("golang", "p2", "Unrelated", "the paused thing should match nothing")
	rs.add("golang", "p3", "Long", strings.Repeat("é", 2500)+" generics")
	rs.status["/r/rust/new.json"] = http.StatusInternalServerError

	src, err := reddit.New(reddit.Config{BaseURL: rs.URL, UserAgent: "test", Interval: time.Minute, Logger: quiet, Sleep: noSleep})
	if err != nil {
		t.Fatal(err)
	}
	mem, _ := bus.Open("memory://", bus.Config{Logger: quiet})
	defer mem.Close()
	poller := NewReddit(w.phrases, w.matches, src, w.leases, mem, ports.SystemClock{}, quiet, "replica-1")
	if err := poller.Cycle(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := rs.readsOf("/r/golang/new.json"); n != 1 {
		t.Fatalf("golang read %d times in one cycle, want once for both owners", n)
	}
	ma, _, _ := w.matches.Matches(ctx, a.ID, ports.MatchFilter{MinScore: -1, Limit: 10})
	mb, _, _ := w.matches.Matches(ctx, b.ID, ports.MatchFilter{MinScore: -1, Limit: 10})
	if len(ma) != 2 || len(mb) != 1 || mb[0].PhraseID != pb.ID || mb[0].Post.ExternalID != "t3_p1" {
		t.Fatalf("matches: A %d, B %d", len(ma), len(mb))
	}
	for _, m := range ma {
		if m.PhraseID != pa.ID || m.Platform != core.Reddit {
			t.Fatalf("A's match: %+v", m)
		}
		if len([]rune(m.Post.Text)) > core.MaxPostText {
			t.Fatalf("text not cut: %d characters", len([]rune(m.Post.Text)))
		}
	}
	got, _ := w.phrases.Phrase(ctx, a.ID, pa.ID)
	if got.LastSource != core.SourceReddit || !got.LastCheckedAt.After(pa.LastCheckedAt) {
		t.Fatalf("phrase after the cycle: %+v", got)
	}
	if r, _ := w.phrases.Phrase(ctx, b.ID, rust.ID); !r.LastCheckedAt.Equal(before.LastCheckedAt) {
		t.Fatal("a community that failed moved its phrases' lastCheckedAt")
	}

	// Another replica in the same cycle leaves golang alone; the next
	// cycle never stores a post twice.
	other := NewReddit(w.phrases, w.matches, src, w.leases, mem, ports.SystemClock{}, quiet, "replica-2")
	if err := other.Cycle(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := rs.readsOf("/r/golang/new.json"); n != 1 {
		t.Fatalf("a second replica read golang again in the same cycle (%d reads)", n)
	}
	if err := poller.Cycle(ctx, time.Minute); err != nil { // the holder renews its own lease
		t.Fatal(err)
	}
	ma, _, _ = w.matches.Matches(ctx, a.ID, ports.MatchFilter{MinScore: -1, Limit: 10})
	if len(ma) != 2 {
		t.Fatalf("A has %d matches after a second cycle, want still 2", len(ma))
	}
}

func TestRedditMirrorFallback(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	a := w.owner(t, "a@example.com")
	p := w.phrase(t, a.ID, "acme", "saas")
	rs := newRedditServer(t)
	rs.status["/r/saas/new.json"] = http.StatusForbidden
	mirror := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		items := []map[string]any{}
		if r.URL.Path == "/api/posts/search" {
			items = append(items, map[string]any{"id": "m1", "subreddit": "saas", "author": "x", "title": "Acme pricing",
				"selftext": "is acme worth it", "permalink": "/r/saas/comments/m1/acme/", "created_utc": time.Now().Unix(), "score": 1, "num_comments": 0})
		}
		json.NewEncoder(rw).Encode(map[string]any{"data": items})
	}))
	defer mirror.Close()
	src, _ := reddit.New(reddit.Config{BaseURL: rs.URL, UserAgent: "test", MirrorURL: mirror.URL, MirrorAPI: "arcticshift",
		Interval: time.Minute, Logger: quiet, Sleep: noSleep})
	poller := NewReddit(w.phrases, w.matches, src, w.leases, nil, ports.SystemClock{}, quiet, "r1")
	if err := poller.Cycle(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	ms, _, _ := w.matches.Matches(ctx, a.ID, ports.MatchFilter{MinScore: -1, Limit: 10})
	got, _ := w.phrases.Phrase(ctx, a.ID, p.ID)
	if len(ms) != 1 || ms[0].Post.ExternalID != "t3_m1" || got.LastSource != core.SourceMirror {
		t.Fatalf("mirror: %d matches, lastSource %s", len(ms), got.LastSource)
	}
}

func scoredMatches(t *testing.T, w world, owner core.Owner, scores ...int) []core.Match {
	ctx := context.Background()
	p, err := core.NewPhrase(owner.ID, "alert "+fmt.Sprint(len(scores)), "x", "")
	if err != nil {
		t.Fatal(err)
	}
	w.phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 10}, ports.Idempotency{})
	var batch []ports.PostMatches
	for i := range scores {
		batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: fmt.Sprintf("%s-%d-%d", owner.ID, len(scores), i), Text: "t",
			URL: fmt.Sprintf("https://x.com/p/%d", i)}, PhraseIDs: []string{p.ID}})
	}
	res, err := w.matches.SaveMatches(ctx, owner.ID, core.X, batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range res.Matches {
		w.matches.SetScore(ctx, owner.ID, m.ID, core.Score{Value: scores[i], Intent: core.IntentBuying, Reason: fmt.Sprintf("cue %d", scores[i])}, core.QueueMatchCreated)
	}
	return res.Matches
}

func TestAlertsOverSMTP(t *testing.T) { databases(t, testAlertsOverSMTP) }

func testAlertsOverSMTP(t *testing.T, w world) {
	ctx := context.Background()
	a, b := w.owner(t, "a@example.com"), w.owner(t, "b@example.com")
	scoredMatches(t, w, a, 95, 40, 71, 88, 99, 70, 72, 73, 74, 75, 76, 77) // 11 at or above 70
	scoredMatches(t, w, b, 10)
	srv := mailtest.NewServer(t)
	mailer, err := smtpmail.New(srv.URL(), "alerts@earshot.test", quiet)
	if err != nil {
		t.Fatal(err)
	}
	alerts := NewAlerts(gormstore.NewAlertStore(w.db), w.leases, mailer, ports.SystemClock{}, quiet, "h1", 70, "http://127.0.0.1:8080")

	// A refusing server sends nothing and marks nothing.
	srv.RejectWith(451, "try later")
	if n, _ := alerts.Sweep(ctx); n != 0 {
		t.Fatalf("%d emails counted as sent while the server refused", n)
	}
	srv.RejectWith(550, "no such user")
	alerts.Sweep(ctx)
	srv.RejectWith(0, "")

	if n, err := alerts.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v", n, err)
	}
	msgs := srv.WaitFor(1, 5*time.Second)
	body := msgs[0].Body
	if msgs[0].Subject != "earshot: 10 new matches" || !strings.Contains(body, "1. \"alert 12\" on x: score 99, buying") ||
		!strings.Contains(body, "cue 99") || !strings.Contains(body, "https://x.com/p/4") || strings.Contains(body, "score 40") ||
		strings.Index(body, "score 99") > strings.Index(body, "score 95") {
		t.Fatalf("alert mail:\n%s", body)
	}
	// The eleventh goes in the next sweep, and nothing goes twice.
	alerts.Sweep(ctx)
	msgs = srv.WaitFor(2, 5*time.Second)
	if msgs[1].Subject != "earshot: 1 new match" || !strings.Contains(msgs[1].Body, "score 70") {
		t.Fatalf("second mail: %s\n%s", msgs[1].Subject, msgs[1].Body)
	}
	if n, _ := alerts.Sweep(ctx); n != 0 {
		t.Fatalf("a third sweep sent %d emails", n)
	}

	// A server that hangs up mid-conversation: nothing marked, later sent.
	scoredMatches(t, w, b, 90, 91)
	srv.HangUp()
	if n, _ := alerts.Sweep(ctx); n != 0 {
		t.Fatal("a hang-up counted as sent")
	}
	srv.RejectWith(0, "")
	fresh := mailtest.NewServer(t)
	mailer2, _ := smtpmail.New(fresh.URL(), "alerts@earshot.test", quiet)
	alerts2 := NewAlerts(gormstore.NewAlertStore(w.db), w.leases, mailer2, ports.SystemClock{}, quiet, "h2", 70, "http://x")
	if n, _ := alerts2.Sweep(ctx); n != 1 {
		t.Fatalf("after the hang-up, %d emails", n)
	}
	if m := fresh.WaitFor(1, 5*time.Second); m[0].Subject != "earshot: 2 new matches" {
		t.Fatalf("after the hang-up: %s", m[0].Subject)
	}
}

// Two replicas sweeping at once email each match once.
func TestAlertsTwoReplicas(t *testing.T) {
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		for i := 0; i < 6; i++ {
			scoredMatches(t, w, w.owner(t, fmt.Sprintf("o%d@example.com", i)), 90, 91, 92)
		}
		srv := mailtest.NewServer(t)
		var wg sync.WaitGroup
		for r := 0; r < 2; r++ {
			mailer, _ := smtpmail.New(srv.URL(), "alerts@earshot.test", quiet)
			a := NewAlerts(gormstore.NewAlertStore(w.db), w.leases, mailer, ports.SystemClock{}, quiet, fmt.Sprint("replica-", r), 70, "http://x")
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 3; i++ {
					if _, err := a.Sweep(ctx); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
		msgs := srv.Messages()
		seen := map[string]int{}
		for _, m := range msgs {
			seen[m.To[0]]++
		}
		if len(msgs) != 6 {
			t.Fatalf("%d emails for 6 owners: %v", len(msgs), seen)
		}
		for to, n := range seen {
			if n != 1 {
				t.Fatalf("%s got %d emails", to, n)
			}
		}
	})
}
