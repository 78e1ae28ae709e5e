package core_test

import (
	"errors"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

const (
	msgHTTPS     = "url must use https"
	msgUserinfo  = "url must not contain a username or password"
	msgPort      = "url must use the default port 443"
	msgIP        = "url host must be a public name, not an IP address"
	msgLocalhost = "url host localhost is not allowed"
	msgSingle    = "url host must be a full public name such as hooks.example.com"
	msgSyntax    = "url host is not a valid host name"
	msgASCII     = "url host must be ASCII; write an international name in its xn-- form"
	msgTLD       = "url host must end in a real top-level domain"
	msgNoHost    = "url must have a host name"
	msgParse     = "url is not a valid address"
)

func under(s string) string    { return "url host under ." + s + " is not allowed" }
func wildcard(s string) string { return "url host is a wildcard-DNS service (" + s + ")" }

func TestCheckWebhookURL(t *testing.T) {
	long := "https://hooks.example.com/" + strings.Repeat("a", core.MaxWebhookURLLen-len("https://hooks.example.com/"))
	cases := []struct {
		in   string
		want string // normalised address when accepted
		err  string // message when refused
	}{
		// Accepted, and how they are normalised.
		{in: "https://hooks.example.com/earshot", want: "https://hooks.example.com/earshot"},
		{in: "https://example.com", want: "https://example.com/"},
		{in: "https://example.com?a=1", want: "https://example.com/?a=1"},
		{in: "https://hooks.example.com/%7Ea/%41%62%30-%5f%2D%7e", want: "https://hooks.example.com/~a/Ab0-_-~"},
		{in: "https://hooks.example.com/a%2fb%2E%2e%25%20", want: "https://hooks.example.com/a%2Fb%2E%2E%25%20"},
		{in: "https://hooks.example.com/x?a=%7E", want: "https://hooks.example.com/x?a=%7E"},
		{in: "  https://example.com/x  ", want: "https://example.com/x"},
		{in: "HTTPS://Hooks.Example.COM/Path", want: "https://hooks.example.com/Path"},
		{in: "https://hooks.example.com./x", want: "https://hooks.example.com/x"},
		{in: "https://hooks.example.com:443/x", want: "https://hooks.example.com/x"},
		{in: "https://hooks.example.com:0443/x", want: "https://hooks.example.com/x"},
		{in: "https://hooks.example.com:/x", want: "https://hooks.example.com/x"},
		{in: "https://hooks.example.com/x?a=1&b=2", want: "https://hooks.example.com/x?a=1&b=2"},
		{in: "https://hooks.example.com/x#frag", want: "https://hooks.example.com/x"},
		{in: "https://hooks.example.com/a%2Fb", want: "https://hooks.example.com/a%2Fb"},
		{in: "https://hooks.example.com/a b", want: "https://hooks.example.com/a%20b"},
		{in: "https://xn--bcher-kva.example/x", err: under("example")},
		{in: "https://xn--bcher-kva.de/x", want: "https://xn--bcher-kva.de/x"},
		{in: "https://shop.xn--p1ai/x", want: "https://shop.xn--p1ai/x"},
		{in: "https://1.2.3.4.example-public.com/", want: "https://1.2.3.4.example-public.com/"},
		{in: "https://a-b.c-d.co.uk/", want: "https://a-b.c-d.co.uk/"},
		{in: "https://localhost.example.com/", want: "https://localhost.example.com/"},
		{in: "https://mynip.io/", want: "https://mynip.io/"},
		{in: "https://local.com/", want: "https://local.com/"},
		{in: long, want: long},

		// Length and syntax.
		{in: "", err: "url is required"},
		{in: "   ", err: "url is required"},
		{in: long + "a", err: "url must be at most 2048 characters"},
		{in: "https://exa mple.com/", err: msgParse},
		{in: "https://example.com/\x00", err: msgParse},
		{in: "https://[::1", err: msgParse},
		{in: "https://example.com:99999999999/", err: "url port must be 1 to 65535"},
		{in: "https://%6cocalhost/", err: msgParse},
		{in: "hooks.example.com/x", err: msgHTTPS},
		{in: "//hooks.example.com/x", err: msgHTTPS},
		{in: "https:hooks.example.com", err: msgNoHost},
		{in: "https:///x", err: msgNoHost},
		{in: "https://", err: msgNoHost},

		// Scheme.
		{in: "http://hooks.example.com/", err: msgHTTPS},
		{in: "ftp://hooks.example.com/", err: msgHTTPS},
		{in: "javascript:alert(1)", err: msgHTTPS},
		{in: "file:///etc/passwd", err: msgHTTPS},
		{in: "gopher://hooks.example.com/", err: msgHTTPS},

		// Userinfo.
		{in: "https://user:pass@hooks.example.com/", err: msgUserinfo},
		{in: "https://user@hooks.example.com/", err: msgUserinfo},
		{in: "https://@hooks.example.com/", err: msgUserinfo},
		{in: "https://hooks.example.com@127.0.0.1/", err: msgUserinfo},
		{in: "https://hooks.example.com\\@127.0.0.1/", err: msgParse},
		{in: "https://hooks.example.com:443@evil.com/", err: msgUserinfo},

		// Port.
		{in: "https://hooks.example.com:8443/", err: msgPort},
		{in: "https://hooks.example.com:80/", err: msgPort},
		{in: "https://hooks.example.com:22/", err: msgPort},
		{in: "https://hooks.example.com:0/", err: "url port must be 1 to 65535"},
		{in: "https://hooks.example.com:65536/", err: "url port must be 1 to 65535"},

		// IP literals in every spelling.
		{in: "https://127.0.0.1/", err: msgIP},
		{in: "https://127.0.0.1./", err: msgIP},
		{in: "https://127.1/", err: msgIP},
		{in: "https://10.1/", err: msgIP},
		{in: "https://8.8.8.8/", err: msgIP},
		{in: "https://169.254.169.254/latest/meta-data/", err: msgIP},
		{in: "https://0x7f000001/", err: msgIP},
		{in: "https://0X7F000001/", err: msgIP},
		{in: "https://0x7f.0.0.1/", err: msgIP},
		{in: "https://0x/", err: msgIP},
		{in: "https://0177.0.0.1/", err: msgIP},
		{in: "https://2130706433/", err: msgIP},
		{in: "https://0/", err: msgIP},
		{in: "https://example.123/", err: msgIP},
		{in: "https://example.0x1f/", err: msgIP},
		{in: "https://[::1]/", err: msgIP},
		{in: "https://[::1]:443/", err: msgIP},
		{in: "https://[::ffff:127.0.0.1]/", err: msgIP},
		{in: "https://[::ffff:7f00:1]/", err: msgIP},
		{in: "https://[fe80::1%25eth0]/", err: msgIP},
		{in: "https://[2606:4700::1111]/", err: msgIP},
		{in: "https://[fd00::1]/", err: msgIP},

		// Host name syntax.
		{in: "https://-bad.example.com/", err: msgSyntax},
		{in: "https://bad-.example.com/", err: msgSyntax},
		{in: "https://under_score.example.com/", err: msgSyntax},
		{in: "https://a..example.com/", err: msgSyntax},
		{in: "https://example.com../", err: msgSyntax},
		{in: "https://" + strings.Repeat("a", 64) + ".com/", err: msgSyntax},
		{in: "https://" + strings.Repeat("a.", 127) + "com/", err: msgSyntax},
		{in: "https://bücher.de/", err: msgASCII},
		{in: "https://ｌｏｃａｌｈｏｓｔ/", err: msgASCII},
		{in: "https://１２７.０.０.１/", err: msgASCII},
		{in: "https://example。com/", err: msgASCII},
		{in: "https://example.c/", err: msgTLD},
		{in: "https://example.c0m/", err: msgTLD},
		{in: "https://example.xn--/", err: msgSyntax},
		{in: "https://example.xn--a/", want: "https://example.xn--a/"},

		// Local and private names.
		{in: "https://localhost/", err: msgLocalhost},
		{in: "https://LOCALHOST./", err: msgLocalhost},
		{in: "https://localhost:443/", err: msgLocalhost},
		{in: "https://api.localhost/", err: under("localhost")},
		{in: "https://printer.local/", err: under("local")},
		{in: "https://metadata.google.internal/", err: under("internal")},
		{in: "https://host.docker.internal/", err: under("internal")},
		{in: "https://nas.lan/", err: under("lan")},
		{in: "https://router.home/", err: under("home")},
		{in: "https://nas.home.arpa/", err: under("home.arpa")},
		{in: "https://1.0.0.127.in-addr.arpa/", err: under("arpa")},
		{in: "https://jira.corp/", err: under("corp")},
		{in: "https://wiki.intranet/", err: under("intranet")},
		{in: "https://db.private/", err: under("private")},
		{in: "https://box.localdomain/", err: under("localdomain")},
		{in: "https://hooks.test/", err: under("test")},
		{in: "https://hooks.invalid/", err: under("invalid")},
		{in: "https://hooks.example/", err: under("example")},
		{in: "https://abcdefghijklmnop.onion/", err: under("onion")},
		{in: "https://name.alt/", err: under("alt")},
		{in: "https://vault.service.consul/", err: under("consul")},
		{in: "https://intranet/", err: under("intranet")},
		{in: "https://metadata/", err: msgSingle},
		{in: "https://instance-data/", err: msgSingle},
		{in: "https://kubernetes/", err: msgSingle},

		// Wildcard-DNS services.
		{in: "https://127.0.0.1.nip.io/", err: wildcard("nip.io")},
		{in: "https://app-10-0-0-1.nip.io/", err: wildcard("nip.io")},
		{in: "https://nip.io/", err: wildcard("nip.io")},
		{in: "https://10.0.0.1.sslip.io/", err: wildcard("sslip.io")},
		{in: "https://10-0-0-1.sslip.io/", err: wildcard("sslip.io")},
		{in: "https://10.0.0.1.xip.io/", err: wildcard("xip.io")},
		{in: "https://app.traefik.me/", err: wildcard("traefik.me")},
		{in: "https://app.localtest.me/", err: wildcard("localtest.me")},
		{in: "https://app.lvh.me/", err: wildcard("lvh.me")},
		{in: "https://app.vcap.me/", err: wildcard("vcap.me")},
		{in: "https://app.lacolhost.com/", err: wildcard("lacolhost.com")},
		{in: "https://app.fuf.me/", err: wildcard("fuf.me")},
		{in: "https://app.smackaho.st/", err: wildcard("smackaho.st")},
		{in: "https://app.localho.st/", err: wildcard("localho.st")},
		{in: "https://APP.NIP.IO./", err: wildcard("nip.io")},
	}
	for _, c := range cases {
		got, err := core.CheckWebhookURL(c.in, false)
		if c.err == "" {
			if err != nil {
				t.Errorf("CheckWebhookURL(%q): %v", c.in, err)
			} else if got != c.want {
				t.Errorf("CheckWebhookURL(%q) = %q, want %q", c.in, got, c.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("CheckWebhookURL(%q) accepted as %q, want %q", c.in, got, c.err)
			continue
		}
		if !errors.Is(err, &core.Error{Kind: core.KindInvalid}) {
			t.Errorf("CheckWebhookURL(%q): kind %v, want invalid", c.in, core.KindOf(err))
		}
		if core.Message(err) != c.err {
			t.Errorf("CheckWebhookURL(%q) = %q, want %q", c.in, core.Message(err), c.err)
		}
	}
}

func TestCheckWebhookURLAllowPrivate(t *testing.T) {
	cases := []struct {
		in   string
		want string
		err  string
	}{
		{in: "http://127.0.0.1:8080/hook", want: "http://127.0.0.1:8080/hook"},
		{in: "http://localhost:8080/hook", want: "http://localhost:8080/hook"},
		{in: "http://localhost:80/hook", want: "http://localhost/hook"},
		{in: "https://localhost:443/hook", want: "https://localhost/hook"},
		{in: "https://10.0.0.1/", want: "https://10.0.0.1/"},
		{in: "http://[::1]:9000/", want: "http://[::1]:9000/"},
		{in: "http://[::FFFF:127.0.0.1]/", want: "http://[::ffff:127.0.0.1]/"},
		{in: "http://[fe80::1%25eth0]:1/", want: "http://[fe80::1%25eth0]:1/"},
		{in: "http://my_service:8080/", want: "http://my_service:8080/"},
		{in: "http://printer.local/", want: "http://printer.local/"},
		{in: "http://app.lvh.me:3000/", want: "http://app.lvh.me:3000/"},
		{in: "https://hooks.example.com/x#f", want: "https://hooks.example.com/x"},

		{in: "ftp://localhost/", err: "url must use http or https"},
		{in: "localhost:8080", err: "url must use http or https"},
		{in: "http://user:pass@localhost/", err: msgUserinfo},
		{in: "http://localhost:0/", err: "url port must be 1 to 65535"},
		{in: "http://[1.2.3.4]/", err: msgParse},
		{in: "http://[::ffff:1.2.3.4]/", want: "http://[::ffff:1.2.3.4]/"},
		{in: "http://bücher/", err: msgASCII},
		{in: "http://a..b/", err: msgSyntax},
	}
	for _, c := range cases {
		got, err := core.CheckWebhookURL(c.in, true)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("CheckWebhookURL(%q, true) = %q, %v; want %q", c.in, got, err, c.want)
			}
			continue
		}
		if err == nil || core.Message(err) != c.err {
			t.Errorf("CheckWebhookURL(%q, true) = %q, %v; want %q", c.in, got, err, c.err)
		}
	}
}

// FuzzCheckWebhookURL holds the properties every address must keep: no
// panic, every refusal is a KindInvalid error, and an accepted address is
// a fixed point that parses as https with a host that is no IP address.
func FuzzCheckWebhookURL(f *testing.F) {
	for _, s := range []string{
		"https://hooks.example.com/earshot",
		"HTTPS://Hooks.Example.COM.:443/p?q=1#f",
		"https://127.0.0.1/",
		"https://0x7f.1/",
		"https://[::ffff:127.0.0.1]/",
		"https://user@example.com/",
		"https://app.nip.io/",
		"http://localhost:8080/",
		"https://example.com/a b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		for _, allowPrivate := range []bool{false, true} {
			got, err := core.CheckWebhookURL(raw, allowPrivate)
			if err != nil {
				if !errors.Is(err, &core.Error{Kind: core.KindInvalid}) {
					t.Fatalf("CheckWebhookURL(%q, %v): %v is not KindInvalid", raw, allowPrivate, err)
				}
				continue
			}
			again, err := core.CheckWebhookURL(got, allowPrivate)
			if err != nil || again != got {
				t.Fatalf("CheckWebhookURL(%q, %v) = %q, which re-checks as %q, %v", raw, allowPrivate, got, again, err)
			}
			u, err := url.Parse(got)
			if err != nil {
				t.Fatalf("accepted %q does not parse: %v", got, err)
			}
			if u.User != nil || u.Host == "" || u.Fragment != "" {
				t.Fatalf("accepted %q has userinfo, no host or a fragment", got)
			}
			if allowPrivate {
				if u.Scheme != "http" && u.Scheme != "https" {
					t.Fatalf("accepted %q with scheme %q", got, u.Scheme)
				}
				continue
			}
			if u.Scheme != "https" || u.Port() != "" {
				t.Fatalf("accepted %q: scheme %q port %q", got, u.Scheme, u.Port())
			}
			host := u.Hostname()
			if _, err := netip.ParseAddr(host); err == nil || !strings.Contains(host, ".") || host != strings.ToLower(host) {
				t.Fatalf("accepted %q: host %q", got, host)
			}
		}
	})
}

