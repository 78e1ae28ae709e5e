package gormstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mattn/go-sqlite3"
	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// pools returns the pools under db's read and write handles.
func pools(t *testing.T, db *DB) (read, write *sql.DB) {
	t.Helper()
	ctx := context.Background()
	read, err := db.with(ctx).DB()
	if err == nil {
		write, err = db.write(ctx).DB()
	}
	if err != nil {
		t.Fatal(err)
	}
	return read, write
}

// A SQLite file writes through a pool of one connection beside a read
// pool of four; in memory and on Postgres one pool serves both.
func TestWritePool(t *testing.T) {
	for _, c := range []struct {
		name, url   string
		read, write int
	}{
		{"sqlite file", "sqlite://" + filepath.Join(t.TempDir(), "w.db"), 4, 1},
		{"sqlite memory", "sqlite://:memory:", 1, 1},
		{"postgres", "", 20, 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := c.url
			if url == "" {
				url = pgtest.URL(t)
			}
			db := openMigrated(t, url)
			read, write := pools(t, db)
			if n := read.Stats().MaxOpenConnections; n != c.read {
				t.Errorf("read pool holds up to %d connections, want %d", n, c.read)
			}
			if n := write.Stats().MaxOpenConnections; n != c.write {
				t.Errorf("write pool holds up to %d connections, want %d", n, c.write)
			}
			if shared := read == write; shared != (c.read == c.write) {
				t.Errorf("one pool for reads and writes: %v, want %v", shared, !shared)
			}
			if (db.writer == db.gorm) != (read == write) {
				t.Error("one pool but two handles, or two pools behind one handle")
			}
			if err := db.Ping(context.Background()); err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			for _, p := range []*sql.DB{read, write} {
				if err := p.Ping(); err == nil {
					t.Error("a pool still answers after Close")
				}
			}
		})
	}
}

// Writers at once on a SQLite file all get through: they queue for the
// one write connection, none gives up in SQLite's busy handler.
func TestManyWritersOnASQLiteFile(t *testing.T) {
	db := openMigrated(t, "sqlite://"+filepath.Join(t.TempDir(), "w.db"))
	ctx := context.Background()
	owners, phrases, matches := NewOwnerStore(db), NewPhraseStore(db), NewMatchStore(db)
	const writers, batches = 32, 5
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- func() error {
				o, _ := core.NewOwner(fmt.Sprintf("w%d@example.com", i), "")
				if err := owners.CreateOwner(ctx, &o); err != nil {
					return err
				}
				p, _ := core.NewPhrase(o.ID, "writers", "x", "")
				if _, err := phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 1}, ports.Idempotency{}); err != nil {
					return err
				}
				for b := range batches {
					post := core.Post{ExternalID: fmt.Sprint(b), Text: "many writers"}
					if _, err := matches.SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{{Post: post, PhraseIDs: []string{p.ID}}}); err != nil {
						return err
					}
				}
				return NewNotificationStore(db).AddNotification(ctx, &core.Notification{OwnerID: o.ID, Kind: core.NotificationKind("test"), Title: "t"})
			}()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		var lite sqlite3.Error
		if errors.As(err, &lite) && lite.Code == sqlite3.ErrBusy {
			t.Fatalf("a writer gave up on the lock: %v", err)
		} else if err != nil {
			t.Fatal(err)
		}
	}
	var n int64
	if err := db.with(ctx).Model(&matchRow{}).Count(&n).Error; err != nil || n != writers*batches {
		t.Fatalf("%d matches stored, %v; want %d", n, err, writers*batches)
	}
}

