package clientip

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
)

func TestParseProxies(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"  ", ""},
		{"192.0.2.7", "192.0.2.7/32"},
		{" 10.0.0.0/8 , 192.0.2.7 ", "10.0.0.0/8,192.0.2.7/32"},
		{"10.1.2.3/8", "10.0.0.0/8"}, // masked as a CIDR means it
		{"2001:db8::/32,::1", "2001:db8::/32,::1/128"},
		{"::ffff:192.0.2.7", "192.0.2.7/32"},                 // a connection from it reads as IPv4
		{"::ffff:10.0.0.0/104", "10.0.0.0/8"},                // likewise
		{"2001:db8::1/64", "2001:db8::/64"},                  // masked
		{"127.0.0.1,127.0.0.1", "127.0.0.1/32,127.0.0.1/32"}, // repeats are harmless
	} {
		p, err := ParseProxies(c.in)
		if err != nil {
			t.Errorf("ParseProxies(%q): %v", c.in, err)
			continue
		}
		if p.String() != c.want || p.Empty() != (c.want == "") {
			t.Errorf("ParseProxies(%q) = %q (empty %v), want %q", c.in, p.String(), p.Empty(), c.want)
		}
	}
	for _, in := range []string{
		"localhost", "10.0.0.0/33", "192.0.2.7,", ",192.0.2.7", "192.0.2.7;10.0.0.1", "0.0.0.0/0", "::/0",
		"fe80::1%eth0", "10.0.0.0/8/8", "[::1]", "192.0.2.7:80", "1.2.3", strings.Repeat("10.0.0.1,", MaxProxies) + "10.0.0.1",
	} {
		if p, err := ParseProxies(in); err == nil {
			t.Errorf("ParseProxies(%q) = %q, want an error", in, p.String())
		}
	}
	if _, err := ParseProxies(strings.TrimSuffix(strings.Repeat("10.0.0.1,", MaxProxies), ",")); err != nil {
		t.Errorf("%d entries: %v", MaxProxies, err)
	}
}

func request(remote string, xff ...string) *http.Request {
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = remote
	for _, v := range xff {
		r.Header.Add("X-Forwarded-For", v)
	}
	return r
}

