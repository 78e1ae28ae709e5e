package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
)

// The served program takes the stop link an alert email carries, keyed
// from EARSHOT_SECRET_KEY: opening it changes nothing, a mailbox
// provider's one-click POST (RFC 8058 3.2: from elsewhere, no cookie)
// turns the owner's alerts off, a forged one is a 404, and the request
// log writes none of their tokens.
func TestAlertsOffLinkServed(t *testing.T) {
	rig := newIsolationRig(t)
	ctx := context.Background()
	o, err := rig.svc.Owners.Create(ctx, "o@example.com", "o")
	if err != nil {
		t.Fatal(err)
	}
	// The rig's secret key, as the alert sweep makes its links.
	links, err := app.NewAlertLinks(strings.Repeat("k", 32))
	if err != nil {
		t.Fatal(err)
	}
	_, token, _ := strings.Cut(links.URL("http://earshot.test", o.ID), app.AlertsOffPath)
	forged := strings.Repeat("A", len(token))
	schedule := func() core.AlertFrequency {
		s, err := rig.svc.Alerts.Schedules().Schedule(ctx, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		return s.Frequency
	}
	send := func(method, token string) int {
		req := httptest.NewRequest(method, app.AlertsOffPath+token, strings.NewReader("List-Unsubscribe=One-Click"))
		if method == "POST" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Sec-Fetch-Site", "cross-site")
		}
		rec := httptest.NewRecorder()
		rig.root.ServeHTTP(rec, req)
		return rec.Code
	}
	if st := send("GET", token); st != http.StatusOK || schedule() != core.AlertAtOnce {
		t.Fatalf("GET: %d, alerts %q", st, schedule())
	}
	if st := send("POST", forged); st != http.StatusNotFound || schedule() != core.AlertAtOnce {
		t.Fatalf("forged POST: %d, alerts %q", st, schedule())
	}
	if st := send("POST", token); st != http.StatusOK || schedule() != core.AlertOff {
		t.Fatalf("one-click POST: %d, alerts %q", st, schedule())
	}
	logs := rig.logs.String()
	if !strings.Contains(logs, "path=/app/alerts/off/{token} status=404") || !strings.Contains(logs, "path=/app/alerts/off/{token} status=200") {
		t.Fatalf("no request lines for the links:\n%s", logs)
	}
	if strings.Contains(logs, token) || strings.Contains(logs, forged) {
		t.Fatalf("a link's token is in the log:\n%s", logs)
	}
}
