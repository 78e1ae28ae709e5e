package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// limitedSessions refuses every sign-in request as app.Sessions does an
// address past its requests of the minute.
type limitedSessions struct{ fakeSessions }

func (limitedSessions) RequestLink(context.Context, string, string) error {
	return core.Errorf(core.KindRateLimited, "too many sign-in requests: wait a minute and try again")
}

// A sign-in request past the limit is 429 with Retry-After, as every
// other 429 of the dashboard is, so a client knows when to ask again.
func TestSignInRequestsPastTheLimitSayWhenToRetry(t *testing.T) {
	d, err := New(Config{}, Deps{Sessions: limitedSessions{}})
	if err != nil {
		t.Fatal(err)
	}
	w := serve(d, formPost("/app/login", url.Values{"email": {"a@example.com"}}, "same-origin", false))
	if w.Code != http.StatusTooManyRequests || !strings.Contains(w.Body.String(), "wait a minute") {
		t.Fatalf("status %d\n%s", w.Code, w.Body)
	}
	if s, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || s <= 0 {
		t.Fatalf("Retry-After %q, want a positive number of seconds", w.Header().Get("Retry-After"))
	}
}

// addrSessions records the requesting address each sign-in request is
// counted under.
type addrSessions struct {
	fakeSessions
	addrs *[]string
}

func (s addrSessions) RequestLink(_ context.Context, _, addr string) error {
	*s.addrs = append(*s.addrs, addr)
	return nil
}

// An IPv6 client holds a whole /64 and picks any address in it, so the
// sign-in requests an address may make a minute are counted per /64:
// otherwise one client would ask without bound by changing the last bits.
func TestSignInRequestsCountedPerIPv6Network(t *testing.T) {
	var addrs []string
	d, err := New(Config{}, Deps{Sessions: addrSessions{addrs: &addrs}})
	if err != nil {
		t.Fatal(err)
	}
	for _, remote := range []string{"[2001:db8:1:2::1]:4000", "[2001:db8:1:2:ffff::9]:4001", "[2001:db8:1:3::1]:4000", "192.0.2.7:4000", "192.0.2.8:4000"} {
		r := formPost("/app/login", url.Values{"email": {"a@example.com"}}, "same-origin", false)
		r.RemoteAddr = remote
		if w := serve(d, r); w.Code != http.StatusOK {
			t.Fatalf("%s: status %d", remote, w.Code)
		}
	}
	if len(addrs) != 5 || addrs[0] != addrs[1] || addrs[1] == addrs[2] || addrs[3] == addrs[4] || addrs[3] != "192.0.2.7" {
		t.Fatalf("counted under %q: want one key for the /64 2001:db8:1:2::, another for 2001:db8:1:3::, and each IPv4 address its own", addrs)
	}
}