// While a transaction holds the write connection of a SQLite file, every
// write of the stores waits for it in the write pool's queue, in Go,
// rather than in SQLite's busy handler, and goes through once it ends.
func TestWritesQueueForTheWriter(t *testing.T) {
	db := openMigrated(t, "sqlite://"+filepath.Join(t.TempDir(), "w.db"))
	ctx := context.Background()
	_, write := pools(t, db)
	waits := func(t *testing.T, op func() error) {
		t.Helper()
		held, release, ended := make(chan struct{}), make(chan struct{}), make(chan error, 1)
		go func() {
			ended <- db.write(ctx).Transaction(func(tx *gorm.DB) error {
				close(held)
				<-release
				return nil
			})
		}()
		select {
		case <-held:
		case err := <-ended:
			t.Fatalf("holding the writer: %v", err)
		}
		before := write.Stats().WaitCount
		done := make(chan error, 1)
		go func() { done <- op() }()
		for write.Stats().WaitCount == before {
			select {
			case err := <-done:
				close(release)
				<-ended
				t.Fatalf("ended (%v) while a transaction held the writer: it did not queue for the write connection", err)
			case <-time.After(time.Millisecond):
			}
		}
		close(release)
		if err := <-ended; err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}

	now := time.Now().UTC().Truncate(time.Microsecond)
	seal := func(id string) ([]byte, error) { return []byte("sealed:" + id), nil }
	allow := func(core.Usage) error { return nil }
	owners, sessions, keys := NewOwnerStore(db), NewSessionStore(db), NewKeyStore(db)
	phrases, matches, triage := NewPhraseStore(db), NewMatchStore(db), NewTriageStore(db)
	alerts, accounts, notes := NewAlertStore(db), NewAccountStore(db), NewNotificationStore(db)
	hooks, channels, recent := NewWebhookStore(db), NewChannelStore(db), NewRecentStore(db)
	archives, reddit, leases, limiter := NewFilterArchiveStore(db), NewRedditStore(db), NewLeaseStore(db), NewRateLimiter(db)

	// What the writes work on, made before the writer is held.
	o, _ := core.NewOwner("queue@example.com", "")
	if err := owners.CreateOwner(ctx, &o); err != nil {
		t.Fatal(err)
	}
	p, _ := core.NewPhrase(o.ID, "queue", "x", "")
	if _, err := phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 10}, ports.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	keep := &ports.RecentKeep{SeenAt: now.Add(-time.Hour)}
	saved, err := matches.SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{
		{Post: core.Post{ExternalID: "1", Text: "queue one"}, PhraseIDs: []string{p.ID}, Keep: keep},
		{Post: core.Post{ExternalID: "2", Text: "queue two"}, PhraseIDs: []string{p.ID}, Keep: keep},
	})
	if err != nil || len(saved.Matches) != 2 {
		t.Fatalf("SaveMatches: %+v, %v", saved, err)
	}
	m := saved.Matches[0]
	w := core.Webhook{OwnerID: o.ID, URL: "https://hooks.example.com/queue", Active: true}
	if err := hooks.CreateWebhook(ctx, &w, allow, seal); err != nil {
		t.Fatal(err)
	}
	ch := core.Webhook{OwnerID: o.ID, URL: "https://chat.example.com/queue", Active: true, Kind: core.ChannelSlack,
		Schedule: core.AlertSchedule{Frequency: core.AlertHourly}}
	if err := channels.CreateChannel(ctx, &ch, allow, seal); err != nil {
		t.Fatal(err)
	}
	newDelivery := func(status core.DeliveryStatus) core.Delivery {
		return core.Delivery{ID: hooks.NewDeliveryID(), WebhookID: w.ID, OwnerID: o.ID, MatchID: m.ID, Event: core.EventMatchCreated,
			Trigger: core.TriggerPing, Status: status, Payload: []byte("{}"), CreatedAt: now.Add(-time.Minute)}
	}
	failed := newDelivery(core.DeliveryFailed)
	if err := hooks.AddDelivery(ctx, failed, 0); err != nil {
		t.Fatal(err)
	}
	var due []ports.DueDelivery
	var (
		loginHash, changeHash = "login-hash", "change-hash"
		session               = core.Session{Hash: "session-hash", OwnerID: o.ID, CreatedAt: now, LastSeenAt: now}
		key                   = core.Key{OwnerID: o.ID, Kind: core.APIKey, Name: "queue", Hash: "key-hash", Scopes: []core.Scope{}}
		account               core.Account
		note                  = core.Notification{OwnerID: o.ID, Kind: core.NotificationKind("test"), Title: "t", Email: true}
		set                   core.ArchiveSet
	)
	for _, c := range []struct {
		name string
		op   func() error
	}{
		{"CreateOwner", func() error { o2, _ := core.NewOwner("queue2@example.com", ""); return owners.CreateOwner(ctx, &o2) }},
		{"UpdateOwner", func() error { o.Name = "Queue"; return owners.UpdateOwner(ctx, o) }},
		{"CreateEmailChange", func() error {
			return owners.CreateEmailChange(ctx, core.EmailChange{Hash: changeHash, OwnerID: o.ID, Email: "queue3@example.com", CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
		}},
		{"UseEmailChange", func() error { _, _, err := owners.UseEmailChange(ctx, changeHash, now); return err }},
		{"CreateLoginLink", func() error {
			return sessions.CreateLoginLink(ctx, core.LoginLink{Hash: loginHash, OwnerID: o.ID, CreatedAt: now, ExpiresAt: now.Add(time.Hour)})
		}},
		{"UseLoginLink", func() error { _, err := sessions.UseLoginLink(ctx, loginHash, now); return err }},
		{"CreateSession", func() error { return sessions.CreateSession(ctx, &session) }},
		{"TouchSession", func() error { return sessions.TouchSession(ctx, session.ID, now.Add(time.Second)) }},
		{"DeleteSession", func() error { return sessions.DeleteSession(ctx, session.Hash) }},
		{"DeleteSessions", func() error { _, err := sessions.DeleteSessions(ctx, o.ID); return err }},
		{"DeleteIdleSessions", func() error { _, err := sessions.DeleteIdleSessions(ctx, now); return err }},
		{"CreateKey", func() error { return keys.CreateKey(ctx, &key, 10) }},
		{"MarkKeyUsed", func() error { return keys.MarkKeyUsed(ctx, key.ID, now) }},
		{"RevokeKey", func() error { return keys.RevokeKey(ctx, o.ID, key.ID, now) }},
		{"CreatePhrase", func() error {
			p2, _ := core.NewPhrase(o.ID, "queue two", "x", "")
			_, err := phrases.CreatePhrase(ctx, &p2, core.Limits{PhrasesPerPlatform: 10}, ports.Idempotency{})
			return err
		}},
		{"UpdatePhrase", func() error {
			st := core.Listening
			_, err := phrases.UpdatePhrase(ctx, o.ID, p.ID, ports.PhraseChange{Status: &st})
			return err
		}},
		{"SetPhraseStatus", func() error { _, err := phrases.SetPhraseStatus(ctx, o.ID, p.ID, core.Listening); return err }},
		{"MarkChecked", func() error { return phrases.MarkChecked(ctx, []string{p.ID}, core.Source("test"), now) }},
		{"SaveMatches", func() error {
			_, err := matches.SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{{Post: core.Post{ExternalID: "3", Text: "queue three"}, PhraseIDs: []string{p.ID}}})
			return err
		}},
		{"SetScores", func() error {
			_, err := matches.SetScores(ctx, []ports.ScoreUpdate{{Match: m, Score: core.Score{Value: 90, Intent: core.IntentBuying, Reason: "r"}}}, nil)
			return err
		}},
		{"SetTriage", func() error {
			yes := true
			_, err := triage.SetTriage(ctx, o.ID, []string{m.ID}, core.TriageChange{Read: &yes})
			return err
		}},
		{"MarkEmailed alerts", func() error { return alerts.MarkEmailed(ctx, o.ID, []string{m.ID}, now) }},
		{"SetAlertSchedule", func() error {
			return alerts.SetAlertSchedule(ctx, o.ID, core.AlertSchedule{Frequency: core.AlertHourly})
		}},
		{"EnsureAccount", func() (err error) {
			account, err = accounts.EnsureAccount(ctx, o.ID, core.X, core.Limits{AccountsPerPlatform: 1})
			return err
		}},
		{"SetSession", func() error { return accounts.SetSession(ctx, o.ID, account.ID, []byte("jar")) }},
		{"UpdateHealth", func() error {
			_, err := accounts.UpdateHealth(ctx, o.ID, account.ID, func(ports.AccountHealth) (health.Record, *core.Notification, error) {
				return health.Record{LastCheckedAt: now}, nil, nil
			})
			return err
		}},
		{"AddNotification", func() error { return notes.AddNotification(ctx, &note) }},
		{"MarkRead", func() error { return notes.MarkRead(ctx, o.ID, note.ID, now) }},
		{"MarkAllRead", func() error { _, err := notes.MarkAllRead(ctx, o.ID, now); return err }},
		{"ClaimUnscored", func() error { _, err := matches.ClaimUnscored(ctx, 1, time.Minute); return err }},
		{"ClaimEmails", func() error { _, err := notes.ClaimEmails(ctx, 10, time.Minute); return err }},
		{"MarkEmailed notifications", func() error { return notes.MarkEmailed(ctx, note.ID, now) }},
		{"CreateWebhook", func() error {
			w2 := core.Webhook{OwnerID: o.ID, URL: "https://hooks.example.com/queue2", Active: true}
			return hooks.CreateWebhook(ctx, &w2, allow, seal)
		}},
		{"UpdateWebhook", func() error {
			_, err := hooks.UpdateWebhook(ctx, o.ID, w.ID, func(w core.Webhook) (core.Webhook, error) { w.MinScore = 10; return w, nil })
			return err
		}},
		{"RotateSecret", func() error { _, err := hooks.RotateSecret(ctx, o.ID, w.ID, now, seal); return err }},
		{"ForgetPreviousSecrets", func() error { _, err := hooks.ForgetPreviousSecrets(ctx, now); return err }},
		{"AddDelivery", func() error { return hooks.AddDelivery(ctx, newDelivery(core.DeliveryQueued), 10) }},
		{"UpdateDelivery", func() error {
			_, err := hooks.UpdateDelivery(ctx, o.ID, w.ID, failed.ID, func(d core.Delivery) (core.Delivery, error) { return d, nil })
			return err
		}},
		{"ReplayDeliveries", func() error {
			_, err := hooks.ReplayDeliveries(ctx, o.ID, w.ID, ports.ReplayQuery{From: now.Add(-time.Hour), To: now, Limit: 10},
				func(core.Webhook, []core.Delivery, time.Time) ([]core.Delivery, error) { return nil, nil })
			return err
		}},
		{"ClaimDeliveries", func() (err error) {
			due, err = hooks.ClaimDeliveries(ctx, ports.DeliveryClaim{Limit: 10, Lease: time.Minute})
			return err
		}},
		{"FinishAttempts", func() error { _, err := hooks.FinishAttempts(ctx, nil, ports.AttemptRules{}); return err }},
		{"ReleaseDeliveries", func() error { return hooks.ReleaseDeliveries(ctx, due) }},
		{"ClaimBurst", func() error { _, err := hooks.ClaimBurst(ctx, ch.ID, 10, time.Minute); return err }},
		{"DropDelivery", func() error {
			if len(due) == 0 {
				return errors.New("nothing claimed to drop")
			}
			return hooks.DropDelivery(ctx, due[0])
		}},
		{"UpdateChannel", func() error {
			_, err := channels.UpdateChannel(ctx, o.ID, ch.ID, func(w core.Webhook, _ []byte) (core.Webhook, []byte, error) { return w, nil, nil })
			return err
		}},
		{"AddDigest", func() error { _, err := channels.AddDigest(ctx, ch, now, nil, 10); return err }},
		{"RequestBackfill", func() error { return recent.RequestBackfill(ctx, p.ID, now) }},
		{"SaveBackfill", func() error { _, err := recent.SaveBackfill(ctx, p, nil); return err }},
		{"EndBackfill", func() error { return recent.EndBackfill(ctx, p.ID) }},
		{"IndexRecent", func() error {
			posts, err := recent.Unindexed(ctx, 10)
			if err != nil || len(posts) == 0 {
				return fmt.Errorf("no post to index: %v", err)
			}
			return recent.IndexRecent(ctx, []ports.RecentWords{{Seq: posts[0].Seq, Words: "queue one"}})
		}},
		{"TrimRecent", func() error { _, err := recent.TrimRecent(ctx, now, 0, 10); return err }},
		{"ArchiveSet", func() (err error) { set, err = archives.ArchiveSet(ctx, o.ID, p.ID, []string{m.ID}, now); return err }},
		{"RestoreArchiveSet", func() error { _, err := archives.RestoreArchiveSet(ctx, o.ID, set.ID); return err }},
		{"SaveRedditCheckpoints", func() error {
			return reddit.SaveRedditCheckpoints(ctx, []ports.RedditCheckpoint{{Community: "golang", Listing: ports.RedditPosts, Until: now}})
		}},
		{"Acquire", func() error { _, err := leases.Acquire(ctx, "queue", "me", time.Minute); return err }},
		{"Release", func() error { return leases.Release(ctx, "queue", "me") }},
		{"Take", func() error { _, err := limiter.Take(ctx, "queue", 10); return err }},
		{"SweepRateWindows", func() error { return limiter.SweepRateWindows(ctx) }},
		{"DeleteWebhook", func() error { return hooks.DeleteWebhook(ctx, o.ID, w.ID) }},
		{"DeletePhrase", func() error { return phrases.DeletePhrase(ctx, o.ID, p.ID) }},
		{"Migrate", func() error { return db.Migrate(ctx) }},
	} {
		if !t.Run(c.name, func(t *testing.T) { waits(t, c.op) }) {
			return // the next would wait as long in the busy handler
		}
	}
}
