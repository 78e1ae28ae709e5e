package gormstore

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// A match scored in a digest's period by a batch not yet committed when
// the digest reads is in that digest: the read waits for the batch. Read
// without it, the match would be in no digest, the next period starting
// at the end of this one, after the match's scored_at.
func TestDigestWaitsForScoringUnderWay(t *testing.T) {
	for dialect, url := range dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			db := openMigrated(t, url)
			o, _, ms := trendFixture(t, db, 1)

			// The batch stops inside its transaction, its time taken.
			inside, release := make(chan time.Time, 1), make(chan struct{})
			plan := func(m core.Match, hooks []core.Webhook, at time.Time) []core.Delivery {
				inside <- at
				<-release
				return nil
			}
			scored := make(chan error, 1)
			go func() {
				_, err := NewMatchStore(db).SetScores(ctx, []ports.ScoreUpdate{{Match: ms[0],
					Score: core.Score{Value: 80, Intent: core.IntentBuying, Reason: "r"}}}, plan)
				scored <- err
			}()
			var at time.Time
			select {
			case at = <-inside:
			case err := <-scored:
				t.Fatalf("SetScores ended before its plan: %v", err)
			}

			type digest struct {
				ms    []core.Match
				total int
				err   error
			}
			read := make(chan digest, 1)
			go func() {
				ch := core.Webhook{OwnerID: o.ID}
				ms, total, err := NewChannelStore(db).DigestMatches(ctx, ch, at.Add(-time.Hour), at.Add(time.Microsecond), 10)
				read <- digest{ms, total, err}
			}()
			for !digestWaits(t, db) {
				select {
				case d := <-read:
					close(release)
					t.Fatalf("the digest read beside a batch under way: %d matches (%v), want it to wait for the batch", d.total, d.err)
				case <-time.After(10 * time.Millisecond):
				}
			}
			close(release)
			if err := <-scored; err != nil {
				t.Fatal(err)
			}
			d := <-read
			if d.err != nil || d.total != 1 || len(d.ms) != 1 || d.ms[0].ID != ms[0].ID {
				t.Fatalf("the digest: %d %+v, %v; want the match scored", d.total, d.ms, d.err)
			}
		})
	}
}

// digestWaits reports whether a digest's read waits for the scoring under
// way: on Postgres for the scoring lock, on a SQLite file for the writer.
func digestWaits(t *testing.T, db *DB) bool {
	t.Helper()
	if !db.postgres {
		return db.pools[1].Stats().WaitCount > 0
	}
	var n int
	if err := db.SQL().QueryRow(`SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid = 0 AND objid = $1 AND objsubid = 1`, scoringKey).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// A barrier serves every later read whose period ended before it was
// asked for: a sweep that ends many periods at one time holds scoring up
// once, not once a channel. The second read here ends where the first
// did, so it reads at once beside a batch under way, whose time is later.
func TestOneBarrierServesTheSweep(t *testing.T) {
	for dialect, url := range dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			db := openMigrated(t, url)
			o, _, ms := trendFixture(t, db, 1)
			ch, to := core.Webhook{OwnerID: o.ID}, time.Now()
			if _, _, err := NewChannelStore(db).DigestMatches(ctx, ch, to.Add(-time.Hour), to, 10); err != nil {
				t.Fatal(err)
			}

			inside, release := make(chan struct{}, 1), make(chan struct{})
			plan := func(core.Match, []core.Webhook, time.Time) []core.Delivery {
				inside <- struct{}{}
				<-release
				return nil
			}
			scored := make(chan error, 1)
			go func() {
				_, err := NewMatchStore(db).SetScores(ctx, []ports.ScoreUpdate{{Match: ms[0],
					Score: core.Score{Value: 80, Intent: core.IntentBuying, Reason: "r"}}}, plan)
				scored <- err
			}()
			<-inside
			defer func() {
				close(release)
				if err := <-scored; err != nil {
					t.Error(err)
				}
			}()
			read := make(chan error, 1)
			go func() {
				_, _, err := NewChannelStore(db).DigestMatches(ctx, ch, to.Add(-time.Hour), to, 10)
				read <- err
			}()
			for {
				select {
				case err := <-read:
					if err != nil {
						t.Fatal(err)
					}
					return
				case <-time.After(10 * time.Millisecond):
					if digestWaits(t, db) {
						t.Fatal("the second read of the sweep waited for a batch that took its time after the sweep's")
					}
				}
			}
		})
	}
}