// Addresses a receiver cannot tell apart are one webhook: an empty path
// is "/" (RFC 3986 6.2.3) and an escaped unreserved character is the
// character (6.2.2.2), so the second of each pair must be 409 conflict.
func TestWebhookURLEquivalentFormsNormaliseAlike(t *testing.T) {
	for _, pair := range [][2]string{
		{"https://hooks.example.com", "https://hooks.example.com/"},
		{"https://hooks.example.com?a=1", "https://hooks.example.com/?a=1"},
		{"https://hooks.example.com/~a", "https://hooks.example.com/%7Ea"},
		{"https://hooks.example.com/~a", "https://hooks.example.com/%7ea"},
		{"https://Hooks.Example.com.:443", "https://hooks.example.com/"},
	} {
		a, errA := core.CheckWebhookURL(pair[0], false)
		b, errB := core.CheckWebhookURL(pair[1], false)
		if errA != nil || errB != nil || a != b {
			t.Errorf("%q -> %q, %q -> %q (%v, %v)", pair[0], a, pair[1], b, errA, errB)
		}
	}
}

// The normal form is the same request as the address given: the request
// target a client sends, once decoded, names the same path and query, and
// checking the normal form again (as the sender does before every send)
// changes nothing.
func TestWebhookURLNormalFormIsTheSameRequest(t *testing.T) {
	for _, in := range []string{
		"https://hooks.example.com",
		"https://hooks.example.com?a=%7E&b=1",
		"https://hooks.example.com/%7Ea/%41b",
		"https://hooks.example.com/a%2Fb/%2E%2E/c%20d",
		"https://hooks.example.com/a b/%C3%A9",
	} {
		out, err := core.CheckWebhookURL(in, false)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		again, err := core.CheckWebhookURL(out, false)
		if err != nil || again != out {
			t.Errorf("%q -> %q -> %q (%v): not stable", in, out, again, err)
		}
		before, _ := url.Parse(in)
		after, _ := url.Parse(out)
		if path := before.EscapedPath(); path == "" {
			before.Path = "/" // what a client sends for an empty path
		}
		if before.Path != after.Path || before.RawQuery != after.RawQuery {
			t.Errorf("%q -> %q: path %q query %q, want %q %q", in, out, after.Path, after.RawQuery, before.Path, before.RawQuery)
		}
		// Segments split on the escaped form: a decoded %2F or %2E%2E must
		// not become a separator or a dot segment.
		if b, a := strings.Count(before.EscapedPath(), "/"), strings.Count(after.EscapedPath(), "/"); b != a && before.EscapedPath() != "" {
			t.Errorf("%q -> %q: %d segments became %d", in, out, b, a)
		}
		if strings.Contains(after.EscapedPath(), "/../") {
			t.Errorf("%q -> %q: a dot segment appeared", in, out)
		}
	}
}
