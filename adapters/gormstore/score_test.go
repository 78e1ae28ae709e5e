package gormstore

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// A batch of scores larger than one statement holds is stored whole,
// each score on its own match.
func TestSetScoresInSeveralStatements(t *testing.T) {
	urls := map[string]string{"sqlite": "sqlite://:memory:"}
	if os.Getenv(pgtest.Env) != "" {
		urls["postgres"] = pgtest.URL(t)
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) { testSetScoresInSeveralStatements(t, url) })
	}
}

func testSetScoresInSeveralStatements(t *testing.T, url string) {
	ctx := context.Background()
	db := openMigrated(t, url)
	o := core.Owner{Email: "scores@example.com"}
	if err := NewOwnerStore(db).CreateOwner(ctx, &o); err != nil {
		t.Fatal(err)
	}
	p, _ := core.NewPhrase(o.ID, "acme", "x", "")
	if _, err := NewPhraseStore(db).CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 1}, ports.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	batch := make([]ports.PostMatches, 2345) // more than one statement of posts and of scores
	for i := range batch {
		batch[i] = ports.PostMatches{Post: core.Post{ExternalID: fmt.Sprint(i), Text: "acme"}, PhraseIDs: []string{p.ID}}
	}
	st := NewMatchStore(db)
	saved, err := st.SaveMatches(ctx, o.ID, core.X, batch)
	if err != nil {
		t.Fatal(err)
	}
	var updates []ports.ScoreUpdate
	for i, m := range saved.Matches {
		updates = append(updates, ports.ScoreUpdate{Match: m, Score: core.Score{Value: i % 101, Reason: m.ID}})
	}
	got, err := st.SetScores(ctx, updates, nil)
	if err != nil || len(got) != len(updates) {
		t.Fatalf("SetScores: %d scored of %d, %v", len(got), len(updates), err)
	}
	for i, u := range updates {
		m, err := st.Match(ctx, o.ID, u.Match.ID)
		if err != nil || m.Score == nil || m.Score.Value != i%101 || m.Score.Reason != m.ID {
			t.Fatalf("match %d: %+v, %v", i, m.Score, err)
		}
	}
}

// A webhook deleted while a batch of scores queues its deliveries, on
// Postgres, is not an error for the batch: the delete waits for it, or
// the batch finds the webhook gone and queues nothing for it. The delete
// queues for the webhook's row first, then the batch.
func TestWebhookDeletedBesideScoring(t *testing.T) {
	ctx := context.Background()
	db := openMigrated(t, pgtest.URL(t))
	o, _, ms := trendFixture(t, db, 1)
	hooks := NewWebhookStore(db)
	w := core.Webhook{OwnerID: o.ID, URL: "https://hooks.example.com/scored", Active: true}
	seal := func(id string) ([]byte, error) { return []byte("sealed:" + id), nil }
	if err := hooks.CreateWebhook(ctx, &w, func(core.Usage) error { return nil }, seal); err != nil {
		t.Fatal(err)
	}
	pid, release := holdRows(t, db.SQL(), "SELECT id FROM webhooks WHERE id = $1 FOR UPDATE", w.ID)
	ended := make(chan error, 2)
	go func() { ended <- hooks.DeleteWebhook(ctx, o.ID, w.ID) }()
	waitBlocked(t, db.SQL(), pid, 1, ended)
	go func() {
		_, err := NewMatchStore(db).SetScores(ctx, []ports.ScoreUpdate{{Match: ms[0],
			Score: core.Score{Value: 90, Intent: core.IntentBuying, Reason: "r"}}}, core.QueueMatchCreated)
		ended <- err
	}()
	waitBlocked(t, db.SQL(), pid, 2, ended)
	release()
	for range 2 {
		if err := <-ended; err != nil {
			t.Fatal(err)
		}
	}
	if got, err := NewMatchStore(db).Match(ctx, o.ID, ms[0].ID); err != nil || got.Score == nil {
		t.Fatalf("the match after: %+v, %v", got, err)
	}
}
