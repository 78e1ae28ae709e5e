package server

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"
)

func TestTrustedProxiesSetting(t *testing.T) {
	if cfg := testConfig(t, nil); !cfg.TrustedProxies.Empty() {
		t.Fatalf("default: %q, want none", cfg.TrustedProxies)
	}
	cfg := testConfig(t, map[string]string{"EARSHOT_TRUSTED_PROXIES": "10.0.0.0/8, 192.0.2.7,2001:db8::/32"})
	if got := cfg.TrustedProxies.String(); got != "10.0.0.0/8,192.0.2.7/32,2001:db8::/32" {
		t.Fatalf("EARSHOT_TRUSTED_PROXIES read as %q", got)
	}
	for _, c := range []struct {
		env, flag, value, want string
	}{
		{"EARSHOT_TRUSTED_PROXIES", "", "10.0.0.0/33", "EARSHOT_TRUSTED_PROXIES=10.0.0.0/33: accepts a comma-separated list of IP addresses and CIDRs"},
		{"EARSHOT_TRUSTED_PROXIES", "", "lb.internal", "EARSHOT_TRUSTED_PROXIES=lb.internal: accepts"},
		{"EARSHOT_TRUSTED_PROXIES", "", "0.0.0.0/0", "EARSHOT_TRUSTED_PROXIES=0.0.0.0/0: accepts"},
		{"", "--trusted-proxies", "10.0.0.1,", "--trusted-proxies=10.0.0.1,: accepts"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		read := ConfigFlags(fs, func(k string) string {
			if k == c.env {
				return c.value
			}
			return ""
		})
		var args []string
		if c.flag != "" {
			args = []string{c.flag, c.value}
		}
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		_, err := read()
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s%s=%s: %v, want %q", c.env, c.flag, c.value, err, c.want)
		}
	}
}

// The review's case, on the whole server with its own limiter: behind
// a load balancer on loopback (net/http/httputil's reverse proxy, which
// appends the address it was connected from to X-Forwarded-For as
// nginx and the cloud balancers do), one client sends bad keys to the
// end of its quota. Trusting the balancer, another client's valid key
// still answers; without the setting, every client behind the balancer
// shares its quota, as documented, and the valid key gets 429.
func TestTrustedProxiesAreWired(t *testing.T) {
	guesser, owner := clientFrom(t, "127.0.0.2"), clientFrom(t, "127.0.0.3")
	for _, c := range []struct {
		trusted string
		want    int
	}{{"127.0.0.1", http.StatusOK}, {"", http.StatusTooManyRequests}} {
		t.Run("trusted="+c.trusted, func(t *testing.T) {
			cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": "sqlite://:memory:", "EARSHOT_ADDR": "127.0.0.1:0",
				"EARSHOT_SECRET_KEY": strings.Repeat("k", 32), "EARSHOT_RATE_LIMIT_PER_MINUTE": "3", "EARSHOT_TRUSTED_PROXIES": c.trusted})
			var out strings.Builder
			var site *Site
			a := Serve(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), &out, fx.Populate(&site))
			if err := a.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer a.Stop(context.Background())
			_, rest, _ := strings.Cut(out.String(), "API key (every scope):")
			key, _, _ := strings.Cut(strings.TrimSpace(rest), "\n")
			if !strings.HasPrefix(key, "svc_api_") {
				t.Fatalf("no API key in the first start's output:\n%s", out.String())
			}
			u, _ := url.Parse(site.URL())
			proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(u))
			defer proxy.Close()
			call := func(c *http.Client, key string) int {
				t.Helper()
				req, _ := http.NewRequest("GET", proxy.URL+"/api/v1/keywords", nil)
				req.Header.Set("Authorization", "Bearer "+key)
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			for i := range 3 {
				if code := call(guesser, "svc_api_bad"); code != http.StatusUnauthorized {
					t.Fatalf("bad key %d: %d, want 401", i, code)
				}
			}
			if code := call(guesser, key); code != http.StatusTooManyRequests {
				t.Fatalf("the guesser's own valid key: %d, want 429", code)
			}
			if code := call(owner, key); code != c.want {
				t.Fatalf("another client's valid key: %d, want %d", code, c.want)
			}
		})
	}
}

// clientFrom dials from ip, one of the loopback addresses, so that
// clients are told apart by their address as clients behind a load
// balancer are. Linux routes the whole of 127.0.0.0/8 to the loopback
// interface; elsewhere only 127.0.0.1 may be there.
func clientFrom(t *testing.T, ip string) *http.Client {
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
