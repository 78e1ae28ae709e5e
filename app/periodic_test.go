package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/smtpmail"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/dbtest"
	"github.com/earshothq/earshot/testkit/mailtest"
	"github.com/earshothq/earshot/testkit/pgtest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

type world struct {
	db      *gormstore.DB
	phrases *gormstore.PhraseStore // both of its ports
	matches ports.MatchStore
	owners  *Owners
	leases  ports.LeaseStore
}

func newWorld(t *testing.T) world { return newWorldAt(t, "sqlite://:memory:") }

func newWorldAt(t *testing.T, url string) world {
	t.Helper()
	db := dbtest.Open(t, url)
	os := gormstore.NewOwnerStore(db)
	return world{db: db, phrases: gormstore.NewPhraseStore(db), matches: gormstore.NewMatchStore(db),
		owners: NewOwners(os, NewKeys(gormstore.NewKeyStore(db), os, ports.SystemClock{})), leases: gormstore.NewLeaseStore(db)}
}

// signal tells one waiter that something it watches may have changed.
// A change that comes while nobody waits is kept (one is enough: the
// waiter looks at the whole state again), so none falls between a look
// and the wait that follows it.
type signal chan struct{}

func newSignal() signal { return make(signal, 1) }

// notify never blocks.
func (s signal) notify() {
	select {
	case s <- struct{}{}:
	default:
	}
}

// waitUntil looks at ok now and again after each notification of
// changed, and fails t, saying what(), when within passes first.
func waitUntil(t testing.TB, within time.Duration, changed signal, ok func() bool, what func() string) {
	t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for !ok() {
		select {
		case <-changed:
		case <-deadline.C:
			if !ok() {
				t.Fatalf("after %v: %s", within, what())
			}
			return
		}
	}
}

func (w world) owner(t *testing.T, email string) core.Owner {
	o, err := w.owners.Create(context.Background(), email, "")
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func (w world) phrase(t *testing.T, owner, text, community string) core.Phrase {
	return w.phraseOn(t, owner, text, "reddit", community)
}

// phraseOn stores the owner's phrase text on platform.
func (w world) phraseOn(t *testing.T, owner, text, platform, community string) core.Phrase {
	p, err := core.NewPhrase(owner, text, platform, community)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.phrases.CreatePhrase(context.Background(), &p, core.Limits{PhrasesPerPlatform: 10}, ports.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	return p
}

// databases runs f on SQLite and, when EARSHOT_TEST_POSTGRES_URL is set,
// on Postgres, where two pollers stand for two replicas.
func databases(t *testing.T, f func(t *testing.T, w world)) {
	t.Run("sqlite", func(t *testing.T) { t.Parallel(); f(t, newWorld(t)) })
	t.Run("postgres", func(t *testing.T) { t.Parallel(); f(t, newWorldAt(t, pgtest.URL(t))) })
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
		w.matches.SetScores(ctx, []ports.ScoreUpdate{{Match: m, Score: core.Score{Value: scores[i], Intent: core.IntentBuying, Reason: fmt.Sprintf("cue %d", scores[i])}}}, core.QueueMatchCreated)
	}
	return res.Matches
}

func TestAlertsOverSMTP(t *testing.T) {
	t.Parallel()
	databases(t, testAlertsOverSMTP)
}

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
	alerts := NewAlerts(AlertDeps{Store: gormstore.NewAlertStore(w.db), Leases: w.leases, Mailer: mailer, Log: quiet, Holder: "h1"},
		AlertConfig{MinScore: 70, SiteURL: func() string { return "http://127.0.0.1:8080" }})

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
	alerts2 := NewAlerts(AlertDeps{Store: gormstore.NewAlertStore(w.db), Leases: w.leases, Mailer: mailer2, Log: quiet, Holder: "h2"},
		AlertConfig{MinScore: 70, SiteURL: func() string { return "http://x" }})
	if n, _ := alerts2.Sweep(ctx); n != 1 {
		t.Fatalf("after the hang-up, %d emails", n)
	}
	if m := fresh.WaitFor(1, 5*time.Second); m[0].Subject != "earshot: 2 new matches" {
		t.Fatalf("after the hang-up: %s", m[0].Subject)
	}
}

// Two replicas sweeping at once email each match once.
func TestAlertsTwoReplicas(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		for i := 0; i < 6; i++ {
			scoredMatches(t, w, w.owner(t, fmt.Sprintf("o%d@example.com", i)), 90, 91, 92)
		}
		srv := mailtest.NewServer(t)
		var wg sync.WaitGroup
		for r := 0; r < 2; r++ {
			mailer, _ := smtpmail.New(srv.URL(), "alerts@earshot.test", quiet)
			a := NewAlerts(AlertDeps{Store: gormstore.NewAlertStore(w.db), Leases: w.leases, Mailer: mailer, Log: quiet, Holder: fmt.Sprint("replica-", r)},
				AlertConfig{MinScore: 70, SiteURL: func() string { return "http://x" }})
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
