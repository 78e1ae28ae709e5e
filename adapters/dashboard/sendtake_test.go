package dashboard

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// answering takes every message at once, webhook or channel, and counts
// them; no receiver is dialled.
type answering struct{ sent *int }

func (a answering) Send(context.Context, ports.WebhookMessage) ports.WebhookResult {
	*a.sent++
	return ports.WebhookResult{Status: 204}
}

func (a answering) SendChannel(context.Context, ports.ChannelMessage) ports.WebhookResult {
	*a.sent++
	return ports.WebhookResult{Status: 200}
}

// Only what the service goes on to send spends one of the owner's
// dashboard writes, as the service decides it: a test, redelivery or
// replay it refuses (an unknown row or delivery, one of the other
// family, a test ping, a delivery still queued, a row switched off, a
// range it rejects, a delivery a full log does not hold) leaves the
// bucket whole; each that sends spends one, and past the limit the next
// is the dashboard's 429 page with Retry-After, sending nothing.
func TestDashboardSendsTakenWhereTheServiceSends(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Memory(t)
	_, ids := realOwners(t, db, "a@example.com")
	owner := ids[0]
	sealer, err := core.NewSealer("a test secret key of at least 32 characters")
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	store, sent := gormstore.NewWebhookStore(db), new(int)
	hooks := app.NewWebhooks(app.WebhookDeps{Store: store, Sealer: sealer, Log: quiet, Sender: answering{sent}},
		app.WebhookConfig{Limits: core.Limits{WebhooksPerPerson: 5}})
	chans := app.NewChannels(app.ChannelDeps{Webhooks: hooks, Store: gormstore.NewChannelStore(db)})
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	limiter := ratelimit.NewMemory(func() time.Time { return now })
	serve := func(limit int) *Dashboard {
		d, err := New(Config{Logger: quiet, RateLimit: limit},
			Deps{Sessions: ownerSessions{owners: map[string]string{"a" + strings.Repeat("t", 42): owner}},
				Inbox: fakeInbox{}, Matches: fakeMatches{}, Phrases: fakePhrases{}, Webhooks: hooks, Channels: chans, Limiter: limiter})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	const limit = 100
	d := serve(limit)
	left := func() int {
		t.Helper()
		q, err := limiter.Peek(ctx, "dashboard:owner:"+owner, limit)
		if err != nil {
			t.Fatal(err)
		}
		return q.Remaining
	}

	// Of each family a row switched on whose log is full (a test ping, a
	// delivery still queued, a failed one and 17 delivered), and a row
	// switched off with a failed delivery.
	on, off := map[string]string{}, map[string]string{}
	for i, family := range []string{"webhooks", "channels"} {
		for _, active := range []bool{true, false} {
			var row core.Webhook
			if family == "webhooks" {
				row, _, err = hooks.Create(ctx, owner, fmt.Sprintf("https://hooks.example.com/%d/%v", i, active), nil, nil)
			} else {
				// A Slack incoming webhook's address (https://api.slack.com/messaging/webhooks).
				row, err = chans.Create(ctx, owner, ports.NewChannel{Kind: "slack", URL: fmt.Sprintf("https://hooks.slack.com/services/T0/B%d/%v", i, active)})
			}
			if err != nil {
				t.Fatal(err)
			}
			at := time.Now().Add(-time.Hour)
			add := func(id string, trigger core.DeliveryTrigger, status core.DeliveryStatus) {
				at = at.Add(time.Second)
				d := core.Delivery{ID: id, WebhookID: row.ID, OwnerID: owner, Event: core.EventMatchCreated, Trigger: trigger,
					Status: status, Payload: []byte(`{}`), CreatedAt: at, NextAttemptAt: at.Add(time.Hour)}
				if trigger == core.TriggerPing {
					d.Event = core.EventPing
				}
				if err := store.AddDelivery(ctx, d, core.DeliveryLogSize); err != nil {
					t.Fatal(err)
				}
			}
			if !active {
				add(row.ID+"-failed", core.TriggerScheduled, core.DeliveryFailed)
				no := false
				if family == "webhooks" {
					_, err = hooks.Update(ctx, owner, row.ID, ports.WebhookChange{Active: &no})
				} else {
					_, err = chans.Update(ctx, owner, row.ID, ports.ChannelChange{Active: &no})
				}
				if err != nil {
					t.Fatal(err)
				}
				off[family] = row.ID
				continue
			}
			add(row.ID+"-ping", core.TriggerPing, core.DeliveryDelivered)
			add(row.ID+"-queued", core.TriggerScheduled, core.DeliveryQueued)
			add(row.ID+"-failed", core.TriggerScheduled, core.DeliveryFailed)
			for j := range core.DeliveryLogSize - 3 {
				add(fmt.Sprintf("%s-done%d", row.ID, j), core.TriggerScheduled, core.DeliveryDelivered)
			}
			on[family] = row.ID
		}
	}

	future := time.Now().UTC().Add(time.Hour).Format(replayLayouts[0])
	for _, family := range []string{"webhooks", "channels"} {
		base, gone := "/app/"+family+"/"+on[family], "/app/"+family+"/"+off[family]
		other := "/app/channels/" + on["webhooks"]
		if family == "channels" {
			other = "/app/webhooks/" + on["channels"]
		}
		for _, r := range []struct{ path, body string }{
			{"/app/" + family + "/nope/test", ""},
			{other + "/test", ""},
			{"/app/" + family + "/nope/deliveries/d1/redeliver", ""},
			{base + "/deliveries/nope/redeliver", ""},
			{base + "/deliveries/" + on[family] + "-ping/redeliver", ""},
			{base + "/deliveries/" + on[family] + "-queued/redeliver", ""},
			{gone + "/deliveries/" + off[family] + "-failed/redeliver", ""},
			{gone + "/replay", "from=2026-01-01T10:00"},
			{"/app/" + family + "/nope/replay", "from=2026-01-01T10:00"},
			{base + "/replay", "from=" + future},
			{base + "/replay", "from=2026-01-01T10:00&to=2025-01-01T10:00"},
			{base + "/replay", "from="},
		} {
			w := postAs(d, "a", r.path, r.body)
			if w.Code < 400 {
				t.Errorf("%s %s: %d, want a refusal", r.path, r.body, w.Code)
			}
			if n := left(); n != limit {
				t.Fatalf("%s %s spent a write: %d left of %d", r.path, r.body, n, limit)
			}
		}
	}
	if *sent != 0 {
		t.Fatalf("%d messages sent by refusals", *sent)
	}
	spent := 0
	for _, family := range []string{"webhooks", "channels"} {
		base := "/app/" + family + "/" + on[family]
		for _, r := range []struct{ path, body string }{
			{base + "/test", ""},
			{base + "/deliveries/" + on[family] + "-failed/redeliver", ""},
			{base + "/replay", "from=2026-01-01T10:00"},
		} {
			if w := postAs(d, "a", r.path, r.body); w.Code >= 400 {
				t.Fatalf("%s: %d\n%s", r.path, w.Code, w.Body.String())
			}
			spent++
			if n := left(); n != limit-spent {
				t.Fatalf("%s: %d left of %d after %d sends", r.path, n, limit, spent)
			}
		}
	}

	// A limit already used up refuses the next send with the
	// dashboard's page, as every write past it.
	small := serve(spent)
	before := *sent
	w := postAs(small, "a", "/app/webhooks/"+on["webhooks"]+"/test", "")
	if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "60" ||
		!strings.Contains(w.Body.String(), fmt.Sprintf("at most %d changes and sends a minute", spent)) {
		t.Fatalf("a send past the limit: %d %v\n%s", w.Code, w.Header(), w.Body.String())
	}
	if *sent != before {
		t.Fatalf("the refused send went out")
	}
}

// lastTaken admits a peek and refuses the take, as when another request
// of the owner's takes the last write in between.
type lastTaken struct{}

func (lastTaken) Take(context.Context, string, int) (ports.Quota, error) {
	return ports.Quota{Limit: 5, Reset: 30 * time.Second}, nil
}

func (lastTaken) Peek(context.Context, string, int) (ports.Quota, error) {
	return ports.Quota{Allowed: true, Limit: 5, Remaining: 1, Reset: 30 * time.Second}, nil
}

// A send whose take the limit refuses once the service has decided to
// send gets the same page as a write past the limit, and nothing goes
// out.
func TestDashboardSendRefusedAtTheTake(t *testing.T) {
	hooks := &countingWebhooks{}
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RateLimit: 5},
		Deps{Sessions: ownerSessions{owners: map[string]string{"a" + strings.Repeat("t", 42): "a"}},
			Inbox: fakeInbox{}, Matches: fakeMatches{}, Phrases: fakePhrases{}, Webhooks: hooks, Limiter: lastTaken{}})
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/app/webhooks/h1/test", "/app/webhooks/h1/deliveries/d1/redeliver", "/app/webhooks/h1/replay"} {
		w := postAs(d, "a", path, "from=2026-01-01T10:00")
		if w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") != "30" ||
			!strings.Contains(w.Body.String(), "at most 5 changes and sends a minute") || !strings.Contains(w.Body.String(), "try again in 30 seconds") {
			t.Fatalf("%s refused at the take: %d %v\n%s", path, w.Code, w.Header(), w.Body.String())
		}
	}
	if hooks.tests+hooks.redos != 0 {
		t.Fatalf("%d sent past the limit", hooks.tests+hooks.redos)
	}
}
