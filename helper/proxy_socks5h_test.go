package helper_test

import (
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
	var p helper.ProxyInfo
	px := getThroughSocks(t, "socks5h", p)
	want := []proxytest.SocksAsk{{ATYP: 3, Host: "earshot-socks-test.invalid", Port: 80}}
	if got := px.Asks(); !slices.Equal(got, want) {
		t.Fatalf("the proxy was asked for %+v, want %+v", got, want)
	}

	// socks4 carries addresses only: still refused.
	p.Required = true
	p.Proxy.Server = "socks4://" + px.Addr()
	if _, _, err := helper.PlatformClient(p, false); err == nil {
		t.Fatal("a socks4 proxy was taken")
	}
}
