package app

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/smtpmail"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/mailtest"
)

// records hands every log record carrying an "emails" count to a
// channel, so a test waits for the sweep's summary line rather than for
// time.
type records chan slog.Record

func (c records) Enabled(context.Context, slog.Level) bool { return true }
func (c records) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c records) WithGroup(string) slog.Handler            { return c }
func (c records) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "emails" {
			select {
			case c <- r:
			default: // the test reads the first only
			}
			return false
		}
		return true
	})
	return nil
}

// summary waits for the first record with an emails count.
func summary(t *testing.T, c records) string {
	t.Helper()
	select {
	case r := <-c:
		return r.Message
	case <-time.After(10 * time.Second):
		t.Fatal("no summary line logged")
		return ""
	}
}

// mailers are the two mailers a deployment can have: the log's, when no
// mail server is set, and SMTP (the mailtest server speaks SMTP as a
// relay does).
func mailers(t *testing.T) map[string]ports.Mailer {
	smtp, err := smtpmail.New(mailtest.NewServer(t).URL(), "alerts@earshot.test", quiet)
	if err != nil {
		t.Fatal(err)
	}
	return map[string]ports.Mailer{"log": smtpmail.NewLogMailer(quiet), "smtp": smtp}
}

// The sweeps' summary says "sent" only of mail a server took: with no
// mail server the mail went to the log, and the line says so.
var wantSummary = map[string]map[string]string{
	"alerts": {
		"log":  "alert emails written to the log, not sent (no SMTP server configured)",
		"smtp": "alert emails sent",
	},
	"notifications": {
		"log":  "notification emails written to the log, not sent (no SMTP server configured)",
		"smtp": "notification emails sent",
	},
}

func TestAlertSummarySaysWhatHappened(t *testing.T) {
	t.Parallel()
	for name, mailer := range mailers(t) {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			scoredMatches(t, w, w.owner(t, "ana@example.com"), 90)
			c := make(records, 1)
			a := NewAlerts(AlertDeps{Store: gormstore.NewAlertStore(w.db), Leases: w.leases, Mailer: mailer, Log: slog.New(c), Holder: "h1"},
				AlertConfig{MinScore: 70, SiteURL: func() string { return "http://127.0.0.1:8080" }})
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { a.Run(ctx, time.Millisecond); close(done) }()
			got := summary(t, c)
			cancel()
			<-done
			if want := wantSummary["alerts"][name]; got != want {
				t.Errorf("summary %q, want %q", got, want)
			}
		})
	}
}

func TestNotificationSummarySaysWhatHappened(t *testing.T) {
	t.Parallel()
	for name, mailer := range mailers(t) {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			o := w.owner(t, "ana@example.com")
			c := make(records, 1)
			n := NewNotifications(NotificationDeps{Store: gormstore.NewNotificationStore(w.db), Owners: gormstore.NewOwnerStore(w.db),
				Mailer: mailer, Log: slog.New(c)}, func() string { return "http://earshot.test" })
			ctx, cancel := context.WithCancel(context.Background())
			hook := core.Webhook{ID: "w1", OwnerID: o.ID, URL: "https://hooks.example.com/in", DisabledReason: "5 failed deliveries in a row"}
			if err := n.WebhookSwitchedOff(ctx, hook); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			go func() { n.Run(ctx, time.Hour); close(done) }()
			got := summary(t, c)
			cancel()
			<-done
			if want := wantSummary["notifications"][name]; got != want {
				t.Errorf("summary %q, want %q", got, want)
			}
		})
	}
}
