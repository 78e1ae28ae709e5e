package dashboard

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/testkit/dbtest"
)

const offSite = "https://listen.example.com"

// offWorld is the app's alert service over an in-memory database with
// two owners, and the token of each one's stop link as an alert email
// carries it.
type offWorld struct {
	db        *gormstore.DB
	alerts    *app.Alerts
	schedules *app.AlertSchedules
	ana, ben  core.Owner
	anaTok    string
	benTok    string
}

func newOffWorld(t *testing.T) offWorld {
	t.Helper()
	db := dbtest.Memory(t)
	links, err := app.NewAlertLinks(strings.Repeat("k", 40))
	if err != nil {
		t.Fatal(err)
	}
	alerts := app.NewAlerts(app.AlertDeps{Store: gormstore.NewAlertStore(db), Log: slog.New(slog.DiscardHandler)},
		app.AlertConfig{SiteURL: func() string { return offSite }, Links: links})
	owners := gormstore.NewOwnerStore(db)
	w := offWorld{db: db, alerts: alerts, schedules: alerts.Schedules()}
	w.ana, w.ben = core.Owner{Email: "ana@example.com"}, core.Owner{Email: "ben@example.com"}
	for _, o := range []*core.Owner{&w.ana, &w.ben} {
		if err := owners.CreateOwner(context.Background(), o); err != nil {
			t.Fatal(err)
		}
	}
	w.anaTok = strings.TrimPrefix(links.URL(offSite, w.ana.ID), offSite+app.AlertsOffPath)
	w.benTok = strings.TrimPrefix(links.URL(offSite, w.ben.ID), offSite+app.AlertsOffPath)
	if !core.WellFormedToken(w.anaTok) {
		t.Fatalf("token %q", w.anaTok)
	}
	return w
}

func (w offWorld) frequency(t *testing.T, o core.Owner) core.AlertFrequency {
	t.Helper()
	s, err := w.schedules.Schedule(context.Background(), o.ID)
	if err != nil {
		t.Fatal(err)
	}
	return s.Frequency
}

// oneClick is a mailbox provider's unsubscribe POST (RFC 8058 3.2): from
// its own servers, so another site to the browser's eye, with no cookie
// and the fixed body.
func oneClick(path string) *http.Request {
	r := httptest.NewRequest("POST", path, strings.NewReader("List-Unsubscribe=One-Click"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "cross-site")
	r.Header.Set("Origin", "https://mail.example.net")
	return r
}

// Opening a stop link changes nothing and shows the button; the button,
// or a mailbox provider's one-click POST from another origin, turns that
// owner's alert emails off and nothing else, again without harm; a
// forged or altered link is a 404 that changes nothing. Every other
// write from another origin is still refused.
func TestAlertsOffLink(t *testing.T) {
	w := newOffWorld(t)
	alerts := &alertSchedules{by: map[string]core.AlertSchedule{}}
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Sessions: fakeSessions{}, Phrases: fakePhrases{}, Addresses: &addresses{email: "o@localhost"}, AlertSchedules: alerts,
			AlertsOff: w.alerts})
	if err != nil {
		t.Fatal(err)
	}
	path := app.AlertsOffPath + w.anaTok

	g := get(d, path, false)
	if body := g.Body.String(); g.Code != 200 || !strings.Contains(body, `<form class="signin" method="post" action="`+path+`">`) ||
		!strings.Contains(body, "Stop alert emails</button>") || g.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("GET %d:\n%s", g.Code, body)
	}
	if f := w.frequency(t, w.ana); f != core.AlertAtOnce {
		t.Fatalf("opening the link made ana's alerts %q", f)
	}

	raw, _ := base64.RawURLEncoding.DecodeString(w.anaTok)
	raw[20] ^= 0x40
	for _, bad := range []string{base64.RawURLEncoding.EncodeToString(raw), w.anaTok[:42], w.anaTok + "A", strings.Repeat("A", 43),
		strings.Repeat("A", 4000), "%00", "..%2f..%2f"} {
		if g := get(d, app.AlertsOffPath+bad, false); g.Code != 404 || !strings.Contains(g.Body.String(), "does not turn alert emails off") {
			t.Errorf("GET forged %.50q: %d", bad, g.Code)
		}
		for _, site := range []string{"same-origin", "cross-site"} {
			if p := serve(d, formPost(app.AlertsOffPath+bad, nil, site, false)); p.Code != 404 {
				t.Errorf("POST forged %.50q (%s): %d", bad, site, p.Code)
			}
		}
	}
	if fa, fb := w.frequency(t, w.ana), w.frequency(t, w.ben); fa != core.AlertAtOnce || fb != core.AlertAtOnce {
		t.Fatalf("forged links changed alerts: ana %q, ben %q", fa, fb)
	}

	// The button: same origin, no session needed.
	p := serve(d, formPost(path, nil, "same-origin", false))
	if body := p.Body.String(); p.Code != 200 || !strings.Contains(body, "Alert emails are off; turn them on again on the") ||
		!strings.Contains(body, `href="/app/account"`) {
		t.Fatalf("POST %d:\n%s", p.Code, body)
	}
	if fa, fb := w.frequency(t, w.ana), w.frequency(t, w.ben); fa != core.AlertOff || fb != core.AlertAtOnce {
		t.Fatalf("after the button: ana %q, ben %q", fa, fb)
	}
	// The one-click POST, cross-origin, twice: 200 each time.
	for range 2 {
		if p := serve(d, oneClick(app.AlertsOffPath+w.benTok)); p.Code != 200 || !strings.Contains(p.Body.String(), "Alert emails are off") {
			t.Fatalf("one-click POST: %d\n%s", p.Code, p.Body)
		}
	}
	if f := w.frequency(t, w.ben); f != core.AlertOff {
		t.Fatalf("after one-click ben's alerts are %q", f)
	}

	// Any other write from another origin is refused as before, with a
	// session cookie and the same one-click body.
	for _, other := range []string{"/app/account/alerts", "/app/alerts/off", "/app/alerts/off/" + w.anaTok + "/x"} {
		r := oneClick(other)
		r.AddCookie(&http.Cookie{Name: cookieName, Value: tok})
		if p := serve(d, r); p.Code != http.StatusForbidden {
			t.Errorf("cross-origin POST %s: %d", other, p.Code)
		}
	}
	r := formPost("/app/account/alerts", url.Values{"frequency": {"off"}}, "cross-site", true)
	if p := serve(d, r); p.Code != http.StatusForbidden || alerts.sets != 0 {
		t.Fatalf("cross-site Account change: %d, %d sets", p.Code, alerts.sets)
	}
}

