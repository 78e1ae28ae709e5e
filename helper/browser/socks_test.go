package browser

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/earshothq/earshot/testkit/proxytest"
)

// Through a socks5 proxy, Chromium is to hand the proxy every name and
// resolve none itself: the local resolver would otherwise learn what the
// owner reads. The page loads through an in-process proxy
// (proxytest.Socks) under a name no resolver knows (RFC 2606's
// .invalid), with DNS-prefetch and preconnect hints for two more such
// names; Chromium writes its NetLog
// (--log-net-log), whose host-resolver events are every name it looked
// up itself.
//
// What it proves: the proxy was asked for the page's name as a domain
// name (ATYP 3), never an address; Chromium's host resolver was asked
// for no name but the proxy's (the rest answered "not found" by
// --host-resolver-rules before any lookup), and it made no DNS query
// and no getaddrinfo call (no DNS_TRANSACTION, HOST_RESOLVER_DNS_TASK or
// HOST_RESOLVER_SYSTEM_TASK event). Without --host-resolver-rules,
// Chromium 156 asks its resolver for the page's name and for Google's
// hosts of its own background requests, from its cache and the hosts
// file only: none of those went out as a DNS query on this machine
// (strace showed no packet to port 53 either way), but the rules make
// sure no path of Chromium's, today's or a later one's, can.
//
// What it does not prove: what a page's WebRTC does (its ICE candidates
// go by UDP, outside the proxy), nor what the proxy itself does with the
// names, nor anything of an http(s) proxy, to which names always go
// inside the request.
func TestSocksProxyIsGivenEveryName(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, `<!doctype html><link rel="dns-prefetch" href="//earshot-prefetch.invalid">`+
			`<link rel="preconnect" href="http://earshot-preconnect.invalid"><p>served through the proxy</p>`)
	}))
	t.Cleanup(srv.Close)
	px := proxytest.NewSocks(t, srv.Listener.Addr().String())
	netlog := filepath.Join(t.TempDir(), "netlog.json")
	b := start(t, Options{Proxy: &url.URL{Scheme: "socks5", Host: px.Addr()}, Timeout: 20 * time.Second,
		extra: []flag{{"log-net-log", netlog}, {"net-log-capture-mode", "Everything"}}})
	p, err := b.Read(context.Background(), Request{URL: "http://earshot-socks-test.invalid/", Done: func(*Page) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != 200 || !strings.Contains(string(p.Document), "served through the proxy") || hits.Load() == 0 {
		t.Fatalf("page %d %q, %d hits", p.Status, p.Document, hits.Load())
	}
	asks := px.Asks()
	if !slices.Contains(asks, proxytest.SocksAsk{ATYP: 3, Host: "earshot-socks-test.invalid", Port: 80}) {
		t.Errorf("the proxy was not asked for the page's name: %+v", asks)
	}
	for _, a := range asks {
		if a.ATYP != 3 {
			t.Errorf("the proxy was asked for an address, resolved by Chromium: %+v", a)
		}
	}
	// Chromium completes its NetLog when it is closed gracefully, which
	// chromedp.Cancel does and waits for.
	if err := chromedp.Cancel(b.ctx); err != nil {
		t.Fatal(err)
	}
	looked, wire := resolves(t, netlog)
	for _, h := range looked {
		if h != "127.0.0.1" && h != "~notfound" {
			t.Errorf("Chromium's resolver was asked for %q", h)
		}
	}
	if len(wire) > 0 {
		t.Errorf("Chromium resolved names on the network: %v", wire)
	}
}

// A proxy named by its host name stays reachable: its name is the one
// the rules leave to the local resolver.
func TestSocksProxyByName(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "served through the proxy")
	}))
	t.Cleanup(srv.Close)
	px := proxytest.NewSocks(t, srv.Listener.Addr().String())
	_, port, _ := net.SplitHostPort(px.Addr())
	b := start(t, Options{Proxy: &url.URL{Scheme: "socks5", Host: "localhost:" + port}, Timeout: 20 * time.Second})
	p, err := b.Read(context.Background(), Request{URL: "http://earshot-socks-test.invalid/", Done: func(*Page) bool { return true }})
	if err != nil {
		t.Fatal(err)
	}
	if p.Status != 200 || !strings.Contains(string(p.Document), "served through the proxy") {
		t.Fatalf("page %d %q", p.Status, p.Document)
	}
}

// resolves reads a Chromium NetLog (readNetLog) and returns the hosts its
// resolver was asked for (without scheme or port) and the names of the
// events of a lookup made outside Chromium's cache and hosts file.
func resolves(t *testing.T, path string) (hosts, wire []string) {
	t.Helper()
	for _, e := range readNetLog(t, path) {
		switch e.name {
		case "HOST_RESOLVER_MANAGER_REQUEST":
			if h := e.params.Host; h != "" {
				if i := strings.Index(h, "://"); i >= 0 {
					h = h[i+3:]
				}
				if hh, _, err := net.SplitHostPort(h); err == nil {
					h = hh
				}
				hosts = append(hosts, h)
			}
		case "DNS_TRANSACTION", "HOST_RESOLVER_DNS_TASK", "HOST_RESOLVER_SYSTEM_TASK":
			wire = append(wire, e.name)
		}
	}
	return hosts, wire
}

// With its socks5 proxy down, Chromium reaches nothing: not the page's
// name, which it cannot resolve, nor a name it can (localhost, whose
// server is up), which it does not try directly.
func TestSocksProxyDownReachesNothing(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(srv.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := ln.Addr().String()
	ln.Close()
	b := start(t, Options{Proxy: &url.URL{Scheme: "socks5", Host: down}, Timeout: 20 * time.Second})
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	for _, u := range []string{"http://earshot-socks-test.invalid/", "http://localhost:" + port + "/"} {
		_, err := b.Read(context.Background(), Request{URL: u, Done: func(*Page) bool { return true }})
		if err == nil || !strings.Contains(err.Error(), "ERR_PROXY_CONNECTION_FAILED") {
			t.Errorf("%s with the proxy down: %v", u, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the server was reached %d times with the proxy down", n)
	}
}
