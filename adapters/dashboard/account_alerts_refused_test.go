package dashboard

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// A refused change of the alert emails changes nothing, and the page
// says so: its sentence is the schedule the owner has, while the form
// keeps what was typed beside the refusal.
func TestAccountAlertRefusalSaysTheScheduleInForce(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Memory(t)
	_, ids := realOwners(t, db, "owner@example.com")
	id := ids[0]
	alerts := app.NewAlertSchedules(gormstore.NewAlertStore(db))
	if _, err := alerts.Set(ctx, id, "off", 0, ""); err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Sessions: ownerSessions{owners: map[string]string{tok: id}}, Phrases: fakePhrases{},
			Addresses: &addresses{email: "owner@example.com"}, AlertSchedules: alerts})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		saved core.AlertSchedule
		says  string
	}{
		{core.AlertSchedule{Frequency: core.AlertOff}, "Alert emails are off"},
		{core.AlertSchedule{Frequency: core.AlertDaily, Hour: 7, Zone: "Europe/Berlin"}, "Alert emails come daily at 07:00 Europe/Berlin."},
	} {
		if _, err := alerts.Set(ctx, id, string(c.saved.Frequency), c.saved.Hour, c.saved.Zone); err != nil {
			t.Fatal(err)
		}
		bad := url.Values{"frequency": {"daily"}, "hour": {"9"}, "zone": {"Mars/Olympus"}}
		w := serve(d, formPost("/app/account/alerts", bad, "same-origin", true))
		body := w.Body.String()
		if w.Code != 400 || !strings.Contains(body, "time zone must be") || !strings.Contains(body, `value="Mars/Olympus"`) {
			t.Fatalf("refused zone with %v saved: %d\n%s", c.saved, w.Code, body)
		}
		if now, err := alerts.Schedule(ctx, id); err != nil || now != c.saved {
			t.Fatalf("the refusal changed the schedule to %v (%v)", now, err)
		}
		if !strings.Contains(body, c.says) || strings.Contains(body, "Alert emails come daily at 09:00 Mars/Olympus") {
			t.Fatalf("with %v saved and a refused change, the page should say %q:\n%s", c.saved, c.says, body)
		}
	}
}
