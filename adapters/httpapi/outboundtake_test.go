package httpapi

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
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

// takeWorld is the real webhook and channel services over SQLite in
// memory, with one owner who has, of each family, a row switched on
// whose log is full (a test ping, a delivery still queued, a failed one
// and 17 delivered) and a row switched off with a failed delivery.
type takeWorld struct {
	hooks    *app.Webhooks
	channels *app.Channels
	owner    string
	sent     *int
	// on and off are the rows' ids by family, "webhooks" and "channels".
	on, off map[string]string
}

func newTakeWorld(t *testing.T) *takeWorld {
	t.Helper()
	ctx := context.Background()
	db := dbtest.Memory(t)
	ownerStore := gormstore.NewOwnerStore(db)
	o, err := app.NewOwners(ownerStore, app.NewKeys(gormstore.NewKeyStore(db), ownerStore, ports.SystemClock{})).Create(ctx, "a@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	sealer, err := core.NewSealer("a test secret key of at least 32 characters")
	if err != nil {
		t.Fatal(err)
	}
	store, sent := gormstore.NewWebhookStore(db), new(int)
	hooks := app.NewWebhooks(app.WebhookDeps{Store: store, Sealer: sealer, Log: quietLog, Sender: answering{sent}},
		app.WebhookConfig{Limits: core.Limits{WebhooksPerPerson: 5}})
	chans := app.NewChannels(app.ChannelDeps{Webhooks: hooks, Store: gormstore.NewChannelStore(db)})
	w := &takeWorld{hooks: hooks, channels: chans, owner: o.ID, sent: sent, on: map[string]string{}, off: map[string]string{}}
	for i, family := range []string{"webhooks", "channels"} {
		for _, active := range []bool{true, false} {
			var row core.Webhook
			if family == "webhooks" {
				row, _, err = hooks.Create(ctx, o.ID, fmt.Sprintf("https://hooks.example.com/%d/%v", i, active), nil, nil)
			} else {
				// A Slack incoming webhook's address (https://api.slack.com/messaging/webhooks).
				row, err = chans.Create(ctx, o.ID, ports.NewChannel{Kind: "slack", URL: fmt.Sprintf("https://hooks.slack.com/services/T0/B%d/%v", i, active)})
			}
			if err != nil {
				t.Fatal(err)
			}
			at := time.Now().Add(-time.Hour)
			add := func(id string, trigger core.DeliveryTrigger, status core.DeliveryStatus) {
				at = at.Add(time.Second)
				d := core.Delivery{ID: id, WebhookID: row.ID, OwnerID: o.ID, Event: core.EventMatchCreated, Trigger: trigger,
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
				off := false
				if family == "webhooks" {
					_, err = hooks.Update(ctx, o.ID, row.ID, ports.WebhookChange{Active: &off})
				} else {
					_, err = chans.Update(ctx, o.ID, row.ID, ports.ChannelChange{Active: &off})
				}
				if err != nil {
					t.Fatal(err)
				}
				w.off[family] = row.ID
				continue
			}
			add(row.ID+"-ping", core.TriggerPing, core.DeliveryDelivered)
			add(row.ID+"-queued", core.TriggerScheduled, core.DeliveryQueued)
			add(row.ID+"-failed", core.TriggerScheduled, core.DeliveryFailed)
			for j := range core.DeliveryLogSize - 3 {
				add(fmt.Sprintf("%s-done%d", row.ID, j), core.TriggerScheduled, core.DeliveryDelivered)
			}
			w.on[family] = row.ID
		}
	}
	return w
}

// serve is the API over w's services with limiter at limit, and the
// key o_1, o_2 and o_3 of w's owner with the webhooks scope.
func (w *takeWorld) serve(t *testing.T, limiter ports.RateLimiter, limit int) *httptest.Server {
	t.Helper()
	scopes := []core.Scope{core.ScopeWebhooks}
	keys := keyOf{}
	for _, k := range []string{"o_1", "o_2", "o_3"} {
		keys[k] = core.Key{ID: k, OwnerID: w.owner, Kind: core.APIKey, Scopes: scopes}
	}
	srv := httptest.NewServer(New(Config{RateLimit: limit, Logger: quietLog},
		Deps{Keys: keys, Limiter: limiter, Webhooks: w.hooks, Channels: w.channels}))
	t.Cleanup(srv.Close)
	return srv
}

// Only what the service goes on to send spends one of the owner's
// outbound sends, as the service decides it: a test, redelivery or
// replay it refuses leaves the bucket whole, a replay from a time still
// to come with no end and a redelivery of a delivery that a full log
// does not hold among them; each that sends spends one, and past the
// limit the next is 429 rate_limited with Retry-After, sending nothing.
func TestOutboundTakenWhereTheServiceSends(t *testing.T) {
	w := newTakeWorld(t)
	const limit = 100
	clock := func() time.Time { return time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC) }
	limiter := ratelimit.NewMemory(clock)
	srv := w.serve(t, limiter, limit)
	left := func() int {
		t.Helper()
		q, err := limiter.Peek(context.Background(), outboundKey(w.owner), limit)
		if err != nil {
			t.Fatal(err)
		}
		return q.Remaining
	}
	future := time.Now().Add(time.Hour).UnixMilli()
	for _, family := range []string{"webhooks", "channels"} {
		on, off := "/api/v1/"+family+"/"+w.on[family], "/api/v1/"+family+"/"+w.off[family]
		other := "/api/v1/channels/" + w.on["webhooks"]
		if family == "channels" {
			other = "/api/v1/webhooks/" + w.on["channels"]
		}
		refused := []struct {
			path, body string
			status     int
		}{
			{"/api/v1/" + family + "/nope/test", "", 404},
			{other + "/test", "", 404},
			{"/api/v1/" + family + "/nope/deliveries/d1/retry", "", 404},
			{on + "/deliveries/nope/retry", "", 404},
			{on + "/deliveries/" + w.on[family] + "-ping/retry", "", 400},
			{on + "/deliveries/" + w.on[family] + "-queued/retry", "", 409},
			{off + "/deliveries/" + w.off[family] + "-failed/retry", "", 409},
			{off + "/replay", `{"from":1700000000000}`, 409},
			{"/api/v1/" + family + "/nope/replay", `{"from":1700000000000}`, 404},
			{on + "/replay", fmt.Sprintf(`{"from":%d}`, future), 400},
			{on + "/replay", `{"from":1700000600000,"to":1700000000000}`, 400},
			{on + "/replay", `{"to":1700000000000}`, 400},
		}
		for _, r := range refused {
			resp, body := sendFull(t, srv, "POST", r.path, "o_1", r.body)
			if resp.StatusCode != r.status {
				t.Errorf("%s %s: %d %s, want %d", r.path, r.body, resp.StatusCode, body, r.status)
			}
			if n := left(); n != limit {
				t.Fatalf("%s %s spent a send: %d left of %d", r.path, r.body, n, limit)
			}
		}
	}
	if *w.sent != 0 {
		t.Fatalf("%d messages sent by refusals", *w.sent)
	}
	spent := 0
	for _, family := range []string{"webhooks", "channels"} {
		on := "/api/v1/" + family + "/" + w.on[family]
		for _, r := range []struct{ path, body string }{
			{on + "/test", ""},
			{on + "/deliveries/" + w.on[family] + "-failed/retry", ""},
			{on + "/replay", `{"from":1700000000000}`},
		} {
			if resp, body := sendFull(t, srv, "POST", r.path, "o_2", r.body); resp.StatusCode >= 300 {
				t.Fatalf("%s: %d %s", r.path, resp.StatusCode, body)
			}
			spent++
			if n := left(); n != limit-spent {
				t.Fatalf("%s: %d left of %d after %d sends", r.path, n, limit, spent)
			}
		}
	}

	// The (N+1)th send of the window, from another key, is refused.
	small := w.serve(t, ratelimit.NewMemory(clock), 2)
	test := "/api/v1/webhooks/" + w.on["webhooks"] + "/test"
	for _, key := range []string{"o_1", "o_2"} {
		if resp, body := sendFull(t, small, "POST", test, key, ""); resp.StatusCode != 200 {
			t.Fatalf("a send within the limit: %d %s", resp.StatusCode, body)
		}
	}
	sent := *w.sent
	resp, body := sendFull(t, small, "POST", test, "o_3", "")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "60" ||
		resp.Header.Get("X-RateLimit-Remaining") != "0" || !strings.Contains(body, "owner's limit of 2") {
		t.Fatalf("the third send: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if *w.sent != sent {
		t.Fatalf("the refused send went out")
	}
}
