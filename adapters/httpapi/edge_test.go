package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// countingKeys is keyOf that counts the lookups it answers.
type countingKeys struct {
	keyOf
	mu      sync.Mutex
	lookups int
}

func (c *countingKeys) Authenticate(ctx context.Context, kind core.KeyKind, secret string) (core.Key, error) {
	c.mu.Lock()
	c.lookups++
	c.mu.Unlock()
	return c.keyOf.Authenticate(ctx, kind, secret)
}

// windowLimiter is a fixed window that never ends, enough to see what
// the API counts and when it stops.
type windowLimiter struct {
	mu     sync.Mutex
	counts map[string]int
}

func (l *windowLimiter) Take(_ context.Context, key string, limit int) (ports.Quota, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := ports.Quota{Limit: limit, Reset: 42 * time.Second}
	if l.counts[key] >= limit {
		return q, nil
	}
	l.counts[key]++
	q.Allowed, q.Remaining = true, limit-l.counts[key]
	return q, nil
}

func (l *windowLimiter) Peek(_ context.Context, key string, limit int) (ports.Quota, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	q := ports.Quota{Limit: limit, Reset: 42 * time.Second}
	if l.counts[key] < limit {
		q.Allowed, q.Remaining = true, limit-l.counts[key]
	}
	return q, nil
}

// Past the quota of failed keys an address is answered 429 before its key
// is looked up, so guessing costs a lookup only within the quota; other
// addresses, and valid keys there, are unaffected.
// Both edges take keys through the one check: the API with API keys and
// the helper endpoints with ingest keys.
func TestFailedKeysPastQuota(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	t.Run("api", func(t *testing.T) {
		keys := &countingKeys{keyOf: keyOf{"svc_api_good": {ID: "k1", OwnerID: "o1", Kind: core.APIKey}}}
		api := New(Config{RateLimit: 3, Logger: quiet}, Deps{Keys: keys, Limiter: &windowLimiter{counts: map[string]int{}}})
		// No webhook service: a valid key gets plan_limit.
		checkFailedKeys(t, api, keys, "/api/v1/webhooks", "svc_api_")
	})
	t.Run("helper", func(t *testing.T) {
		keys := &countingKeys{keyOf: keyOf{"svc_ingest_good": {ID: "k1", OwnerID: "o1", Kind: core.IngestKey}}}
		helper := NewHelper(HelperConfig{FailedKeyLimit: 3, Limiter: &windowLimiter{counts: map[string]int{}}, Logger: quiet}, keys, nil, nil)
		// No proxy: a valid key gets 503.
		checkFailedKeys(t, helper, keys, "/proxy", "svc_ingest_")
	})
}

func checkFailedKeys(t *testing.T, h http.Handler, keys *countingKeys, path, prefix string) {
	call := func(addr, key string) *http.Response {
		req := httptest.NewRequest("GET", path, nil)
		req.RemoteAddr = addr + ":4711"
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Result()
	}
	// The good key is checked first from the guesser's address: valid
	// keys do not use up the failed-key quota.
	if r := call("192.0.2.1", prefix+"good"); r.StatusCode == http.StatusUnauthorized || r.StatusCode == http.StatusTooManyRequests {
		t.Fatalf("valid key answered %d", r.StatusCode)
	}
	for i := 1; i <= 3; i++ {
		if r := call("192.0.2.1", prefix+"guess"+strconv.Itoa(i)); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("guess %d within the quota answered %d, want 401", i, r.StatusCode)
		}
	}
	before := keys.lookups
	for i := range 5 {
		r := call("192.0.2.1", prefix+"more"+strconv.Itoa(i))
		if r.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("guess past the quota answered %d, want 429", r.StatusCode)
		}
		if r.Header.Get("Retry-After") != "42" || r.Header.Get("X-RateLimit-Remaining") != "0" || r.Header.Get("X-RateLimit-Limit") != "3" {
			t.Fatalf("429 headers: %v", r.Header)
		}
		if body, _ := io.ReadAll(r.Body); !jsonHasCode(body, "rate_limited") {
			t.Fatalf("429 body: %s", body)
		}
	}
	if keys.lookups != before {
		t.Fatalf("%d keys looked up past the quota, want none", keys.lookups-before)
	}
	if r := call("198.51.100.7", prefix+"good"); r.StatusCode == http.StatusUnauthorized || r.StatusCode == http.StatusTooManyRequests {
		t.Fatalf("another address answered %d", r.StatusCode)
	}
	if r := call("198.51.100.7", prefix+"guess"); r.StatusCode != http.StatusUnauthorized {
		t.Fatalf("another address's first guess answered %d, want 401", r.StatusCode)
	}
}

