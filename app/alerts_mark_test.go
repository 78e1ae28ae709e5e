package app

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// failOnce fails its first call, as a database that drops a connection
// or is busy for a moment does, before anything is written.
type failOnce struct {
	mu     sync.Mutex
	failed bool
}

func (f *failOnce) fail() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failed {
		return nil
	}
	f.failed = true
	return errors.New("connection reset by peer")
}

// markFailsOnce is an alert store whose first MarkEmailed fails.
type markFailsOnce struct {
	ports.AlertStore
	failOnce
}

func (s *markFailsOnce) MarkEmailed(ctx context.Context, ownerID string, ids []string, at time.Time) error {
	if err := s.fail(); err != nil {
		return err
	}
	return s.AlertStore.MarkEmailed(ctx, ownerID, ids, at)
}

// An alert the mail server accepted is marked emailed though the first
// write of the mark fails for a moment: left pending, its matches went
// out again in the next sweep's email.
func TestAlertMarkFailingOnceIsNotSentAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	clock := &handClock{now: time.Date(2026, 1, 10, 10, 0, 0, 0, time.UTC)}
	store := &markFailsOnce{AlertStore: gormstore.NewAlertStore(w.db)}
	o := w.owner(t, "mark@example.com")
	scoredMatches(t, w, o, 90, 80)
	box := &alertBox{}
	alerts := alertService(w, store, box, clock)
	alerts.Sweep(ctx)
	clock.now = clock.now.Add(time.Hour)
	alerts.Sweep(ctx)
	if got := box.take(o.Email); len(got) != 1 {
		t.Fatalf("%d emails of the same matches, want 1", len(got))
	}
}

// noteMarkFailsOnce is a notification store whose first MarkEmailed
// fails.
type noteMarkFailsOnce struct {
	ports.NotificationStore
	failOnce
}

func (s *noteMarkFailsOnce) MarkEmailed(ctx context.Context, id string, at time.Time) error {
	if err := s.fail(); err != nil {
		return err
	}
	return s.NotificationStore.MarkEmailed(ctx, id, at)
}

// A notification email the mail server accepted is marked emailed though
// the first write of the mark fails for a moment: left owed, it went out
// again once its claim ran out.
func TestNotificationMarkFailingOnceIsNotSentAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	o := w.owner(t, "notemark@example.com")
	box := &alertBox{}
	notes := newNotes(w, box)
	notes.store = &noteMarkFailsOnce{NotificationStore: notes.store}
	if err := notes.WebhookSwitchedOff(ctx, core.Webhook{ID: "wh_1", OwnerID: o.ID, URL: "https://hooks.example.com/a", DisabledReason: "switched off at once"}); err != nil {
		t.Fatal(err)
	}
	notes.SendEmails(ctx)
	expireEmailLeases(t, w)
	notes.SendEmails(ctx)
	if got := box.take(o.Email); len(got) != 1 {
		t.Fatalf("the email went out %d times, want 1", len(got))
	}
}
