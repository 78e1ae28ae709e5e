package core

import (
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// MaxWebhookURLLen is the longest webhook address accepted, in bytes.
const MaxWebhookURLLen = 2048

// privateSuffixes are names that never lead to a public website: special-use
// names and names in common private use. A name equal to one of them or
// under it is refused. The list is checked in order, so a longer suffix
// comes before a shorter one it ends in.
var privateSuffixes = []string{
	"localhost",   // RFC 6761: the loopback interface by definition
	"local",       // RFC 6762: multicast DNS on the local link
	"internal",    // reserved by ICANN for private use; cloud metadata lives here (metadata.google.internal)
	"home.arpa",   // RFC 8375: home networks
	"arpa",        // infrastructure zone (reverse DNS), never a website
	"localdomain", // the default domain of many Unix installs
	"lan",         // home routers and office networks
	"home",        // home routers; ICANN will not delegate it (name collision)
	"corp",        // office networks; ICANN will not delegate it (name collision)
	"intranet",    // office networks
	"private",     // office networks
	"test",        // RFC 6761: never resolves on the public internet
	"invalid",     // RFC 6761: never resolves
	"example",     // RFC 6761: never resolves (example.com is public and allowed)
	"onion",       // RFC 7686: reachable only through Tor
	"alt",         // RFC 9476: for names outside the DNS
	"consul",      // HashiCorp Consul service discovery inside a data centre
}

// wildcardDNS are public services whose names resolve to an address chosen
// by whoever writes the name, typically a private one (10.0.0.1.nip.io is
// 10.0.0.1, anything.lvh.me is 127.0.0.1). Only services known to do that
// are listed; it is a first filter that gives a clear message when a
// webhook is saved, while the sender's connect-time address check is what
// actually stops such a name, and any other one, from reaching a private
// address.
var wildcardDNS = []string{
	"nip.io",        // <ip>.nip.io and <name>-<ip>.nip.io resolve to <ip>
	"sslip.io",      // same scheme, dotted and dashed forms
	"xip.io",        // the original of the two above, now defunct; the name could return
	"traefik.me",    // <ip>.traefik.me resolves to <ip>, other names to 127.0.0.1
	"localtest.me",  // every name resolves to 127.0.0.1
	"lvh.me",        // every name resolves to 127.0.0.1
	"vcap.me",       // every name resolves to 127.0.0.1 (Cloud Foundry's dev domain)
	"lacolhost.com", // every name resolves to 127.0.0.1
	"fuf.me",        // every name resolves to 127.0.0.1
	"smackaho.st",   // every name resolves to 127.0.0.1
	"localho.st",    // every name resolves to 127.0.0.1
}

// CheckWebhookURL applies the address rules of a webhook and returns the
// address normalised: scheme and host lower-cased, a trailing dot and the
// default port removed, the fragment dropped (a fragment never reaches the
// receiver, so keeping it would only make two equal addresses differ), an
// empty path given as "/", escaped unreserved characters in the path
// decoded (normalPath) and the hex digits of every other escape, in the
// path and the query, upper-cased (RFC 3986 6.2.2.1: %2f is %2F). The
// webhooks_owner_url index compares this string, so two spellings of one
// address must come out alike. Surrounding white space is trimmed;
// everything else of the path and the query is kept as given.
//
// The rules: at most MaxWebhookURLLen bytes; scheme https; no username or
// password; no port but 443; a host that is a public DNS name: ASCII (an
// international name is given in its xn-- form, so look-alike characters
// cannot spell a refused name), with a dot, ending in a real top-level
// domain, not an IP address in any spelling (dotted, short, hex, octal,
// decimal, IPv6, IPv4-mapped, with a zone), not localhost or a name under a
// private or special-use suffix (.local, .internal, .lan, ...), and not a
// wildcard-DNS service (nip.io and the like).
//
// With allowPrivate, meant for local development only, http is allowed
// too, and so are any port, IP addresses, loopback, single-label and
// private names; the scheme must still be http or https and userinfo is
// still refused.
//
// The check reads only the text: it cannot see where a name resolves to,
// so whoever connects must check the address again at connect time.
//
// Errors are of kind KindInvalid and their message names the rule broken.
func CheckWebhookURL(raw string, allowPrivate bool) (string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return "", Errorf(KindInvalid, "url is required")
	}
	if len(raw) > MaxWebhookURLLen {
		return "", Errorf(KindInvalid, "url must be at most %d characters", MaxWebhookURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", Errorf(KindInvalid, "url is not a valid address")
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowPrivate:
	case allowPrivate:
		return "", Errorf(KindInvalid, "url must use http or https")
	default:
		return "", Errorf(KindInvalid, "url must use https")
	}
	if u.Opaque != "" || u.Host == "" {
		return "", Errorf(KindInvalid, "url must have a host name")
	}
	if u.User != nil {
		return "", Errorf(KindInvalid, "url must not contain a username or password")
	}

	port, err := checkPort(u, allowPrivate)
	if err != nil {
		return "", err
	}
	host, err := checkHost(u, allowPrivate)
	if err != nil {
		return "", err
	}
	if port != "" {
		host += ":" + port
	}

	path := normalPath(u.EscapedPath())
	unescaped, err := url.PathUnescape(path)
	if err != nil { // cannot happen: EscapedPath is well formed and stays so
		return "", Errorf(KindInvalid, "url is not a valid address")
	}
	out := (&url.URL{
		Scheme:     u.Scheme,
		Host:       host,
		Path:       unescaped,
		RawPath:    path,
		RawQuery:   upperEscapes(u.RawQuery),
		ForceQuery: u.ForceQuery,
	}).String()
	if len(out) > MaxWebhookURLLen {
		return "", Errorf(KindInvalid, "url must be at most %d characters", MaxWebhookURLLen)
	}
	return out, nil
}

// normalPath returns an escaped path in the form that names the same
// resource to every receiver (RFC 3986 6.2.2.2, 6.2.3): empty is "/", as
// clients send it, and %XX of a letter, digit, "-", "_" or "~" is the
// character. "%2E" stays escaped: decoded, "%2E%2E" would be a ".."
// segment, which clients, proxies and servers resolve differently. Other
// escapes, reserved characters among them, are kept, their hex digits
// upper-cased (6.2.2.1).
func normalPath(escaped string) string {
	if escaped == "" {
		return "/"
	}
	if !strings.Contains(escaped, "%") {
		return escaped
	}
	var b strings.Builder
	b.Grow(len(escaped))
	for i := 0; i < len(escaped); i++ {
		c := escaped[i]
		if c == '%' && i+2 < len(escaped) {
			if d, ok := unhexByte(escaped[i+1], escaped[i+2]); ok {
				if unreservedNotDot(d) {
					b.WriteByte(d)
				} else {
					b.WriteString(strings.ToUpper(escaped[i : i+3]))
				}
				i += 2
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// upperEscapes returns s with the hex digits of each %XX upper-cased
// (RFC 3986 6.2.2.1), and every other byte as it was: a query keeps its
// escapes, whichever character they stand for.
func upperEscapes(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] != '%' {
			continue
		}
		if _, ok := unhexByte(b[i+1], b[i+2]); ok {
			b[i+1], b[i+2] = upperHex(b[i+1]), upperHex(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func upperHex(c byte) byte {
	if c >= 'a' && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}

func unhexByte(hi, lo byte) (byte, bool) {
	h, ok1 := hexVal(hi)
	l, ok2 := hexVal(lo)
	return h<<4 | l, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func unreservedNotDot(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '~'
}

// checkPort returns the port to keep in the address: empty for none or the
// scheme's default.
func checkPort(u *url.URL, allowPrivate bool) (string, error) {
	p := u.Port()
	if p == "" {
		return "", nil
	}
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 {
		return "", Errorf(KindInvalid, "url port must be 1 to 65535")
	}
	def := uint64(443)
	if u.Scheme == "http" {
		def = 80
	}
	switch {
	case n == def:
		return "", nil
	case !allowPrivate:
		return "", Errorf(KindInvalid, "url must use the default port 443")
	}
	return strconv.FormatUint(n, 10), nil
}

// checkHost returns the host normalised, brackets kept around IPv6.
func checkHost(u *url.URL, allowPrivate bool) (string, error) {
	notIP := Errorf(KindInvalid, "url host must be a public name, not an IP address")
	if strings.HasPrefix(u.Host, "[") {
		if !allowPrivate {
			return "", notIP
		}
		a, err := netip.ParseAddr(u.Hostname())
		// A zone of other bytes than RFC 6874's unreserved would be
		// written escaped, a form the address then fails to parse in.
		if err != nil || !a.Is6() || strings.ContainsFunc(a.Zone(), func(r rune) bool { return r > 0x7f || !unreservedNotDot(byte(r)) && r != '.' }) {
			return "", Errorf(KindInvalid, "url host is not a valid IPv6 address")
		}
		return "[" + a.String() + "]", nil
	}

	name := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	for i := 0; i < len(name); i++ {
		if name[i] >= 0x80 {
			return "", Errorf(KindInvalid, "url host must be ASCII; write an international name in its xn-- form")
		}
	}
	if !allowPrivate && endsInNumber(name) {
		return "", notIP
	}
	if !validHostName(name, allowPrivate) {
		return "", Errorf(KindInvalid, "url host is not a valid host name")
	}
	if allowPrivate {
		return name, nil
	}

	if name == "localhost" {
		return "", Errorf(KindInvalid, "url host localhost is not allowed")
	}
	for _, s := range privateSuffixes {
		if name == s || strings.HasSuffix(name, "."+s) {
			return "", Errorf(KindInvalid, "url host under .%s is not allowed", s)
		}
	}
	dot := strings.LastIndexByte(name, '.')
	if dot < 0 {
		return "", Errorf(KindInvalid, "url host must be a full public name such as hooks.example.com")
	}
	if !realTLD(name[dot+1:]) {
		return "", Errorf(KindInvalid, "url host must end in a real top-level domain")
	}
	for _, s := range wildcardDNS {
		if name == s || strings.HasSuffix(name, "."+s) {
			return "", Errorf(KindInvalid, "url host is a wildcard-DNS service (%s)", s)
		}
	}
	return name, nil
}

// endsInNumber reports whether the last label of name is a number in the
// forms IPv4 parsers accept (decimal, octal with a leading 0, hex with 0x).
// Such a host is an IP address to some client (127.1, 0x7f000001,
// 0177.0.0.1, 2130706433) and never a real name: no top-level domain is
// numeric. This is the rule of the WHATWG URL standard.
func endsInNumber(name string) bool {
	last := name[strings.LastIndexByte(name, '.')+1:]
	if last == "" {
		return false
	}
	if hex, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(hex, "0123456789abcdef") == ""
	}
	return strings.Trim(last, "0123456789") == ""
}

// validHostName checks DNS syntax: at most 253 bytes, labels of 1 to 63
// letters, digits and inner hyphens. Underscores, which some container
// tools put in service names, are accepted only for local development.
func validHostName(name string, allowUnderscore bool) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' && allowUnderscore) {
				return false
			}
		}
	}
	return true
}

// realTLD reports whether label can be a delegated top-level domain:
// letters only, or an international one in xn-- form.
func realTLD(label string) bool {
	if strings.HasPrefix(label, "xn--") {
		return len(label) > 4
	}
	return len(label) >= 2 && strings.Trim(label, "abcdefghijklmnopqrstuvwxyz") == ""
}
