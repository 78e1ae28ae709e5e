package httpapi

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/core"
)

// outboundAPI serves webhooks and channels with a real limiter in memory
// at a per-key limit of limit, with two keys of owner o1 and one of o2.
// The clock stands still but where the test moves it.
func outboundAPI(t *testing.T, limit int) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	hooks := []core.Scope{core.ScopeWebhooks}
	keys := keyOf{
		"o1_a": {ID: "k1", OwnerID: "o1", Kind: core.APIKey, Scopes: hooks},
		"o1_b": {ID: "k2", OwnerID: "o1", Kind: core.APIKey, Scopes: hooks},
		"o1_r": {ID: "k3", OwnerID: "o1", Kind: core.APIKey},
		"o2_a": {ID: "k4", OwnerID: "o2", Kind: core.APIKey, Scopes: hooks},
	}
	now := new(atomic.Int64)
	now.Store(time.Date(2026, 1, 10, 9, 0, 0, 0, time.UTC).UnixNano())
	deps := Deps{Keys: keys, Limiter: ratelimit.NewMemory(func() time.Time { return time.Unix(0, now.Load()) }),
		// w1 and c1 are switched on, and d1, failed, is in each log: a retry of it spends.
		Webhooks: &fakeWebhooks{created: core.Webhook{ID: "w1", Active: true}, delivery: core.Delivery{ID: "d1", Status: core.DeliveryFailed}},
		Channels: &fakeChannels{ch: core.Webhook{ID: "c1", Active: true}, delivery: core.Delivery{ID: "d1", Status: core.DeliveryFailed}}}
	srv := httptest.NewServer(New(Config{RateLimit: limit, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, deps))
	t.Cleanup(srv.Close)
	return srv, now
}

func sendFull(t *testing.T, srv *httptest.Server, method, path, key, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const replayBody = `{"from":1700000000000,"to":1700000600000}`

// Every route that sends traffic out counts against one bucket of the
// owner's, shared by all of the owner's keys, at the API's per-minute
// limit: an owner with two keys sends no more than with one. The
// bucket's 429 is the API's: rate_limited, with Retry-After. Another
// owner is not affected, and the owner's other routes are not either.
func TestOutboundActionsShareTheOwnersLimit(t *testing.T) {
	outbound := []struct{ method, path, body string }{
		{"POST", "/api/v1/webhooks/w1/test", ""},
		{"POST", "/api/v1/webhooks/w1/deliveries/d1/retry", ""},
		{"POST", "/api/v1/webhooks/w1/replay", replayBody},
		{"POST", "/api/v1/channels/c1/test", ""},
		{"POST", "/api/v1/channels/c1/deliveries/d1/retry", ""},
		{"POST", "/api/v1/channels/c1/replay", replayBody},
	}
	for _, o := range outbound {
		t.Run(o.path, func(t *testing.T) {
			const limit = 4
			srv, now := outboundAPI(t, limit)
			// A key without the scope is refused before it counts.
			if resp, body := sendFull(t, srv, o.method, o.path, "o1_r", o.body); resp.StatusCode != 403 {
				t.Fatalf("read key: %d %s", resp.StatusCode, body)
			}
			for i := range limit {
				key := []string{"o1_a", "o1_b"}[i%2]
				if resp, body := sendFull(t, srv, o.method, o.path, key, o.body); resp.StatusCode >= 300 {
					t.Fatalf("send %d with %s: %d %s", i+1, key, resp.StatusCode, body)
				}
			}
			// Each key has used half its own limit; the owner's is used up
			// for the 50 seconds left of its window.
			now.Add(int64(10 * time.Second))
			resp, body := sendFull(t, srv, o.method, o.path, "o1_b", o.body)
			if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(body, `"code":"rate_limited"`) ||
				resp.Header.Get("Retry-After") != "50" || resp.Header.Get("X-RateLimit-Remaining") != "0" ||
				resp.Header.Get("X-RateLimit-Limit") != "4" || !strings.Contains(body, "retry after 50 seconds") {
				t.Fatalf("past the owner's limit: %d %v %s", resp.StatusCode, resp.Header, body)
			}
			if resp, body := sendFull(t, srv, o.method, o.path, "o2_a", o.body); resp.StatusCode >= 300 {
				t.Fatalf("another owner: %d %s", resp.StatusCode, body)
			}
			if resp, body := sendFull(t, srv, "GET", "/api/v1/webhooks", "o1_a", ""); resp.StatusCode != 200 {
				t.Fatalf("a read of the same owner: %d %s", resp.StatusCode, body)
			}
		})
	}
}

// Every outbound route named is one the API serves, and the limit sits
// on each.
func TestOutboundRoutesAreRoutes(t *testing.T) {
	a := New(Config{}, Deps{})
	served := map[string]bool{}
	for _, p := range a.Patterns() {
		served[p] = true
	}
	if len(outboundRoutes) != 6 {
		t.Errorf("%d outbound routes", len(outboundRoutes))
	}
	for p := range outboundRoutes {
		if !served[p] {
			t.Errorf("%s is no route", p)
		}
	}
}
