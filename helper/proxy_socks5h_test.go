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

// docs/helpers.md ("A socks5 proxy and names") lists socks5h:// among the
// proxies the helper takes from GET /proxy, beside socks5://; the browser
// takes it too (helper/browser's proxy switch). A deployment naming one
// must not fail every pass of the helper's own requests.
func TestHelperDocsPlatformClientTakesSocks5h(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "served through the proxy to "+r.Host)
	}))
	t.Cleanup(srv.Close)
	px := proxytest.NewSocks(t, srv.Listener.Addr().String())
	var p helper.ProxyInfo
	p.Required = true
	p.Proxy.Server = "socks5h://" + px.Addr()
	hc, via, err := helper.PlatformClient(p, false)
	if err != nil || !via {
		t.Fatalf("client: via %t, %v", via, err)
	}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get("http://earshot-socks-test.invalid/page")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "served through the proxy to earshot-socks-test.invalid" {
		t.Fatalf("%d %q", resp.StatusCode, body)
	}
	want := []proxytest.SocksAsk{{ATYP: 3, Host: "earshot-socks-test.invalid", Port: 80}}
	if got := px.Asks(); !slices.Equal(got, want) {
		t.Fatalf("the proxy was asked for %+v, want %+v", got, want)
	}

	// socks4 carries addresses only: still refused.
	p.Proxy.Server = "socks4://" + px.Addr()
	if _, _, err := helper.PlatformClient(p, false); err == nil {
		t.Fatal("a socks4 proxy was taken")
	}
}
