package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// refusingWebhooks answers as the service does for webhook w1, switched
// on or off, whose log holds a test ping, a delivery still queued and a
// failed one: a redelivery of the first two, and any redelivery or
// replay while w1 is off, is refused without a send.
type refusingWebhooks struct {
	*fakeWebhooks
	active bool
	sent   *int
}

func (r refusingWebhooks) List(context.Context, string) ([]core.Webhook, error) {
	return []core.Webhook{{ID: "w1", Active: r.active}}, nil
}

func (r refusingWebhooks) Deliveries(context.Context, string, string) ([]core.Delivery, error) {
	return []core.Delivery{
		{ID: "ping", WebhookID: "w1", Trigger: core.TriggerPing, Status: core.DeliveryDelivered},
		{ID: "queued", WebhookID: "w1", Trigger: core.TriggerScheduled, Status: core.DeliveryQueued},
		{ID: "failed", WebhookID: "w1", Trigger: core.TriggerScheduled, Status: core.DeliveryFailed},
	}, nil
}

func (r refusingWebhooks) Retry(ctx context.Context, _, _, d string, take func(context.Context) error) (core.Delivery, error) {
	switch {
	case !r.active:
		return core.Delivery{}, core.Errorf(core.KindConflict, "the webhook is switched off")
	case d == "ping":
		return core.Delivery{}, core.Errorf(core.KindInvalidRequest, "a test ping is not sent again")
	case d == "queued":
		return core.Delivery{}, core.Errorf(core.KindConflict, "the delivery is queued already")
	}
	if err := take(ctx); err != nil {
		return core.Delivery{}, err
	}
	*r.sent++
	return core.Delivery{ID: d, Status: core.DeliveryQueued, Trigger: core.TriggerManual}, nil
}

func (r refusingWebhooks) Replay(ctx context.Context, _, _ string, _, _ time.Time, take func(context.Context) error) (ports.ReplayResult, error) {
	if !r.active {
		return ports.ReplayResult{}, core.Errorf(core.KindConflict, "the webhook is switched off")
	}
	if err := take(ctx); err != nil {
		return ports.ReplayResult{}, err
	}
	*r.sent++
	return ports.ReplayResult{}, nil
}

// A redelivery or replay the service refuses without sending (a test
// ping, a delivery still queued, a webhook switched off) spends nothing
// of the owner's outbound sends; one that goes on to queue spends one.
func TestOutboundRefusedBySpendsNothing(t *testing.T) {
	const limit = 30
	keys := keyOf{"o1_a": {ID: "k1", OwnerID: "o1", Kind: core.APIKey, Scopes: []core.Scope{core.ScopeWebhooks}}}
	clock := func() time.Time { return time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC) }
	for _, active := range []bool{true, false} {
		limiter, sent := ratelimit.NewMemory(clock), new(int)
		deps := Deps{Keys: keys, Limiter: limiter, Webhooks: refusingWebhooks{&fakeWebhooks{}, active, sent}}
		srv := httptest.NewServer(New(Config{RateLimit: limit, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, deps))
		left := func() int {
			q, err := limiter.Peek(context.Background(), outboundKey("o1"), limit)
			if err != nil {
				t.Fatal(err)
			}
			return q.Remaining
		}
		refused := []string{"/api/v1/webhooks/w1/deliveries/ping/retry", "/api/v1/webhooks/w1/deliveries/queued/retry"}
		if !active {
			refused = append(refused, "/api/v1/webhooks/w1/deliveries/failed/retry", "/api/v1/webhooks/w1/replay")
		}
		for _, path := range refused {
			if resp, body := sendFull(t, srv, "POST", path, "o1_a", replayBody); resp.StatusCode < 400 {
				t.Errorf("active %v, %s: %d %s, want a refusal", active, path, resp.StatusCode, body)
			}
			if n := left(); n != limit {
				t.Errorf("active %v, %s spent a send: %d left of %d", active, path, n, limit)
			}
		}
		if active {
			for i, path := range []string{"/api/v1/webhooks/w1/deliveries/failed/retry", "/api/v1/webhooks/w1/replay"} {
				if resp, body := sendFull(t, srv, "POST", path, "o1_a", replayBody); resp.StatusCode != 202 {
					t.Errorf("%s: %d %s", path, resp.StatusCode, body)
				}
				if n := left(); n != limit-i-1 || *sent != i+1 {
					t.Errorf("%s: %d left of %d after %d sends", path, n, limit, *sent)
				}
			}
		}
		srv.Close()
	}
}