func jsonHasCode(body []byte, code string) bool {
	var b errorBody
	return json.Unmarshal(body, &b) == nil && b.Error.Code == code
}

// Peek completes helper_test.go's counted as a ports.RateLimiter.
func (c *counted) Peek(_ context.Context, key string, limit int) (ports.Quota, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := ports.Quota{Limit: limit, Reset: 30 * time.Second}
	if c.n[key] < limit {
		q.Allowed, q.Remaining = true, limit-c.n[key]
	}
	return q, nil
}

// Peek completes statuses_test.go's switchLimiter: once it denies, a
// failed-key quota is used up too.
func (l *switchLimiter) Peek(ctx context.Context, key string, limit int) (ports.Quota, error) {
	return l.Take(ctx, key, limit)
}

// TestFailedKeyQuotaOnEveryEdge: an address has one quota of failed
// keys a minute, EARSHOT_RATE_LIMIT_PER_MINUTE (60 by default), counted
// once whichever edge the keys went to. The helper endpoints' own
// request limit (60,000 a minute) is a limit per valid key, not a
// licence to guess: 1,500 bad ingest keys from one address get 60
// answers of 401 and then 429 with Retry-After, and meanwhile a valid
// key from that address gets 429 too, on both edges.
func TestFailedKeyQuotaOnEveryEdge(t *testing.T) {
	const documented = 60 // README: "failed keys in a window"
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	keys := &countingKeys{keyOf: keyOf{
		"svc_ingest_good": {ID: "k1", OwnerID: "o1", Kind: core.IngestKey},
		"svc_api_good":    {ID: "k2", OwnerID: "o1", Kind: core.APIKey},
	}}
	l := &windowLimiter{counts: map[string]int{}}
	helper := NewHelper(HelperConfig{Limiter: l, Logger: quiet}, keys, nil, nil)
	api := New(Config{Logger: quiet}, Deps{Keys: keys, Limiter: l})
	call := func(h http.Handler, path, addr, key string) *http.Response {
		req := httptest.NewRequest("GET", path, nil)
		req.RemoteAddr = addr + ":4711"
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Result()
	}
	statuses := map[int]int{}
	for i := range 1500 {
		r := call(helper, "/proxy", "192.0.2.1", "svc_ingest_bad"+strconv.Itoa(i))
		statuses[r.StatusCode]++
		if r.StatusCode == http.StatusTooManyRequests && r.Header.Get("Retry-After") == "" {
			t.Fatalf("429 without Retry-After: %v", r.Header)
		}
	}
	if statuses[http.StatusUnauthorized] != documented || statuses[http.StatusTooManyRequests] != 1500-documented {
		t.Fatalf("1,500 bad ingest keys answered %v, want %d of 401 and the rest 429", statuses, documented)
	}
	if r := call(helper, "/proxy", "192.0.2.1", "svc_ingest_good"); r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a valid ingest key from the address past its quota answered %d, want 429", r.StatusCode)
	}
	if r := call(api, "/api/v1/me", "192.0.2.1", "svc_api_good"); r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a valid API key from the address past its quota answered %d, want 429", r.StatusCode)
	}
	// The other way round: failed API keys use up the helper's quota too.
	for i := range documented {
		if r := call(api, "/api/v1/me", "198.51.100.7", "svc_api_bad"+strconv.Itoa(i)); r.StatusCode != http.StatusUnauthorized {
			t.Fatalf("bad API key %d answered %d, want 401", i, r.StatusCode)
		}
	}
	if r := call(helper, "/proxy", "198.51.100.7", "svc_ingest_bad"); r.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a bad ingest key after %d bad API keys answered %d, want 429", documented, r.StatusCode)
	}
}
