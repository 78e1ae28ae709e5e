package gormstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// A burst of 1,000 delivered in one message updates on Postgres no more
// rows than the log keeps: the rest, which the log's trim deletes in the
// same transaction, are deleted without being updated first, so they
// add no index entries to be deleted with them.
func TestFinishBurstUpdatesOnlyTheLog(t *testing.T) {
	ctx := context.Background()
	db := open(t, pgtest.URL(t))
	pool := db.SQL()
	// One connection: the statistics below are this backend's, and
	// pg_stat_force_next_flush sends them when it next goes idle.
	pool.SetMaxOpenConns(1)
	var version int
	if err := pool.QueryRow(`SELECT current_setting('server_version_num')::int`).Scan(&version); err != nil {
		t.Fatal(err)
	}
	const n = 1000
	for _, q := range []string{
		`INSERT INTO owners (id, email, created_at) VALUES ('o1', 'a@example.com', 0)`,
		`INSERT INTO webhooks (id, owner_id, url, min_score, active, secret, created_at) VALUES ('w1', 'o1', 'https://hooks.example.com/', 0, true, '\x00', 0)`,
		`INSERT INTO webhook_deliveries (id, webhook_id, owner_id, match_id, event, trigger_kind, status, created_at, next_attempt_at)
			SELECT 'd' || lpad(i::text, 35, '0'), 'w1', 'o1', 'm' || lpad(i::text, 35, '0'), 'match.created', 'scheduled', 'queued', i, i
			FROM generate_series(1, 1000) i`,
	} {
		if _, err := pool.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	store := gormstore.NewWebhookStore(db)
	due, err := store.ClaimBurst(ctx, "w1", n, time.Hour)
	if err != nil || len(due) != n {
		t.Fatalf("ClaimBurst = %d, %v", len(due), err)
	}
	// The counts of webhook_deliveries once they include a change: the
	// claim's leases, then the record's deletes.
	type counts struct{ upd, hot, del int64 }
	await := func(what string, ok func(counts) bool) counts {
		t.Helper()
		var c counts
		for deadline := time.Now().Add(30 * time.Second); ; {
			if version >= 150000 {
				if _, err := pool.Exec(`SELECT pg_stat_force_next_flush()`); err != nil {
					t.Fatal(err)
				}
			}
			err := pool.QueryRow(`SELECT n_tup_upd, n_tup_hot_upd, n_tup_del FROM pg_stat_user_tables
				WHERE relid = 'webhook_deliveries'::regclass`).Scan(&c.upd, &c.hot, &c.del)
			if err != nil {
				t.Fatal(err)
			}
			if ok(c) {
				return c
			}
			if time.Now().After(deadline) {
				t.Fatalf("statistics still without %s after 30 s: %+v", what, c)
			}
			<-time.After(50 * time.Millisecond) // before 15, a backend sends them within a second of idling
		}
	}
	claimed := await("the claim", func(c counts) bool { return c.upd >= n })
	// Migration 28 leaves room on the pages for leases.
	if claimed.hot < n/4 {
		t.Errorf("%d of the claim's %d lease updates stayed on their page, want at least %d", claimed.hot, claimed.upd, n/4)
	}
	var attempts []ports.Attempt
	at := time.Now().UTC()
	for _, d := range due {
		attempts = append(attempts, ports.Attempt{Due: d, Delivery: d.Delivery.Attempted(nil, 204, "", at, 0)})
	}
	rules := ports.AttemptRules{Webhook: core.Webhook.AfterDelivery, KeepLog: core.DeliveryLogSize}
	res, err := store.FinishAttempts(ctx, attempts, rules)
	if err != nil || len(res) != n || !res[0].Recorded || !res[n-1].Recorded {
		t.Fatalf("FinishAttempts = %d results, %v", len(res), err)
	}
	finished := await("the record", func(c counts) bool { return c.del-claimed.del >= n-core.DeliveryLogSize })
	if upd := finished.upd - claimed.upd; upd > core.DeliveryLogSize {
		t.Fatalf("recording a burst of %d updated %d rows, want at most the log's %d", n, upd, core.DeliveryLogSize)
	}
	log, err := store.Deliveries(ctx, "o1", "w1", 100)
	if err != nil || len(log) != core.DeliveryLogSize || log[0].ID != due[n-1].Delivery.ID || log[0].Status != core.DeliveryDelivered {
		t.Fatalf("the log after the burst: %d deliveries, %v", len(log), err)
	}
}

// Recording a webhook's outcome holds its row against other changes to
// it, not against the deliveries being queued for it meanwhile: a new
// delivery's foreign key check takes a key-share lock on the webhook,
// which a FOR UPDATE would make wait for the whole record (a burst's is
// a thousand rows), and the scorer with it.
func TestRecordLeavesNewDeliveriesAlone(t *testing.T) {
	ctx := context.Background()
	db := open(t, pgtest.URL(t))
	pool := db.SQL()
	for _, q := range []string{
		`INSERT INTO owners (id, email, created_at) VALUES ('o1', 'a@example.com', 0)`,
		`INSERT INTO webhooks (id, owner_id, url, min_score, active, secret, created_at) VALUES ('w1', 'o1', 'https://hooks.example.com/', 0, true, '\x00', 0)`,
		`INSERT INTO webhook_deliveries (id, webhook_id, owner_id, match_id, event, trigger_kind, status, created_at, next_attempt_at)
			VALUES ('d1', 'w1', 'o1', 'm1', 'match.created', 'scheduled', 'queued', 1, 1)`,
	} {
		if _, err := pool.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	store := gormstore.NewWebhookStore(db)
	due, err := store.ClaimBurst(ctx, "w1", 1, time.Hour)
	if err != nil || len(due) != 1 {
		t.Fatalf("ClaimBurst = %d, %v", len(due), err)
	}
	locked, release := make(chan struct{}), make(chan struct{})
	rules := ports.AttemptRules{KeepLog: core.DeliveryLogSize, Webhook: func(w core.Webhook, d core.Delivery) core.Webhook {
		close(locked) // called with the webhook's row locked, before the commit
		<-release
		return w.AfterDelivery(d)
	}}
	recorded := make(chan error, 1)
	go func() {
		a := ports.Attempt{Due: due[0], Delivery: due[0].Delivery.Attempted(nil, 204, "", time.Now().UTC(), 0)}
		_, err := store.FinishAttempts(ctx, []ports.Attempt{a}, rules)
		recorded <- err
	}()
	<-locked
	inserted := make(chan error, 1)
	go func() {
		_, err := pool.Exec(`INSERT INTO webhook_deliveries (id, webhook_id, owner_id, match_id, event, trigger_kind, status, created_at, next_attempt_at)
			VALUES ('queued-meanwhile', 'w1', 'o1', 'm2', 'match.created', 'scheduled', 'queued', 2, 2)`)
		inserted <- err
	}()
	// Either the insert ends, or Postgres shows it waiting for a lock.
	for waiting := false; !waiting; {
		select {
		case err := <-inserted:
			if err != nil {
				t.Fatal(err)
			}
			close(release)
			if err := <-recorded; err != nil {
				t.Fatal(err)
			}
			return
		case <-time.After(10 * time.Millisecond):
		}
		if err := pool.QueryRow(`SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE '%queued-meanwhile%')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	<-recorded
	<-inserted
	t.Fatal("a delivery queued for the webhook waited for the record of another's outcome")
}