// The shapes of X-Forwarded-For are those proxies write: net/http's
// ReverseProxy, nginx's $proxy_add_x_forwarded_for and the cloud load
// balancers append ", " and the address they were connected from to what
// they were sent; some (Azure's) add the port.
func TestClient(t *testing.T) {
	lb, err := ParseProxies("10.0.0.0/8,2001:db8:ffff::/48")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		remote string
		xff    []string
		want   string
	}{
		{"no proxy in between", "198.51.100.1:4711", nil, "198.51.100.1"},
		{"a forged header from a client not behind a proxy", "198.51.100.1:4711", []string{"203.0.113.9"}, "198.51.100.1"},
		{"one proxy", "10.0.0.2:4711", []string{"198.51.100.1"}, "198.51.100.1"},
		{"a forged entry left of the proxy's", "10.0.0.2:4711", []string{"203.0.113.9, 198.51.100.1"}, "198.51.100.1"},
		{"two trusted proxies", "10.0.0.2:4711", []string{"203.0.113.9, 198.51.100.1, 10.0.0.3"}, "198.51.100.1"},
		{"several lines are one list", "10.0.0.2:4711", []string{"203.0.113.9", "198.51.100.1", "10.0.0.3"}, "198.51.100.1"},
		{"an empty line adds nothing", "10.0.0.2:4711", []string{"198.51.100.1", " "}, "198.51.100.1"},
		{"a client inside the trusted network", "10.0.0.2:4711", []string{"10.0.0.9, 10.0.0.3"}, "10.0.0.9"},
		{"no header", "10.0.0.2:4711", nil, "10.0.0.2"},
		{"an entry that is not an address", "10.0.0.2:4711", []string{"198.51.100.1, unknown"}, "10.0.0.2"},
		{"an empty entry", "10.0.0.2:4711", []string{"198.51.100.1,,10.0.0.3"}, "10.0.0.2"},
		{"a trailing comma", "10.0.0.2:4711", []string{"198.51.100.1,"}, "10.0.0.2"},
		{"garbage left of the client is not read", "10.0.0.2:4711", []string{"x y z, 198.51.100.1"}, "198.51.100.1"},
		{"an entry with a port", "10.0.0.2:4711", []string{"198.51.100.1:5000"}, "198.51.100.1"},
		{"an IPv6 entry", "10.0.0.2:4711", []string{"2001:db8::1"}, "2001:db8::1"},
		{"an IPv6 entry in brackets", "10.0.0.2:4711", []string{"[2001:db8::1]"}, "2001:db8::1"},
		{"an IPv6 entry with a port", "10.0.0.2:4711", []string{"[2001:db8::1]:5000"}, "2001:db8::1"},
		{"an IPv6 entry with a zone", "10.0.0.2:4711", []string{"fe80::1%eth0"}, "fe80::1"},
		{"an IPv4-mapped entry", "10.0.0.2:4711", []string{"::ffff:198.51.100.1"}, "198.51.100.1"},
		{"an IPv6 proxy", "[2001:db8:ffff::2]:4711", []string{"198.51.100.1"}, "198.51.100.1"},
		{"an IPv4-mapped proxy", "[::ffff:10.0.0.2]:4711", []string{"198.51.100.1"}, "198.51.100.1"},
		{"an entry too long to be an address", "10.0.0.2:4711", []string{"fe80::1%" + strings.Repeat("e", 64)}, "10.0.0.2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, ok := lb.Client(request(c.remote, c.xff...))
			if !ok || a.String() != c.want {
				t.Fatalf("Client = %v, %v; want %s", a, ok, c.want)
			}
		})
	}
	// With no trusted proxy the header is never read.
	if a, _ := (Proxies{}).Client(request("10.0.0.2:4711", "198.51.100.1")); a.String() != "10.0.0.2" {
		t.Fatalf("no trusted proxy: Client = %v", a)
	}
	if _, ok := lb.Client(request("pipe")); ok {
		t.Fatal("a connection address that is not an IP address gave a client")
	}
}

// Only the last MaxHops entries are read, however long the header a
// client wrote: past them, the left-most entry read stands for the
// client, as when every entry is trusted.
func TestClientReadsAtMostMaxHops(t *testing.T) {
	lb, _ := ParseProxies("10.0.0.0/8")
	hops := make([]string, MaxHops)
	for i := range hops {
		hops[i] = netip.AddrFrom4([4]byte{10, 0, 1, byte(i)}).String()
	}
	within := "198.51.100.1, " + strings.Join(hops[1:], ", ")
	if a, _ := lb.Client(request("10.0.0.2:1", within)); a.String() != "198.51.100.1" {
		t.Fatalf("client %d entries from the right: %v", MaxHops, a)
	}
	past := "198.51.100.1, " + strings.Join(hops, ", ")
	if a, _ := lb.Client(request("10.0.0.2:1", past)); a.String() != hops[0] {
		t.Fatalf("client %d entries from the right: %v, want the left-most read, %s", MaxHops+1, a, hops[0])
	}
	// A header of the server's whole bound is answered the same way.
	long := strings.Repeat("198.51.100.7, ", 60<<10/14) + strings.Join(hops, ", ")
	if a, _ := lb.Client(request("10.0.0.2:1", long)); a.String() != hops[0] {
		t.Fatalf("a 60 KB header: %v", a)
	}
}

