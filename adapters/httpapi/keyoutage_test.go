package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/earshothq/earshot/core"
)

// downKeys is keyOf whose lookups fail on the service's side while down
// is set, as a key store does while its database is unreachable.
type downKeys struct {
	keyOf
	down atomic.Bool
}

func (d *downKeys) Authenticate(ctx context.Context, kind core.KeyKind, secret string) (core.Key, error) {
	if d.down.Load() {
		return core.Key{}, core.Errorf(core.KindInternal, "database unreachable")
	}
	return d.keyOf.Authenticate(ctx, kind, secret)
}

// A key lookup that fails on the service's side is no failed key: it is
// answered 500 and does not use up the address's quota of failed keys,
// so once the store is back the address's valid keys work at once
// rather than answering 429 for the rest of the window. On both edges.
func TestKeyLookupFailureIsNoFailedKey(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	keys := &downKeys{keyOf: keyOf{
		"svc_api_good":    {ID: "k1", OwnerID: "o1", Kind: core.APIKey},
		"svc_ingest_good": {ID: "k2", OwnerID: "o1", Kind: core.IngestKey},
	}}
	for _, edge := range []struct {
		name, path, key string
		h               http.Handler
	}{
		{"api", "/api/v1/webhooks", "svc_api_good", New(Config{RateLimit: 3, Logger: quiet}, Deps{Keys: keys, Limiter: &windowLimiter{counts: map[string]int{}}})},
		{"helper", "/proxy", "svc_ingest_good", NewHelper(HelperConfig{FailedKeyLimit: 3, Limiter: &windowLimiter{counts: map[string]int{}}, Logger: quiet}, keys, nil, nil)},
	} {
		t.Run(edge.name, func(t *testing.T) {
			var header http.Header
			call := func() int {
				req := httptest.NewRequest("GET", edge.path, nil)
				req.RemoteAddr = "192.0.2.1:4711"
				req.Header.Set("Authorization", "Bearer "+edge.key)
				rec := httptest.NewRecorder()
				edge.h.ServeHTTP(rec, req)
				header = rec.Header()
				return rec.Code
			}
			keys.down.Store(true)
			for i := range 5 {
				if got := call(); got != http.StatusInternalServerError {
					t.Fatalf("lookup %d while the store is down answered %d, want 500", i+1, got)
				}
				// Every answer carries the rate headers, this one the
				// address's quota of failed keys, untouched.
				if header.Get("X-RateLimit-Limit") != "3" || header.Get("X-RateLimit-Remaining") != "3" {
					t.Fatalf("lookup %d while the store is down: rate headers %v", i+1, header)
				}
			}
			keys.down.Store(false)
			// No webhook service and no proxy: a valid key gets 403 and 503.
			if got := call(); got == http.StatusTooManyRequests || got == http.StatusUnauthorized || got == http.StatusInternalServerError {
				t.Fatalf("a valid key once the store is back answered %d", got)
			}
		})
	}
}
