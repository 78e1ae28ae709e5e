package dashboard

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/clientip"
	"github.com/earshothq/earshot/core"
)

// perAddrSessions allows each address two sign-in requests and refuses
// the rest as app.Sessions refuses an address past its requests of the
// minute.
type perAddrSessions struct {
	fakeSessions
	mu     sync.Mutex
	counts map[string]int
}

func (s *perAddrSessions) RequestLink(_ context.Context, _, addr string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.counts[addr] >= 2 {
		return core.Errorf(core.KindRateLimited, "too many sign-in requests: wait a minute and try again")
	}
	s.counts[addr]++
	return nil
}

// fromLoopback dials from ip, one of the loopback addresses, so that
// clients of a test are told apart by their address as clients behind
// a load balancer are. Linux routes the whole of 127.0.0.0/8 to the
// loopback interface; elsewhere only 127.0.0.1 may be there.
func fromLoopback(t *testing.T, ip string) *http.Client {
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

// Behind a load balancer every request comes from the balancer's
// address. Trusting it (EARSHOT_TRUSTED_PROXIES), two clients behind it
// have their own sign-in requests each; without it they share the
// balancer's, as documented; a client writing X-Forwarded-For itself
// gets no count of its own by it. The proxy is net/http/httputil's,
// which appends the address it was connected from to X-Forwarded-For,
// as nginx and the cloud load balancers do; the dashboard is wrapped
// as package server wraps every edge.
func TestSignInRequestsBehindAProxy(t *testing.T) {
	a, b := fromLoopback(t, "127.0.0.2"), fromLoopback(t, "127.0.0.3")
	for _, c := range []struct {
		name, trusted string
		forge         bool
		wantB         int
		wantAddrs     []string
	}{
		{"trusted", "127.0.0.1", false, http.StatusOK, []string{"127.0.0.2", "127.0.0.3"}},
		{"forged through a trusted proxy", "127.0.0.1", true, http.StatusOK, []string{"127.0.0.2", "127.0.0.3"}},
		{"not trusted", "", false, http.StatusTooManyRequests, []string{"127.0.0.1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := &perAddrSessions{counts: map[string]int{}}
			d, err := New(Config{}, Deps{Sessions: s})
			if err != nil {
				t.Fatal(err)
			}
			p, err := clientip.ParseProxies(c.trusted)
			if err != nil {
				t.Fatal(err)
			}
			backend := httptest.NewServer(p.Handler(d))
			defer backend.Close()
			u, _ := url.Parse(backend.URL)
			proxy := httptest.NewServer(httputil.NewSingleHostReverseProxy(u))
			defer proxy.Close()
			post := func(client *http.Client, forged string) int {
				t.Helper()
				req, _ := http.NewRequest("POST", proxy.URL+"/app/login", strings.NewReader(url.Values{"email": {"a@example.com"}}.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.Header.Set("Sec-Fetch-Site", "same-origin")
				if forged != "" {
					req.Header.Set("X-Forwarded-For", forged)
				}
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode
			}
			forged := func(i int) string {
				if c.forge {
					return "203.0.113." + strconv.Itoa(i+1)
				}
				return ""
			}
			for i := range 2 {
				if code := post(a, forged(i)); code != http.StatusOK {
					t.Fatalf("request %d: %d", i, code)
				}
			}
			if code := post(a, forged(2)); code != http.StatusTooManyRequests {
				t.Fatalf("a third request from one client: %d, want 429", code)
			}
			if code := post(b, ""); code != c.wantB {
				t.Fatalf("another client's first request: %d, want %d", code, c.wantB)
			}
			s.mu.Lock()
			defer s.mu.Unlock()
			if len(s.counts) != len(c.wantAddrs) {
				t.Fatalf("counted under %v, want %v", s.counts, c.wantAddrs)
			}
			for _, addr := range c.wantAddrs {
				if _, ok := s.counts[addr]; !ok {
					t.Fatalf("counted under %v, want %v", s.counts, c.wantAddrs)
				}
			}
		})
	}
}