func TestKey(t *testing.T) {
	for _, c := range []struct{ remote, want string }{
		{"192.0.2.7:4711", "192.0.2.7"},
		{"[2001:db8::1]:4711", "2001:db8::/64"},
		{"[2001:db8::ff]:4711", "2001:db8::/64"},
		{"[2001:db8:0:0:ffff:ffff:ffff:ffff]:1", "2001:db8::/64"},
		{"[2001:db8:0:1::1]:4711", "2001:db8:0:1::/64"},
		{"[fe80::1%eth0]:4711", "fe80::/64"},
		{"[::ffff:192.0.2.7]:4711", "192.0.2.7"},
		{"192.0.2.7", "192.0.2.7"},
		{"pipe", "pipe"},
		{"@:0", "@"},
	} {
		if got := Key(request(c.remote)); got != c.want {
			t.Errorf("Key(%s) = %q, want %q", c.remote, got, c.want)
		}
	}
}

// The handler hands Key the client Client found; without a trusted
// proxy, it is the handler it wraps, and the header is not read.
func TestHandler(t *testing.T) {
	var got string
	next := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = Key(r) })
	lb, _ := ParseProxies("10.0.0.0/8")
	for _, c := range []struct {
		p              Proxies
		remote, header string
		want           string
	}{
		{lb, "10.0.0.2:1", "2001:db8::1, 2001:db8::ff", "2001:db8::/64"},
		{lb, "10.0.0.2:1", "198.51.100.1", "198.51.100.1"},
		{lb, "198.51.100.2:1", "198.51.100.1", "198.51.100.2"},
		{Proxies{}, "10.0.0.2:1", "198.51.100.1", "10.0.0.2"},
		{lb, "pipe", "198.51.100.1", "pipe"},
	} {
		got = ""
		c.p.Handler(next).ServeHTTP(httptest.NewRecorder(), request(c.remote, c.header))
		if got != c.want {
			t.Errorf("trusting %q, from %s with %q: Key = %q, want %q", c.p, c.remote, c.header, got, c.want)
		}
	}
}

// FuzzClient throws connection addresses and X-Forwarded-For headers (a
// header is a stranger's writing) at Client and Key: they never panic;
// the client is the connection's address unless that is a trusted
// proxy's; a forwarded client is an address the header named; a client
// that is trusted comes only from a header whose entries read were all
// trusted; and Key's name is short.
func FuzzClient(f *testing.F) {
	for _, s := range [][2]string{
		{"10.0.0.2:1", "198.51.100.1"}, {"10.0.0.2:1", "203.0.113.9, 198.51.100.1, 10.0.0.3"}, {"10.0.0.2:1", ""},
		{"198.51.100.2:1", "10.0.0.3"}, {"[2001:db8::1]:1", "2001:db8::ff"}, {"10.0.0.2:1", "[2001:db8::1]:80,,"},
		{"10.0.0.2:1", "fe80::1%25eth0, ::ffff:10.0.0.3"}, {"pipe", "198.51.100.1"}, {"10.0.0.2:1", strings.Repeat("10.9.9.9,", 40)},
	} {
		f.Add(s[0], s[1])
	}
	lb, _ := ParseProxies("10.0.0.0/8,2001:db8:ffff::/48")
	f.Fuzz(func(t *testing.T, remoteAddr, xff string) {
		r := request(remoteAddr)
		r.Header["X-Forwarded-For"] = []string{xff}
		a, ok := lb.Client(r)
		peer, peerOK := remote(remoteAddr)
		if ok != peerOK {
			t.Fatalf("Client ok %v for a connection address that parses %v", ok, peerOK)
		}
		if !ok {
			return
		}
		if !lb.trusts(peer) && a != peer {
			t.Fatalf("client %v from an untrusted connection %v", a, peer)
		}
		if a != peer {
			named := false
			for _, e := range strings.Split(xff, ",") {
				if b, ok := entry(e); ok && b == a {
					named = true
				}
			}
			if !named {
				t.Fatalf("client %v is not named in %q", a, xff)
			}
		}
		if a.Zone() != "" || a.Is4In6() {
			t.Fatalf("client %v keeps a zone or a mapping", a)
		}
		var got string
		lb.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = Key(r) })).ServeHTTP(httptest.NewRecorder(), r)
		if got != group(a) || len(got) > len("ffff:ffff:ffff:ffff::/64") {
			t.Fatalf("Key %q for client %v", got, a)
		}
	})
}
