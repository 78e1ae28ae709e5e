package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// knownRows answers as the services do for the rows an owner has: w1 (a
// webhook) and c1 (a channel), each with delivery d1 in its log; any
// other row or delivery is not found, and nothing is sent for it.
var knownRows = map[string][]string{"w1": {"d1"}, "c1": {"d1"}}

func knownRow(id, deliveryID string) error {
	ds, ok := knownRows[id]
	if !ok {
		return core.Errorf(core.KindNotFound, "webhook not found")
	}
	if deliveryID != "" && !slices.Contains(ds, deliveryID) {
		return core.Errorf(core.KindNotFound, "delivery not found")
	}
	return nil
}

func knownLog(id string) ([]core.Delivery, error) {
	if err := knownRow(id, ""); err != nil {
		return nil, err
	}
	var out []core.Delivery
	for _, d := range knownRows[id] {
		out = append(out, core.Delivery{ID: d, WebhookID: id, Status: core.DeliveryFailed})
	}
	return out, nil
}

// knownRange refuses a replay's range as the services do.
func knownRange(from, to time.Time) error {
	if to.IsZero() {
		to = time.Now()
	}
	return core.CheckReplayRange(from, to)
}

type knownWebhooks struct {
	*fakeWebhooks
	sent *int
}

func (k knownWebhooks) Deliveries(_ context.Context, _, id string) ([]core.Delivery, error) {
	return knownLog(id)
}
func (k knownWebhooks) Test(ctx context.Context, o, id string, take func(context.Context) error) (ports.WebhookResult, error) {
	if err := knownRow(id, ""); err != nil {
		return ports.WebhookResult{}, err
	}
	*k.sent++
	return k.fakeWebhooks.Test(ctx, o, id, take)
}
func (k knownWebhooks) Retry(ctx context.Context, o, id, d string, take func(context.Context) error) (core.Delivery, error) {
	if err := knownRow(id, d); err != nil {
		return core.Delivery{}, err
	}
	*k.sent++
	return k.fakeWebhooks.Retry(ctx, o, id, d, take)
}
func (k knownWebhooks) Replay(ctx context.Context, o, id string, from, to time.Time, take func(context.Context) error) (ports.ReplayResult, error) {
	if err := knownRange(from, to); err != nil {
		return ports.ReplayResult{}, err
	}
	if err := knownRow(id, ""); err != nil {
		return ports.ReplayResult{}, err
	}
	*k.sent++
	return k.fakeWebhooks.Replay(ctx, o, id, from, to, take)
}

type knownChannels struct {
	*fakeChannels
	sent *int
}

func (k knownChannels) Deliveries(_ context.Context, _, id string) ([]core.Delivery, error) {
	return knownLog(id)
}
func (k knownChannels) Test(ctx context.Context, o, id string, take func(context.Context) error) (ports.WebhookResult, error) {
	if err := knownRow(id, ""); err != nil {
		return ports.WebhookResult{}, err
	}
	*k.sent++
	return k.fakeChannels.Test(ctx, o, id, take)
}
func (k knownChannels) Retry(ctx context.Context, o, id, d string, take func(context.Context) error) (core.Delivery, error) {
	if err := knownRow(id, d); err != nil {
		return core.Delivery{}, err
	}
	*k.sent++
	return k.fakeChannels.Retry(ctx, o, id, d, take)
}
func (k knownChannels) Replay(ctx context.Context, o, id string, from, to time.Time, take func(context.Context) error) (ports.ReplayResult, error) {
	if err := knownRange(from, to); err != nil {
		return ports.ReplayResult{}, err
	}
	if err := knownRow(id, ""); err != nil {
		return ports.ReplayResult{}, err
	}
	*k.sent++
	return k.fakeChannels.Replay(ctx, o, id, from, to, take)
}

