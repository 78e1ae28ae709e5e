package browser

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
)

// The switches Start gives Chromium: those that keep its own requests
// off are always there, whatever the proxy; a socks5 proxy adds the
// host-resolver rules that leave the proxy's name the only one resolved
// locally (socks_test.go shows what they change), and every other
// switch stays as it is without a proxy.
func TestFlags(t *testing.T) {
	base := []flag{
		{"user-data-dir", "/profile"},
		{"disable-gpu", true},
		{"enable-unsafe-swiftshader", true},
		{"disable-background-networking", true},
		{"disable-component-update", true},
		{"disable-sync", true},
		{"no-first-run", true},
		// quiet: Chromium's own requests off (quiet_test.go).
		{"disable-features", "Translate,BlinkGenPropertyTrees,OptimizationHints,NetworkTimeServiceQuerying,AutofillServerCommunication,MediaRouter,DialMediaRouteProvider"},
		{"disable-field-trial-config", true},
		{"disable-domain-reliability", true},
		{"disable-component-extensions-with-background-pages", true},
		{"disable-client-side-phishing-detection", true},
		{"disable-default-apps", true},
		{"disable-breakpad", true},
		{"metrics-recording-only", true},
		{"no-pings", true},
		{"gaia-url", "https://earshot-no-sign-in.invalid:1"},
		{"optimization-guide-manifest-override", "/profile/no-model-manifest"},
		{"webrtc-ip-handling-policy", "disable_non_proxied_udp"},
		{"disable-quic", true},
	}
	with := func(fs ...flag) []flag { return append(append([]flag(nil), base...), fs...) }
	bypass := flag{"proxy-bypass-list", "<-loopback>"}
	cases := []struct {
		name  string
		proxy string
		o     Options
		want  []flag
	}{
		{"no proxy", "", Options{}, base},
		{"visible, no sandbox", "", Options{Visible: true, NoSandbox: true}, with(flag{"headless", false}, flag{"no-sandbox", true})},
		{"http", "http://u:secret@proxy.example:3128", Options{}, with(flag{"proxy-server", "http://proxy.example:3128"}, bypass)},
		{"https", "https://proxy.example", Options{}, with(flag{"proxy-server", "https://proxy.example"}, bypass)},
		{"socks5", "socks5://u:secret@proxy.example:1080", Options{},
			with(flag{"host-resolver-rules", "MAP * ~NOTFOUND , EXCLUDE proxy.example"}, flag{"proxy-server", "socks5://proxy.example:1080"}, bypass)},
		{"socks5h, which Chromium calls socks5", "socks5h://10.0.0.7:1080", Options{NoSandbox: true},
			with(flag{"no-sandbox", true}, flag{"host-resolver-rules", "MAP * ~NOTFOUND , EXCLUDE 10.0.0.7"}, flag{"proxy-server", "socks5://10.0.0.7:1080"}, bypass)},
		// Chromium matches the bare address: "EXCLUDE [::1]" leaves the
		// proxy unreachable (ERR_PROXY_CONNECTION_FAILED), as no EXCLUDE
		// does for a proxy at 127.0.0.1 or localhost.
		{"socks5 at an IPv6 address", "socks5://[::1]:1080", Options{},
			with(flag{"host-resolver-rules", "MAP * ~NOTFOUND , EXCLUDE ::1"}, flag{"proxy-server", "socks5://[::1]:1080"}, bypass)},
	}
	for _, c := range cases {
		o := c.o
		if c.proxy != "" {
			u, err := url.Parse(c.proxy)
			if err != nil {
				t.Fatal(err)
			}
			o.Proxy = u
		}
		got, err := flags(o, "/profile")
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %v\nwant %v", c.name, got, c.want)
		}
		for _, f := range got {
			if s, ok := f.value.(string); ok && strings.Contains(s, "secret") {
				t.Errorf("%s: the proxy's password on the command line: %s=%s", c.name, f.name, s)
			}
		}
	}
	// socks4 carries addresses only: Chromium would resolve every name.
	for _, p := range []string{"socks4://proxy.example:1080", "socks://proxy.example:1080", "ftp://proxy.example"} {
		u, _ := url.Parse(p)
		if fs, err := flags(Options{Proxy: u}, "/profile"); err == nil {
			t.Errorf("%s: flags %v, want it refused", p, fs)
		}
	}
}
