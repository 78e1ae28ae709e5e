// Package clientip names the client of an HTTP request for the counts
// kept per client: the failed keys and keyless requests of the public
// API and the helper endpoints (adapters/httpapi) and the sign-in
// requests of the dashboard (adapters/dashboard). Every edge counts
// under the one name Key gives, so a client has one quota whichever
// edge it uses, and the trusted-proxy rule and the IPv6 grouping live
// in one place. It sits outside adapters/, as httpstatus does, because
// adapters never import each other; it imports only the standard
// library.
//
// The client is the connection's address, unless that address is one
// of the operator's trusted proxies (Proxies, EARSHOT_TRUSTED_PROXIES):
// then it is read from X-Forwarded-For, as Proxies.Client says. RFC
// 7239's Forwarded header is not read: the load balancers in common use
// all write X-Forwarded-For, and reading two headers would let a client
// pick the one its proxy does not rewrite.
package clientip

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// MaxProxies bounds the entries of a trusted-proxy list: each request
// with a forwarded address compares up to MaxHops+1 addresses with
// every entry. A load balancer's ranges fit many times over; more
// addresses than this are better named by a CIDR.
const MaxProxies = 100

// MaxHops is how many entries of X-Forwarded-For are read, from the
// right (the ones the trusted proxies appended). A header is up to the
// server's header bound (64 KB) of entries a client may have written
// itself; the work per request stays bounded by this instead.
const MaxHops = 16

// maxEntry is the longest X-Forwarded-For entry read as an address: an
// IPv6 address with brackets and a port is 47 bytes; a longer entry is
// malformed, and refused before it is parsed.
const maxEntry = 64

// Proxies is the set of addresses whose X-Forwarded-For is believed.
// The zero value trusts none: every request's client is the address of
// its connection.
type Proxies struct{ prefixes []netip.Prefix }

// ParseProxies reads a comma-separated list of IP addresses and CIDRs
// (192.0.2.7, 10.0.0.0/8, 2001:db8::/32); the empty string is the empty
// set. It refuses an entry that is neither, an address with an IPv6
// zone, a prefix of length 0 (trusting every address would let any
// client name its own address), and more than MaxProxies entries.
// IPv4-mapped IPv6 entries are read as the IPv4 addresses they carry,
// as connections' addresses are.
func ParseProxies(list string) (Proxies, error) {
	if strings.TrimSpace(list) == "" {
		return Proxies{}, nil
	}
	items := strings.Split(list, ",")
	if len(items) > MaxProxies {
		return Proxies{}, fmt.Errorf("%d entries, at most %d", len(items), MaxProxies)
	}
	p := Proxies{prefixes: make([]netip.Prefix, 0, len(items))}
	for _, item := range items {
		s := strings.TrimSpace(item)
		pre, err := parsePrefix(s)
		if err != nil {
			return Proxies{}, fmt.Errorf("%q: %w", s, err)
		}
		p.prefixes = append(p.prefixes, pre)
	}
	return p, nil
}

func parsePrefix(s string) (netip.Prefix, error) {
	var p netip.Prefix
	if strings.Contains(s, "/") {
		var err error
		if p, err = netip.ParsePrefix(s); err != nil {
			return netip.Prefix{}, errors.New("not an address or a CIDR")
		}
		p = p.Masked()
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
		}
	} else {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, errors.New("not an address or a CIDR")
		}
		if a.Zone() != "" {
			return netip.Prefix{}, errors.New("an address with a zone")
		}
		a = a.Unmap()
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if p.Bits() == 0 {
		return netip.Prefix{}, errors.New("trusts every address")
	}
	return p, nil
}

// Empty says whether p trusts no address.
func (p Proxies) Empty() bool { return len(p.prefixes) == 0 }

// String lists p as ParseProxies reads it.
func (p Proxies) String() string {
	s := make([]string, len(p.prefixes))
	for i, pre := range p.prefixes {
		s[i] = pre.String()
	}
	return strings.Join(s, ",")
}

func (p Proxies) trusts(a netip.Addr) bool {
	for _, pre := range p.prefixes {
		if pre.Contains(a) {
			return true
		}
	}
	return false
}

