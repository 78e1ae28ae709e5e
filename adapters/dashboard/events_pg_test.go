package dashboard

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/dbtest"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// On Postgres two scoring batches run side by side: one that took its
// time first and commits last is still sent on the live stream.
func TestLiveSendsLateScoreOnPostgres(t *testing.T) {
	db := dbtest.Open(t, pgtest.URL(t))
	ctx := context.Background()
	o, err := core.NewOwner("late@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := gormstore.NewOwnerStore(db).CreateOwner(ctx, &o); err != nil {
		t.Fatal(err)
	}
	// A phrase each, so the two batches' daily counts are rows apart and
	// neither waits for the other's.
	var batch []ports.PostMatches
	for _, w := range []string{"acme", "zeta"} {
		p, err := core.NewPhrase(o.ID, w, "x", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gormstore.NewPhraseStore(db).CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 10}, ports.Idempotency{}); err != nil {
			t.Fatal(err)
		}
		batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: w, Author: "ada", Text: "looking for " + w, URL: "https://x.com/" + w}, PhraseIDs: []string{p.ID}})
	}
	matches := gormstore.NewMatchStore(db)
	saved, err := matches.SaveMatches(ctx, o.ID, core.X, batch)
	if err != nil || len(saved.Matches) != 2 {
		t.Fatalf("%v %v", saved, err)
	}
	early, late := saved.Matches[0], saved.Matches[1]
	newest := early.CreatedAt
	if late.CreatedAt.After(newest) {
		newest = late.CreatedAt
	}
	since := time.Now()

	// The early batch takes its time and waits, its transaction open, in
	// the delivery plan, which runs after the scores are written.
	inPlan, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := matches.SetScores(ctx, []ports.ScoreUpdate{{Match: early, Score: core.Score{Value: 70, Intent: core.IntentBuying, Reason: "asks"}}},
			func(core.Match, []core.Webhook, time.Time) []core.Delivery {
				close(inPlan)
				<-release
				return nil
			})
		done <- err
	}()
	<-inPlan
	if _, err := matches.SetScores(ctx, []ports.ScoreUpdate{{Match: late, Score: core.Score{Value: 60, Intent: core.IntentQuestion, Reason: "asks"}}}, nil); err != nil {
		t.Fatal(err)
	}

	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), LivePoll: 5 * time.Millisecond},
		Deps{Sessions: ownerSessions{owners: map[string]string{tok: o.ID}}, Inbox: app.NewInbox(gormstore.NewTriageStore(db)), Matches: fakeMatches{}, Phrases: fakePhrases{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	defer srv.Close()
	defer d.Close()
	// The page shows a match newer than both by more than the window, so
	// only their scores are news.
	after := newest.Add(2 * liveGrace)
	events := liveStream(t, srv, "after="+strconv.FormatInt(after.UnixMilli(), 10)+"&since="+strconv.FormatInt(since.UnixMicro(), 10), "")
	until(t, events, late.ID)
	// A poll after the later score was seen, then the earlier one commits.
	inbox := app.NewInbox(gormstore.NewTriageStore(db))
	_, scored, err := inbox.Changes(ctx, o.ID, ports.InboxQuery{}, after, since, liveBatch)
	if err != nil || len(scored) != 1 || scored[0].Match.ID != late.ID {
		t.Fatalf("before the early batch commits the store shows %v, %v", scored, err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	_, scored, err = inbox.Changes(ctx, o.ID, ports.InboxQuery{}, after, since, liveBatch)
	if err != nil || len(scored) != 2 || !scored[1].ScoredAt.Before(scored[0].ScoredAt) || scored[1].Match.ID != early.ID {
		t.Fatalf("the early batch did not commit last with the earlier time: %v, %v", scored, err)
	}
	until(t, events, early.ID)
}
