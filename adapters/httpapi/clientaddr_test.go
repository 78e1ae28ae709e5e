package httpapi

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/earshothq/earshot/clientip"
	"github.com/earshothq/earshot/core"
)

// An IPv6 client holds a whole /64 and may pick any address in it, so
// its failed keys are counted per /64, as the dashboard counts its
// sign-in requests: 2001:db8::1 and 2001:db8::ff share one quota, on
// the API and on the helper endpoints; another /64 has its own.
func TestFailedKeysPerIPv6Network(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, edge := range []struct {
		name, path, prefix string
		handler            func(*countingKeys, *windowLimiter) http.Handler
	}{
		{"api", "/api/v1/webhooks", "svc_api_", func(k *countingKeys, l *windowLimiter) http.Handler {
			return New(Config{RateLimit: 3, Logger: quiet}, Deps{Keys: k, Limiter: l})
		}},
		{"helper", "/proxy", "svc_ingest_", func(k *countingKeys, l *windowLimiter) http.Handler {
			return NewHelper(HelperConfig{FailedKeyLimit: 3, Limiter: l, Logger: quiet}, k, nil, nil)
		}},
	} {
		t.Run(edge.name, func(t *testing.T) {
			keys := &countingKeys{keyOf: keyOf{}}
			h := edge.handler(keys, &windowLimiter{counts: map[string]int{}})
			call := func(remote, key string) int {
				req := httptest.NewRequest("GET", edge.path, nil)
				req.RemoteAddr = remote
				req.Header.Set("Authorization", "Bearer "+edge.prefix+key)
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				return rec.Code
			}
			for i := range 3 {
				if code := call("[2001:db8::"+strconv.Itoa(i+1)+"]:4711", "guess"+strconv.Itoa(i)); code != http.StatusUnauthorized {
					t.Fatalf("guess %d: %d, want 401", i, code)
				}
			}
			before := keys.lookups
			if code := call("[2001:db8::ff]:4711", "more"); code != http.StatusTooManyRequests {
				t.Fatalf("another address of the /64 past its quota: %d, want 429", code)
			}
			if keys.lookups != before {
				t.Fatal("a key was looked up past the /64's quota")
			}
			if code := call("[2001:db8:0:1::1]:4711", "other"); code != http.StatusUnauthorized {
				t.Fatalf("another /64: %d, want 401", code)
			}
		})
	}
}

