package browser

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/earshothq/earshot/testkit/proxytest"
)

// quietIdle is how long Chromium is left idle after the page has loaded:
// Chromium 156 without the switches of flags asked the proxy for Google's
// hosts (clients2.google.com, accounts.google.com, update.googleapis.com,
// optimizationguide-pa.googleapis.com) within a few seconds of its start.
const quietIdle = 8 * time.Second

// Chromium asks the operator's proxy for the page's host and for nothing
// of its own: each background request of Chromium's (component and
// variations updates, sign-in, optimization hints, metrics) would spend
// the owner's proxy traffic and mark the session as a Chrome that talks
// to Google. Nor does it connect anywhere but to the proxy: a direct
// connect goes around the proxy the owner chose.
//
// The page loads through an in-process proxy (socks5, and http, the
// other kind Start takes) that records every host it is asked for;
// Chromium is then left idle until quietIdle has passed or the proxy is
// asked for another host. Chromium's NetLog lists each socket it
// connects, TCP or UDP (TCP_CONNECT_ATTEMPT, UDP_CONNECT, with their
// addresses; net/log/net_log_event_type_list.h), wherever the connect
// comes from, and each datagram sent (UDP_BYTES_SENT, UDP_SEND_ERROR):
// no TCP connect is to be to an address but loopback's, and no UDP
// socket connected elsewhere is to send anything. Chromium 156 connects
// one such UDP socket, to 2001:4860:4860::8888, to check that IPv6 is
// reachable before each lookup, and closes it unused (strace showed the
// connect and no send on it).
//
// What it does not prove: what Chromium does after quietIdle (a
// component or variations update is due hours after start), nor what a
// page's own scripts ask for.
func TestChromiumAsksTheProxyOnlyForThePage(t *testing.T) {
	const host = "earshot-quiet-test.invalid"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<!doctype html><p>served through the proxy</p>`)
	}))
	t.Cleanup(srv.Close)
	for _, kind := range []string{"socks5", "http"} {
		t.Run(kind, func(t *testing.T) {
			var (
				proxy *url.URL
				asked func() []string
				wake  <-chan struct{}
			)
			switch kind {
			case "socks5":
				px := proxytest.NewSocks(t, srv.Listener.Addr().String())
				proxy = &url.URL{Scheme: "socks5", Host: px.Addr()}
				asked = func() []string {
					var hs []string
					for _, a := range px.Asks() {
						hs = append(hs, a.Host)
					}
					return hs
				}
				wake = px.Wake()
			case "http":
				px := proxytest.NewConnect(t, srv.Listener.Addr().String())
				proxy = &url.URL{Scheme: "http", Host: px.Addr()}
				asked, wake = px.Hosts, px.Wake()
			}
			netlog := filepath.Join(t.TempDir(), "netlog.json")
			b := start(t, Options{Proxy: proxy, Timeout: 20 * time.Second,
				extra: []flag{{"log-net-log", netlog}, {"net-log-capture-mode", "Everything"}}})
			p, err := b.Read(context.Background(), Request{URL: "http://" + host + "/", Done: func(*Page) bool { return true }})
			if err != nil {
				t.Fatal(err)
			}
			if p.Status != 200 || !strings.Contains(string(p.Document), "served through the proxy") {
				t.Fatalf("page %d %q", p.Status, p.Document)
			}
			// Idle until quietIdle has passed, or sooner once the proxy is
			// asked for another host: the test has failed by then.
			ctx, cancel := context.WithTimeout(context.Background(), quietIdle)
			defer cancel()
		idle:
			for {
				select {
				case <-ctx.Done():
					break idle
				case <-wake:
					if strays(asked(), host) != nil {
						break idle
					}
				}
			}
			// Chromium completes its NetLog when it is closed gracefully,
			// which chromedp.Cancel does and waits for.
			if err := chromedp.Cancel(b.ctx); err != nil {
				t.Fatal(err)
			}
			if s := strays(asked(), host); s != nil {
				t.Errorf("the proxy was asked for %q besides the page's host", s)
			}
			for _, c := range connects(t, netlog) {
				switch {
				case c.addr.Addr().IsLoopback():
				case c.event == "UDP_CONNECT" && !c.sent:
					// The resolver's IPv6 check (flags' quiet says why it
					// stays): a UDP connect without a datagram puts
					// nothing on the wire.
				default:
					t.Errorf("Chromium connected to %s outside the proxy (%s, sent: %v)", c.addr, c.event, c.sent)
				}
			}
		})
	}
}

// strays are the hosts in asks other than host.
func strays(asks []string, host string) []string {
	var out []string
	for _, h := range asks {
		if h != host {
			out = append(out, h)
		}
	}
	return out
}

// connect is one socket connect in a NetLog; sent says a UDP socket
// sent, or tried to send, a datagram.
type connect struct {
	event string
	addr  netip.AddrPort
	sent  bool
}

// connects reads a Chromium NetLog (readNetLog) and returns every socket
// connect it lists with its address: TCP_CONNECT_ATTEMPT and
// UDP_CONNECT carry the address tried, and a UDP socket's sends are
// events of the same source (its id).
func connects(t *testing.T, path string) []connect {
	t.Helper()
	var out []connect
	sent := map[int]bool{}
	udp := map[int][]int{} // a UDP socket's id: its connects in out
	for _, e := range readNetLog(t, path) {
		switch n := e.name; n {
		case "TCP_CONNECT_ATTEMPT", "UDP_CONNECT":
			if e.params.Address == "" {
				continue
			}
			a, err := netip.ParseAddrPort(e.params.Address)
			if err != nil {
				t.Errorf("%s to %q: %v", n, e.params.Address, err)
				continue
			}
			if n == "UDP_CONNECT" {
				udp[e.source] = append(udp[e.source], len(out))
			}
			out = append(out, connect{event: n, addr: a})
		case "UDP_BYTES_SENT", "UDP_SEND_ERROR":
			sent[e.source] = true
		}
	}
	for id, is := range udp {
		for _, i := range is {
			out[i].sent = sent[id]
		}
	}
	return out
}