// Client returns the address of r's client, and false when even the
// connection's address (r.RemoteAddr) is not an IP address. When the
// connection's address is not in p, it is the client, and
// X-Forwarded-For is not read: anyone may send one. When it is, the
// client is the right-most entry of X-Forwarded-For that is not in p:
// each trusted proxy appends the address it was connected from, so that
// entry is the one the outermost trusted proxy saw, and what lies left
// of it is the client's own writing. When every entry read is in p (a
// client inside the trusted network), the left-most of them is the
// client. No header, an entry that is not an address, or an empty
// entry falls back to the connection's address: the proxy's own
// address then counts for every client behind it, which shares a quota
// but gives none away. At most MaxHops entries are read.
func (p Proxies) Client(r *http.Request) (netip.Addr, bool) {
	peer, ok := remote(r.RemoteAddr)
	if !ok || !p.trusts(peer) {
		return peer, ok
	}
	return p.forwarded(r.Header.Values("X-Forwarded-For"), peer), true
}

// forwarded applies Client's rule to the X-Forwarded-For lines (several
// lines are one list, in order), reading from the right.
func (p Proxies) forwarded(lines []string, peer netip.Addr) netip.Addr {
	var leftmost netip.Addr
	read := 0
	for i := len(lines) - 1; i >= 0; i-- {
		line := lines[i]
		if strings.TrimSpace(line) == "" {
			continue
		}
		for {
			if read == MaxHops {
				return leftmost
			}
			cut := strings.LastIndexByte(line, ',')
			a, ok := entry(line[cut+1:])
			if !ok {
				return peer
			}
			read++
			if !p.trusts(a) {
				return a
			}
			leftmost = a
			if cut < 0 {
				break
			}
			line = line[:cut]
		}
	}
	if leftmost.IsValid() {
		return leftmost
	}
	return peer
}

// entry reads one X-Forwarded-For entry: an address, bare or with a
// port as some proxies write it (192.0.2.1:4711, [2001:db8::1]:4711),
// or an IPv6 address in brackets.
func entry(s string) (netip.Addr, bool) {
	s = strings.Trim(s, " \t")
	if len(s) > maxEntry {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		if len(s) > 2 && s[0] == '[' && s[len(s)-1] == ']' {
			a, err = netip.ParseAddr(s[1 : len(s)-1])
		} else {
			var ap netip.AddrPort
			ap, err = netip.ParseAddrPort(s)
			a = ap.Addr()
		}
	}
	if err != nil {
		return netip.Addr{}, false
	}
	return a.WithZone("").Unmap(), true
}

// remote reads a connection's address, host:port as net/http gives it,
// or a bare host.
func remote(addr string) (netip.Addr, bool) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, false
	}
	return a.WithZone("").Unmap(), true
}

type clientKey struct{}

// Handler gives next the client of each request as Client finds it, for
// Key. With no trusted proxy it is next itself: Key then reads the
// connection's address as it always could.
func (p Proxies) Handler(next http.Handler) http.Handler {
	if p.Empty() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a, ok := p.Client(r); ok {
			r = r.WithContext(context.WithValue(r.Context(), clientKey{}, a))
		}
		next.ServeHTTP(w, r)
	})
}

// Key is the name r's client is counted under: an IPv4 address, or an
// IPv6 address's /64, which one client holds whole and may pick any
// address of (2001:db8::1 and 2001:db8::ff are one client). The client
// is the one Proxies.Handler found, or, on a request that did not pass
// through it, the connection's address; a connection's address that is
// not an IP address (a test's, a Unix socket's) is its own name.
func Key(r *http.Request) string {
	a, ok := r.Context().Value(clientKey{}).(netip.Addr)
	if !ok {
		if a, ok = remote(r.RemoteAddr); !ok {
			host, _, err := net.SplitHostPort(r.RemoteAddr)
			if err != nil {
				return r.RemoteAddr
			}
			return host
		}
	}
	return group(a)
}

// group names a client's address as Key does.
func group(a netip.Addr) string {
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p.String()
	}
	return a.String()
}