// Without the service the links are 404s.
func TestAlertsOffWithoutService(t *testing.T) {
	d := newTestDashboard(t, item(1, "t", "a", "https://x.com/1"))
	tok := strings.Repeat("A", 43)
	if g := get(d, app.AlertsOffPath+tok, false); g.Code != 404 {
		t.Fatalf("GET %d", g.Code)
	}
	if p := serve(d, oneClick(app.AlertsOffPath+tok)); p.Code != 404 {
		t.Fatalf("POST %d", p.Code)
	}
}

// The POSTs are bounded per client, as sign-in requests are: past the
// bound nothing is done and the answer says when to try again; another
// client is not held up, and the next minute the client may again.
func TestAlertsOffRateLimited(t *testing.T) {
	w := newOffWorld(t)
	now := time.Date(2026, 5, 1, 12, 0, 10, 0, time.UTC)
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Sessions: fakeSessions{}, AlertsOff: w.alerts, Limiter: ratelimit.NewMemory(func() time.Time { return now })})
	if err != nil {
		t.Fatal(err)
	}
	from := func(remote, token string) *httptest.ResponseRecorder {
		r := oneClick(app.AlertsOffPath + token)
		r.RemoteAddr = remote
		return serve(d, r)
	}
	for i := range alertsOffPerMinute {
		if p := from("192.0.2.1:4000", strings.Repeat("B", 43)); p.Code != 404 {
			t.Fatalf("POST %d: %d", i, p.Code)
		}
	}
	p := from("192.0.2.1:4001", w.anaTok)
	if p.Code != http.StatusTooManyRequests || p.Header().Get("Retry-After") == "" || w.frequency(t, w.ana) != core.AlertAtOnce {
		t.Fatalf("past the bound: %d %q, ana's alerts %q", p.Code, p.Header().Get("Retry-After"), w.frequency(t, w.ana))
	}
	if p := from("198.51.100.7:4000", w.benTok); p.Code != 200 || w.frequency(t, w.ben) != core.AlertOff {
		t.Fatalf("another client: %d", p.Code)
	}
	now = now.Add(time.Minute)
	if p := from("192.0.2.1:4000", w.anaTok); p.Code != 200 || w.frequency(t, w.ana) != core.AlertOff {
		t.Fatalf("the next minute: %d", p.Code)
	}
}

// A stop link's token has the form the request logs mask, so a failed
// page logs its path as {token}, as it does a sign-in link's.
func TestAlertsOffLogsNoToken(t *testing.T) {
	w := newOffWorld(t)
	var log bytes.Buffer
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(&log, nil))}, Deps{Sessions: fakeSessions{}, AlertsOff: w.alerts})
	if err != nil {
		t.Fatal(err)
	}
	_ = w.db.Close() // the database goes away: the change fails on our side
	if p := serve(d, oneClick(app.AlertsOffPath+w.anaTok)); p.Code != 500 {
		t.Fatalf("status %d\n%s", p.Code, p.Body)
	}
	logged := log.String()
	if !strings.Contains(logged, "path=/app/alerts/off/{token}") || strings.Contains(logged, w.anaTok) {
		t.Fatalf("log:\n%s", logged)
	}
}

var _ AlertsOffService = (*app.Alerts)(nil)
