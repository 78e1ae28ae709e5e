package app

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// stopDuringSend is a mail server that accepts each message just as the
// process is told to stop: the sweep's context ends during the send.
type stopDuringSend struct {
	alertBox
	stop context.CancelFunc
}

func (b *stopDuringSend) Send(ctx context.Context, m ports.Mail) error {
	b.stop()
	return b.alertBox.Send(ctx, m)
}

// An alert the mail server accepted is marked emailed even when the
// process is told to stop during the send: otherwise the next start
// mails the same matches again.
func TestAlertAcceptedDuringStopIsNotSentAgain(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		clock := &handClock{now: time.Date(2026, 1, 10, 10, 0, 0, 0, time.UTC)}
		store := gormstore.NewAlertStore(w.db)
		o := w.owner(t, "stop@example.com")
		scoredMatches(t, w, o, 90, 80)

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		box := &stopDuringSend{stop: cancel}
		alerts := alertService(w, store, box, clock)
		alerts.Sweep(ctx)
		if got := box.take(o.Email); len(got) != 1 {
			t.Fatalf("%d emails at the sweep that stopped, want 1", len(got))
		}
		if ms, err := store.PendingAlerts(context.Background(), o.ID, 70, 100); err != nil || len(ms) != 0 {
			t.Fatalf("%d matches still pending after the mail server accepted them (%v): the next start mails them again", len(ms), err)
		}
	})
}

// A notification email the mail server accepted is marked emailed even
// when the process is told to stop during the send: otherwise it goes
// out again once its claim runs out.
func TestNotificationEmailAcceptedDuringStopIsNotSentAgain(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		o := w.owner(t, "stopnote@example.com")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		box := &stopDuringSend{stop: cancel}
		notes := newNotes(w, box)
		hook := core.Webhook{ID: "wh_1", OwnerID: o.ID, URL: "https://hooks.example.com/a", DisabledReason: "switched off at once"}
		if err := notes.WebhookSwitchedOff(context.Background(), hook); err != nil {
			t.Fatal(err)
		}
		notes.SendEmails(ctx)
		if got := box.take(o.Email); len(got) != 1 {
			t.Fatalf("%d emails at the send that stopped, want 1", len(got))
		}
		expireEmailLeases(t, w)
		again := &alertBox{}
		if _, err := newNotes(w, again).SendEmails(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := again.take(o.Email); len(got) != 0 {
			t.Fatalf("the email the server accepted went out %d more times", len(got))
		}
	})
}
