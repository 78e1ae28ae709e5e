package dashboard

// The stop link of an alert email, driven in Debian's Chromium: opened,
// its button pressed, and the Account page then saying alerts are off.
// Skipped without Chromium.

import (
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
)

func TestAlertsOffLinkInABrowser(t *testing.T) {
	w := newOffWorld(t)
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Sessions: ownerSessions{owners: map[string]string{tok: w.ana.ID}}, Phrases: fakePhrases{}, Addresses: &addresses{email: w.ana.Email},
			AlertSchedules: w.schedules, AlertsOff: w.alerts})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	ctx := browserAt(t, srv, 1024)

	open(t, ctx, srv.URL+app.AlertsOffPath+w.anaTok)
	if f := w.frequency(t, w.ana); f != core.AlertAtOnce {
		t.Fatalf("opening the link made the alerts %q", f)
	}
	if err := chromedp.Do(ctx, pageClick(`main form button[type="submit"]`),
		chromedp.WaitReady(chromedp.CSS(`main p[role="status"]`))); err != nil {
		t.Fatal(err)
	}
	if got := evalJS[string](t, ctx, `document.querySelector("main").innerText`); !strings.Contains(got, "Alert emails are off; turn them on again on the Account page.") {
		t.Fatalf("after the button: %q", got)
	}
	if err := chromedp.Do(ctx, pageClick(`main p[role="status"] a[href="/app/account"]`),
		chromedp.WaitReady(chromedp.CSS(`form[action="/app/account/alerts"]`))); err != nil {
		t.Fatal(err)
	}
	got := evalJS[string](t, ctx, `document.querySelector("main").innerText+"|"+document.querySelector('select[name="frequency"]').value`)
	if !strings.Contains(got, "Alert emails are off: matches still arrive") || !strings.HasSuffix(got, "|off") {
		t.Fatalf("the Account page: %q", got)
	}
}
