package gormstore

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// waitBlockedOrDone waits until n backends wait for a lock behind pid,
// directly or behind one that does, or until the call under test that
// done reports ends; it returns that call's error, or nil with ok false
// when the call still runs.
func waitBlockedOrDone(t *testing.T, pool *sql.DB, pid, n int, done <-chan error) (err error, ok bool) {
	t.Helper()
	for {
		var blocked int
		if err := pool.QueryRow(`WITH b AS (SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)))
			SELECT COUNT(*) FROM pg_stat_activity WHERE pid IN (SELECT pid FROM b) OR pg_blocking_pids(pid) && ARRAY(SELECT pid FROM b)`,
			pid).Scan(&blocked); err != nil {
			t.Fatal(err)
		}
		if blocked >= n {
			return nil, false
		}
		select {
		case err := <-done:
			return err, true
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// A phrase deleted on Postgres while a batch of scores stores its
// matches' first scores ends, as does the batch: neither is chosen as a
// deadlock's victim. The batch holds the match it scored; the delete
// holds the phrase, then waits for that match to cascade to it; the
// batch must not then wait for the phrase, which its daily counts refer
// to. Here the batch is held between the two by a lock on another
// phrase's old count, which it trims.
func TestPhraseDeletedBesideScoring(t *testing.T) {
	ctx := context.Background()
	db := openMigrated(t, pgtest.URL(t))
	o, p, ms := trendFixture(t, db, 1)
	other, _ := core.NewPhrase(o.ID, "other", "x", "")
	if _, err := NewPhraseStore(db).CreatePhrase(ctx, &other, core.Limits{PhrasesPerPlatform: 2}, ports.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().Exec(`INSERT INTO match_day_counts (owner_id, day, platform, intent, phrase_id, band0) VALUES ($1, 1, 'x', '', $2, 1)`,
		o.ID, other.ID); err != nil {
		t.Fatal(err)
	}
	pid, release := holdRows(t, db.SQL(), "SELECT 1 FROM match_day_counts WHERE phrase_id = $1 FOR UPDATE", other.ID)
	scored := make(chan error, 1)
	go func() {
		_, err := NewMatchStore(db).SetScores(ctx, []ports.ScoreUpdate{{Match: ms[0],
			Score: core.Score{Value: 90, Intent: core.IntentBuying, Reason: "r"}}}, core.QueueMatchCreated)
		scored <- err
	}()
	waitBlocked(t, db.SQL(), pid, 1, scored)
	deleted := make(chan error, 1)
	go func() { deleted <- NewPhraseStore(db).DeletePhrase(ctx, o.ID, p.ID) }()
	deleteErr, deleteEnded := waitBlockedOrDone(t, db.SQL(), pid, 2, deleted)
	release()
	if !deleteEnded {
		deleteErr = <-deleted
	}
	if err := <-scored; err != nil {
		t.Errorf("SetScores beside the phrase's deletion: %v", err)
	}
	if deleteErr != nil {
		t.Errorf("DeletePhrase beside a batch of scores: %v", deleteErr)
	}
	if _, err := NewPhraseStore(db).Phrase(ctx, o.ID, p.ID); !core.IsKind(err, core.KindNotFound) {
		t.Errorf("the phrase after its deletion: %v", err)
	}
}

// A webhook deleted on Postgres while the outcomes of its deliveries are
// recorded ends, as does the record: neither is chosen as a deadlock's
// victim, which would fail the user's delete, or leave every attempt of
// the record, other webhooks' too, to be sent again. The delete holds
// the webhook and then cascades to its deliveries; the record must not
// hold one of those deliveries and then wait for the webhook. Here the
// record is held by a lock on another webhook, the first it locks.
func TestWebhookDeletedBesideRecord(t *testing.T) {
	ctx := context.Background()
	db := openMigrated(t, pgtest.URL(t))
	o, _, _ := trendFixture(t, db, 1)
	hooks := NewWebhookStore(db)
	seal := func(id string) ([]byte, error) { return []byte("sealed:" + id), nil }
	var ws [2]core.Webhook // ids in creation order: the record locks ws[0] first
	for i := range ws {
		ws[i] = core.Webhook{OwnerID: o.ID, URL: "https://hooks.example.com/" + newID(), Active: true}
		if err := hooks.CreateWebhook(ctx, &ws[i], func(core.Usage) error { return nil }, seal); err != nil {
			t.Fatal(err)
		}
		d := core.Delivery{ID: newID(), WebhookID: ws[i].ID, OwnerID: o.ID, MatchID: newID(), Event: core.EventMatchCreated,
			Trigger: core.TriggerScheduled, Status: core.DeliveryQueued, CreatedAt: time.Now(), NextAttemptAt: time.Now().Add(-time.Second)}
		if err := hooks.AddDelivery(ctx, d, 0); err != nil {
			t.Fatal(err)
		}
	}
	due, err := hooks.ClaimDeliveries(ctx, ports.DeliveryClaim{Limit: 10, Lease: time.Hour})
	if err != nil || len(due) != 2 {
		t.Fatalf("ClaimDeliveries = %d, %v", len(due), err)
	}
	var attempts []ports.Attempt
	for _, d := range due {
		attempts = append(attempts, ports.Attempt{Due: d, Delivery: d.Delivery.Attempted(nil, 204, "", time.Now().UTC(), 0)})
	}
	rules := ports.AttemptRules{Webhook: func(w core.Webhook, d core.Delivery) core.Webhook { return w.AfterDelivery(d) }}
	pid, release := holdRows(t, db.SQL(), "SELECT 1 FROM webhooks WHERE id = $1 FOR UPDATE", ws[0].ID)
	recorded := make(chan error, 1)
	var results []ports.AttemptResult
	go func() {
		var err error
		results, err = hooks.FinishAttempts(ctx, attempts, rules)
		recorded <- err
	}()
	waitBlocked(t, db.SQL(), pid, 1, recorded)
	deleted := make(chan error, 1)
	go func() { deleted <- hooks.DeleteWebhook(ctx, o.ID, ws[1].ID) }()
	deleteErr, deleteEnded := waitBlockedOrDone(t, db.SQL(), pid, 2, deleted)
	release()
	if !deleteEnded {
		deleteErr = <-deleted
	}
	if err := <-recorded; err != nil {
		t.Fatalf("FinishAttempts beside a webhook's deletion: %v", err)
	}
	if deleteErr != nil {
		t.Fatalf("DeleteWebhook beside a record: %v", deleteErr)
	}
	for i, a := range attempts {
		if want := a.Delivery.WebhookID == ws[0].ID; results[i].Recorded != want {
			t.Errorf("attempt on %s recorded %v, want %v", a.Delivery.WebhookID, results[i].Recorded, want)
		}
	}
	if _, _, err := hooks.Webhook(ctx, o.ID, ws[1].ID); !core.IsKind(err, core.KindNotFound) {
		t.Errorf("the webhook after its deletion: %v", err)
	}
}

// Two batches of one owner on Postgres that share posts in other orders
// (two helpers reading one feed) both end: neither is chosen as a
// deadlock's victim, which would fail a helper's batch whole. Each
// inserts its posts, and an insert of a post another batch has inserted
// waits for that batch; taken in one order, no batch holds a post
// another holds it waiting for. Here the first batch is held, between
// its first post and the shared ones, by an insert of its second.
func TestBatchesSharingPostsInOtherOrders(t *testing.T) {
	ctx := context.Background()
	db := openMigrated(t, pgtest.URL(t))
	o, p, _ := trendFixture(t, db, 0)
	pid, release := holdRows(t, db.SQL(), "INSERT INTO posts (owner_id, platform, external_id, created_at) VALUES ($1, 'x', 'a-held', 0) RETURNING 1", o.ID)
	save := func(ids ...string) <-chan error {
		var batch []ports.PostMatches
		for _, id := range ids {
			batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: id, Text: "acme"}, PhraseIDs: []string{p.ID}})
		}
		done := make(chan error, 1)
		go func() {
			_, err := NewMatchStore(db).SaveMatches(ctx, o.ID, core.X, batch)
			done <- err
		}()
		return done
	}
	first := save("b", "a-held", "c")
	waitBlocked(t, db.SQL(), pid, 1, first)
	second := save("c", "b")
	secondErr, secondEnded := waitBlockedOrDone(t, db.SQL(), pid, 2, second)
	release()
	if !secondEnded {
		secondErr = <-second
	}
	if err := <-first; err != nil {
		t.Errorf("the first batch: %v", err)
	}
	if secondErr != nil {
		t.Errorf("the second batch: %v", secondErr)
	}
}
