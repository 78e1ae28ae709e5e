package helper_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/testkit/proxytest"
)

// Through a socks5 proxy the platform client hands the proxy each host
// name (ATYP 3) and resolves none itself: a local lookup would tell the
// local resolver what the owner reads. net/http's Transport.Proxy with a
// socks5:// URL treats socks5 as socks5h, which this pins. The host is
// a name no resolver knows (RFC 2606's .invalid): a client that resolved
// it locally would fail before reaching the proxy, or hand it an
// address.
//
// Not shown: what the proxy does with the name, and https, which is
// dialed the same way (net/http's Transport.dialConn) with TLS on top.
func TestPlatformClientGivesSocksProxyTheName(t *testing.T) {
	var p helper.ProxyInfo
	p.Proxy.Username, p.Proxy.Password = "owner", "secret"
	px := getThroughSocks(t, "socks5", p)
	want := []proxytest.SocksAsk{{ATYP: 3, Host: "earshot-socks-test.invalid", Port: 80, User: "owner", Password: "secret"}}
	if got := px.Asks(); !slices.Equal(got, want) {
		t.Fatalf("the proxy was asked for %+v, want %+v", got, want)
	}
}

// getThroughSocks gets a page of a name no resolver knows with the
// platform client of p, whose proxy is scheme:// a socks proxy in front
// of a server that answers with the host it was asked for, and fails t
// unless that page comes back; the proxy, which recorded the asks.
func getThroughSocks(t *testing.T, scheme string, p helper.ProxyInfo) *proxytest.Socks {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "served through the proxy to "+r.Host)
	}))
	t.Cleanup(srv.Close)
	px := proxytest.NewSocks(t, srv.Listener.Addr().String())
	p.Required = true
	p.Proxy.Server = scheme + "://" + px.Addr()
	hc, via, err := helper.PlatformClient(p, false)
	if err != nil || !via {
		t.Fatalf("%s client: via %t, %v", scheme, via, err)
	}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("http://earshot-socks-test.invalid/page")
	if err != nil {
		t.Fatalf("%s: %v", scheme, err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "served through the proxy to earshot-socks-test.invalid" {
		t.Fatalf("%s: %d %q", scheme, resp.StatusCode, body)
	}
	return px
}
