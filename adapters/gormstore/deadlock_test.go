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