// loopbackClient dials from ip, one of the loopback addresses, so that
// clients of a test are told apart by their address as clients behind
// a load balancer are. Linux routes the whole of 127.0.0.0/8 to the
// loopback interface; elsewhere only 127.0.0.1 may be there.
func loopbackClient(t *testing.T, ip string) *http.Client {
	t.Helper()
	ln, err := net.Listen("tcp", ip+":0")
	if err != nil {
		t.Skipf("no loopback address %s here: %v", ip, err)
	}
	ln.Close()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// behindProxy serves h behind a reverse proxy, both on loopback, and
// returns the proxy's address and the server's: the proxy is
// net/http/httputil's, which appends the address it was connected from
// to X-Forwarded-For, as nginx and the cloud load balancers do. The
// server's handler is h wrapped as package server wraps every edge.
func behindProxy(t *testing.T, trusted string, h http.Handler) (proxy, direct string) {
	t.Helper()
	p, err := clientip.ParseProxies(trusted)
	if err != nil {
		t.Fatal(err)
	}
	backend := httptest.NewServer(p.Handler(h))
	t.Cleanup(backend.Close)
	u, _ := url.Parse(backend.URL)
	front := httptest.NewServer(httputil.NewSingleHostReverseProxy(u))
	t.Cleanup(front.Close)
	return front.URL, backend.URL
}

// Behind a load balancer every request comes from the balancer's
// address. Trusting it (EARSHOT_TRUSTED_PROXIES), two clients behind it
// have a quota of failed keys each, and a keyless quota each; without
// it they share the balancer's, as documented. A client that writes
// X-Forwarded-For itself gets no quota of its own by it, whether it
// goes through the balancer or around it.
func TestFailedKeysBehindAProxy(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	a, b := loopbackClient(t, "127.0.0.2"), loopbackClient(t, "127.0.0.3")
	call := func(c *http.Client, base, path, key, forged string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", base+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		if forged != "" {
			req.Header.Set("X-Forwarded-For", forged)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	newAPI := func() (*API, *countingKeys) {
		keys := &countingKeys{keyOf: keyOf{"svc_api_good": {ID: "k1", OwnerID: "o1", Kind: core.APIKey}}}
		return New(Config{RateLimit: 3, Logger: quiet}, Deps{Keys: keys, Limiter: &windowLimiter{counts: map[string]int{}}}), keys
	}
	guess := func(c *http.Client, base string, n int, forge bool) {
		t.Helper()
		for i := range n {
			forged := ""
			if forge {
				forged = "203.0.113." + strconv.Itoa(i+1)
			}
			if code := call(c, base, "/api/v1/webhooks", "svc_api_guess"+strconv.Itoa(i), forged); code != http.StatusUnauthorized {
				t.Fatalf("guess %d: %d, want 401", i, code)
			}
		}
	}

	t.Run("trusted", func(t *testing.T) {
		api, _ := newAPI()
		proxy, _ := behindProxy(t, "127.0.0.1", api)
		guess(a, proxy, 3, false)
		if code := call(a, proxy, "/api/v1/webhooks", "svc_api_good", ""); code != http.StatusTooManyRequests {
			t.Fatalf("the guesser's valid key past its quota: %d, want 429", code)
		}
		// No webhook service: a valid key gets plan_limit.
		if code := call(b, proxy, "/api/v1/webhooks", "svc_api_good", ""); code != http.StatusForbidden {
			t.Fatalf("another client's valid key: %d, want 403 plan_limit", code)
		}
		guess(b, proxy, 3, false)
		for i := range 3 {
			if code := call(a, proxy, "/api/v1/openapi.json", "", ""); code != http.StatusOK {
				t.Fatalf("keyless request %d: %d", i, code)
			}
		}
		if code := call(a, proxy, "/api/v1/openapi.json", "", ""); code != http.StatusTooManyRequests {
			t.Fatalf("keyless request past the quota: %d, want 429", code)
		}
		if code := call(b, proxy, "/api/v1/openapi.json", "", ""); code != http.StatusOK {
			t.Fatalf("another client's keyless request: %d, want 200", code)
		}
	})

	t.Run("not trusted", func(t *testing.T) {
		api, _ := newAPI()
		proxy, _ := behindProxy(t, "", api)
		guess(a, proxy, 3, false)
		if code := call(b, proxy, "/api/v1/webhooks", "svc_api_good", ""); code != http.StatusTooManyRequests {
			t.Fatalf("another client behind an untrusted proxy: %d, want 429 (one quota for the proxy)", code)
		}
	})

	t.Run("forged through the proxy", func(t *testing.T) {
		api, keys := newAPI()
		proxy, _ := behindProxy(t, "127.0.0.1", api)
		guess(a, proxy, 3, true)
		before := keys.lookups
		if code := call(a, proxy, "/api/v1/webhooks", "svc_api_more", "198.51.100.99"); code != http.StatusTooManyRequests || keys.lookups != before {
			t.Fatalf("a forged X-Forwarded-For through the proxy: %d, %d lookups; want 429 and none", code, keys.lookups-before)
		}
	})

	t.Run("forged around the proxy", func(t *testing.T) {
		api, keys := newAPI()
		_, direct := behindProxy(t, "127.0.0.1", api)
		guess(a, direct, 3, true)
		before := keys.lookups
		if code := call(a, direct, "/api/v1/webhooks", "svc_api_more", "198.51.100.99"); code != http.StatusTooManyRequests || keys.lookups != before {
			t.Fatalf("a forged X-Forwarded-For from an untrusted address: %d, %d lookups; want 429 and none", code, keys.lookups-before)
		}
	})
}
