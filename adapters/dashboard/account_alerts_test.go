package dashboard

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/core"
)

// alertSchedules keeps each owner's alert schedule as the app does,
// validating with core.
type alertSchedules struct {
	mu   sync.Mutex
	sets int
	by   map[string]core.AlertSchedule
}

func (a *alertSchedules) Schedule(_ context.Context, ownerID string) (core.AlertSchedule, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if s, ok := a.by[ownerID]; ok {
		return s, nil
	}
	return core.AlertSchedule{Frequency: core.AlertAtOnce}, nil
}

func (a *alertSchedules) Set(_ context.Context, ownerID, frequency string, hour int, zone string) (core.AlertSchedule, error) {
	s, err := core.NewAlertSchedule(frequency, hour, zone)
	if err != nil {
		return core.AlertSchedule{}, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sets++
	a.by[ownerID] = s
	return s, nil
}

// The Account page shows the owner's alert frequency and changes it with
// a form that only a same-origin POST within the write limit carries out.
func TestAccountAlertFrequencyForm(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 10, 0, time.UTC)
	alerts := &alertSchedules{by: map[string]core.AlertSchedule{}}
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RateLimit: 3},
		Deps{Sessions: fakeSessions{}, Phrases: fakePhrases{}, Addresses: &addresses{email: "owner@localhost"}, AlertSchedules: alerts,
			Limiter: ratelimit.NewMemory(func() time.Time { return now })})
	if err != nil {
		t.Fatal(err)
	}
	w := get(d, "/app/account", true)
	if body := w.Body.String(); w.Code != 200 || !strings.Contains(body, `<form method="post" action="/app/account/alerts">`) ||
		!strings.Contains(body, `<option value="at once" selected>`) || !strings.Contains(body, "Alert emails come at once") {
		t.Fatalf("account page %d:\n%s", w.Code, body)
	}

	daily := url.Values{"frequency": {"daily"}, "hour": {"7"}, "zone": {"Europe/Berlin"}}
	if w := serve(d, formPost("/app/account/alerts", daily, "cross-site", true)); w.Code != http.StatusForbidden || alerts.sets != 0 {
		t.Fatalf("cross-site change: %d, %d sets", w.Code, alerts.sets)
	}
	w = serve(d, formPost("/app/account/alerts", daily, "same-origin", true))
	if body := w.Body.String(); w.Code != 200 || alerts.by["own"] != (core.AlertSchedule{Frequency: core.AlertDaily, Hour: 7, Zone: "Europe/Berlin"}) ||
		!strings.Contains(body, "Alert emails come daily at 07:00 Europe/Berlin") || !strings.Contains(body, `<option value="daily" selected>`) ||
		!strings.Contains(body, `<option value="7" selected>`) || !strings.Contains(body, `value="Europe/Berlin"`) {
		t.Fatalf("daily: %d %+v\n%s", w.Code, alerts.by, body)
	}

	bad := url.Values{"frequency": {"daily"}, "hour": {"7"}, "zone": {"Mars/Olympus<b>"}}
	w = serve(d, formPost("/app/account/alerts", bad, "same-origin", true))
	if body := w.Body.String(); w.Code != 400 || !strings.Contains(body, "time zone must be") || !strings.Contains(body, `value="Mars/Olympus&lt;b&gt;"`) ||
		alerts.by["own"].Zone != "Europe/Berlin" {
		t.Fatalf("bad zone: %d\n%s", w.Code, body)
	}
	w = serve(d, formPost("/app/account/alerts", url.Values{"frequency": {"daily"}, "hour": {"noon"}}, "same-origin", true))
	if w.Code != 400 || !strings.Contains(w.Body.String(), "hour must be") {
		t.Fatalf("bad hour: %d\n%s", w.Code, w.Body)
	}
	w = serve(d, formPost("/app/account/alerts", url.Values{"frequency": {"off"}}, "same-origin", true))
	if w.Code != http.StatusTooManyRequests || alerts.by["own"].Frequency != core.AlertDaily {
		t.Fatalf("a fourth write in a minute: %d, %+v", w.Code, alerts.by["own"])
	}
	now = now.Add(time.Minute)
	w = serve(d, formPost("/app/account/alerts", url.Values{"frequency": {"off"}}, "same-origin", true))
	if w.Code != 200 || alerts.by["own"].Frequency != core.AlertOff || !strings.Contains(w.Body.String(), "Alert emails are off") {
		t.Fatalf("off: %d\n%s", w.Code, w.Body)
	}
}

// Without an alert service the page leaves the form out.
func TestAccountWithoutAlertForm(t *testing.T) {
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps{Sessions: fakeSessions{}, Phrases: fakePhrases{}, Addresses: &addresses{email: "o@localhost"}})
	if err != nil {
		t.Fatal(err)
	}
	if w := get(d, "/app/account", true); w.Code != 200 || strings.Contains(w.Body.String(), "/app/account/alerts") {
		t.Fatalf("%d\n%s", w.Code, w.Body)
	}
}