// Only a request that goes on to send spends one of the owner's outbound
// sends: one refused for its body, its plan or an id the owner does not
// have leaves the bucket whole, and the answer is the route's own.
func TestOutboundSpendsOnlyWhatSends(t *testing.T) {
	const limit = 30 // the per-key limit too: above what a case sends
	hooks := []core.Scope{core.ScopeWebhooks}
	keys := keyOf{"o1_a": {ID: "k1", OwnerID: "o1", Kind: core.APIKey, Scopes: hooks}}
	clock := func() time.Time { return time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC) }
	serve := func(t *testing.T, plan bool) (*httptest.Server, ports.RateLimiter, *int) {
		limiter, sent := ratelimit.NewMemory(clock), new(int)
		deps := Deps{Keys: keys, Limiter: limiter}
		if plan {
			deps.Webhooks = knownWebhooks{&fakeWebhooks{created: core.Webhook{ID: "w1", Active: true}}, sent}
			deps.Channels = knownChannels{&fakeChannels{ch: core.Webhook{ID: "c1", Active: true}}, sent}
		}
		srv := httptest.NewServer(New(Config{RateLimit: limit, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, deps))
		t.Cleanup(srv.Close)
		return srv, limiter, sent
	}
	left := func(t *testing.T, l ports.RateLimiter) int {
		t.Helper()
		q, err := l.Peek(context.Background(), outboundKey("o1"), limit)
		if err != nil {
			t.Fatal(err)
		}
		return q.Remaining
	}
	for _, family := range []string{"webhooks/w1", "channels/c1"} {
		t.Run(family, func(t *testing.T) {
			base := "/api/v1/" + family
			refused := []struct {
				path, body string
				status     int
			}{
				{base + "/replay", `{`, 400},
				{base + "/replay", `[]`, 400},
				{base + "/replay", `{"from":1700000000000,"to":1700000600000,"extra":1}`, 400},
				{base + "/replay", `{"from":"yesterday"}`, 400},
				{base + "/replay", `{"to":1700000600000}`, 400},
				{base + "/replay", `{"from":1700000600000,"to":1700000000000}`, 400},
				{"/api/v1/webhooks/nope/test", ``, 404},
				{"/api/v1/channels/nope/test", ``, 404},
				{"/api/v1/webhooks/nope/replay", replayBody, 404},
				{"/api/v1/channels/nope/replay", replayBody, 404},
				{"/api/v1/webhooks/nope/deliveries/d1/retry", ``, 404},
				{base + "/deliveries/nope/retry", ``, 404},
			}
			srv, l, sent := serve(t, true)
			for _, r := range refused {
				resp, body := sendFull(t, srv, "POST", r.path, "o1_a", r.body)
				if resp.StatusCode != r.status {
					t.Errorf("%s %s: %d %s, want %d", r.path, r.body, resp.StatusCode, body, r.status)
				}
				if n := left(t, l); n != limit {
					t.Fatalf("%s %s took a send: %d left of %d", r.path, r.body, n, limit)
				}
			}
			for i, path := range []string{base + "/test", base + "/deliveries/d1/retry", base + "/replay"} {
				body := ""
				if i == 2 {
					body = replayBody
				}
				if resp, b := sendFull(t, srv, "POST", path, "o1_a", body); resp.StatusCode >= 300 {
					t.Fatalf("%s: %d %s", path, resp.StatusCode, b)
				}
				if n := left(t, l); n != limit-i-1 || *sent != i+1 {
					t.Fatalf("%s: %d left of %d after %d sends", path, n, limit, *sent)
				}
			}
			// A plan without webhooks sends nothing.
			srv, l, _ = serve(t, false)
			for _, path := range []string{base + "/test", base + "/deliveries/d1/retry", base + "/replay"} {
				if resp, b := sendFull(t, srv, "POST", path, "o1_a", replayBody); resp.StatusCode != 403 {
					t.Errorf("%s without the plan: %d %s", path, resp.StatusCode, b)
				}
				if n := left(t, l); n != limit {
					t.Fatalf("%s without the plan took a send: %d left", path, n)
				}
			}
		})
	}
}
