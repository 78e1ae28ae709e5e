package core

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Cookie is one browser cookie of an owner's session on a platform, in the
// one shape earshot keeps whatever export it came from.
type Cookie struct {
	// Domain is the cookie's domain as the browser had it, lower case; a
	// leading dot means the cookie is sent to subdomains too.
	Domain string
	Name   string
	Value  string
	// Path defaults to "/".
	Path string
	// Expires is zero for a session cookie.
	Expires  time.Time
	Secure   bool
	HTTPOnly bool
}

// MaxCookieJar is the largest cookie jar upload accepted, in bytes: an
// export of one signed-in site is a few kilobytes, an export of every site
// of a busy browser rarely more than a hundred.
const MaxCookieJar = 256 << 10

// MaxJarCookies bounds the cookies read from one upload. Exports often
// hold every site the browser knows; Chrome keeps at most 3000 cookies in
// all, so a real export stays below this.
const MaxJarCookies = 5000

// maxExpiry is the last second of the year 9999: later expiries are
// clamped to it so that every stored time stays representable.
const maxExpiry = 253402300799

// platformDomains are the registrable domains whose cookies belong to each
// platform; subdomains count too.
var platformDomains = map[Platform][]string{
	Reddit:   {"reddit.com"},
	X:        {"x.com", "twitter.com"},
	Facebook: {"facebook.com"},
}

// sessionCookies names the cookies a platform needs to see a signed-in
// session: each inner list is satisfied by any one of its names, and every
// list must be satisfied. The names are the sites' own cookies as seen in
// a browser signed in to each of them (the browser's developer tools,
// Application > Cookies): reddit keeps its login in reddit_session (older
// sessions) or token_v2 (the current web client); x keeps it in
// auth_token, with ct0 as the CSRF token every request must echo; facebook
// keeps the user id in c_user and the session secret in xs.
var sessionCookies = map[Platform][][]string{
	Reddit:   {{"reddit_session", "token_v2"}},
	X:        {{"auth_token"}, {"ct0"}},
	Facebook: {{"c_user"}, {"xs"}},
}

// PlatformCookieDomains returns the domains whose cookies the platform's
// jar keeps, for messages and help text.
func PlatformCookieDomains(p Platform) []string {
	return append([]string(nil), platformDomains[p]...)
}

// ParseCookieJar reads an uploaded cookie jar for the platform and returns
// the platform's cookies in the canonical shape. It reads:
//
//   - the JSON the common cookie-export browser extensions write
//     (EditThisCookie, Cookie-Editor): an array of objects with domain,
//     name, value, path, expirationDate (seconds), secure, httpOnly,
//     hostOnly, session, sameSite;
//   - the same array wrapped as {"cookies": [...]}, the storage-state shape
//     of Playwright and Puppeteer, whose expiry field is expires (seconds,
//     -1 for a session cookie);
//   - the canonical form EncodeCookieJar writes;
//   - Netscape cookies.txt: tab-separated domain, include-subdomains flag,
//     path, secure, expiry, name, value; lines starting #HttpOnly_ mark
//     HTTP-only cookies, other lines starting # are comments.
//
// Cookies of other domains are dropped rather than refused: exports often
// hold every site the browser knows, and asking the owner to trim them by
// hand gains nothing. The jar is refused when no cookie of the platform is
// left or a session cookie the platform needs is missing. Errors are
// KindInvalid and never quote a cookie value.
func ParseCookieJar(p Platform, data []byte) ([]Cookie, error) {
	if !p.Valid() {
		return nil, Errorf(KindInvalid, "platform must be one of reddit, x, facebook")
	}
	if len(data) > MaxCookieJar {
		return nil, Errorf(KindInvalid, "the cookie jar must be at most %d bytes", MaxCookieJar)
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, Errorf(KindInvalid, "the cookie jar is empty")
	}
	var all []Cookie
	var err error
	if trimmed[0] == '[' || trimmed[0] == '{' {
		all, err = parseJSONJar(p, trimmed)
	} else {
		all, err = parseNetscapeJar(p, trimmed)
	}
	if err != nil {
		return nil, err
	}
	kept := all
	domains := strings.Join(platformDomains[p], " or ")
	if len(kept) == 0 {
		return nil, Errorf(KindInvalid, "the cookie jar has no cookie for %s: export the cookies of a browser signed in to %s", domains, domains)
	}
	for _, names := range sessionCookies[p] {
		if !hasCookie(kept, names) {
			return nil, Errorf(KindInvalid, "the cookie jar has no %s cookie for %s: export the cookies of a browser signed in to %s", strings.Join(names, " or "), domains, domains)
		}
	}
	return kept, nil
}

// cookieJSON is one cookie in the JSON shapes ParseCookieJar reads and in
// the canonical form EncodeCookieJar writes.
type cookieJSON struct {
	Domain         string   `json:"domain"`
	Name           string   `json:"name"`
	Value          string   `json:"value"`
	Path           string   `json:"path,omitempty"`
	Expires        *float64 `json:"expires,omitempty"`
	ExpirationDate *float64 `json:"expirationDate,omitempty"`
	Expiry         *float64 `json:"expiry,omitempty"`
	Session        bool     `json:"session,omitempty"`
	HostOnly       bool     `json:"hostOnly,omitempty"`
	Secure         bool     `json:"secure"`
	HTTPOnly       bool     `json:"httpOnly"`
}

// canonicalCookie is the stored form: stable field names, expires in Unix
// seconds and absent for a session cookie.
type canonicalCookie struct {
	Domain   string `json:"domain"`
	Name     string `json:"name"`
	Value    string `json:"value"`
	Path     string `json:"path"`
	Expires  int64  `json:"expires,omitempty"`
	Secure   bool   `json:"secure"`
	HTTPOnly bool   `json:"httpOnly"`
}

// EncodeCookieJar writes cookies in the canonical form stored for an
// account and handed to helpers by GET /session: a JSON array of objects
// {"domain", "name", "value", "path", "expires", "secure", "httpOnly"},
// where expires is Unix seconds and is left out for a session cookie, and
// a domain with a leading dot covers its subdomains.
func EncodeCookieJar(cookies []Cookie) []byte {
	out := make([]canonicalCookie, len(cookies))
	for i, c := range cookies {
		out[i] = canonicalCookie{Domain: c.Domain, Name: c.Name, Value: c.Value, Path: c.Path, Secure: c.Secure, HTTPOnly: c.HTTPOnly}
		if !c.Expires.IsZero() {
			out[i].Expires = c.Expires.Unix()
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		// Strings and numbers always marshal; nothing else is in the struct.
		panic(err)
	}
	return b
}

func parseJSONJar(p Platform, data []byte) ([]Cookie, error) {
	var list []json.RawMessage
	if data[0] == '{' {
		var wrapped struct {
			Cookies []json.RawMessage `json:"cookies"`
		}
		if err := json.Unmarshal(data, &wrapped); err != nil {
			return nil, jsonJarError(err)
		}
		if wrapped.Cookies == nil {
			return nil, Errorf(KindInvalid, "the cookie jar is a JSON object without a cookies array")
		}
		list = wrapped.Cookies
	} else if err := json.Unmarshal(data, &list); err != nil {
		return nil, jsonJarError(err)
	}
	if len(list) > MaxJarCookies {
		return nil, Errorf(KindInvalid, "the cookie jar holds more than %d cookies", MaxJarCookies)
	}
	out := make([]Cookie, 0, len(list))
	for i, raw := range list {
		var j cookieJSON
		if err := json.Unmarshal(raw, &j); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) && te.Field != "" {
				return nil, Errorf(KindInvalid, "cookie %d of the jar: field %s has the wrong type", i+1, te.Field)
			}
			return nil, Errorf(KindInvalid, "cookie %d of the jar is not a JSON object", i+1)
		}
		c := Cookie{Domain: j.Domain, Name: j.Name, Value: j.Value, Path: j.Path, Secure: j.Secure, HTTPOnly: j.HTTPOnly}
		if j.HostOnly {
			c.Domain = strings.TrimPrefix(c.Domain, ".")
		}
		exp := j.Expires
		if exp == nil {
			exp = j.ExpirationDate
		}
		if exp == nil {
			exp = j.Expiry
		}
		if exp != nil && !j.Session {
			t, ok := expiryTime(*exp)
			if !ok {
				return nil, Errorf(KindInvalid, "cookie %d of the jar has an expiry that is not a number of seconds", i+1)
			}
			c.Expires = t
		}
		c.Domain = strings.ToLower(strings.TrimSpace(c.Domain))
		if !cookieOnPlatform(p, c.Domain) {
			continue
		}
		c, err := checkCookie(c)
		if err != nil {
			return nil, Errorf(KindInvalid, "cookie %d of the jar: %s", i+1, err.Error())
		}
		out = append(out, c)
	}
	return out, nil
}

// jsonJarError names where the JSON went wrong without quoting it: a
// syntax error's text includes the offending character, which may belong
// to a cookie value.
func jsonJarError(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return Errorf(KindInvalid, "the cookie jar is not valid JSON (at byte %d)", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return Errorf(KindInvalid, "the cookie jar is not a JSON array of cookies (at byte %d)", te.Offset)
	}
	return Errorf(KindInvalid, "the cookie jar is not valid JSON")
}

func parseNetscapeJar(p Platform, data []byte) ([]Cookie, error) {
	var out []Cookie
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		httpOnly := false
		if rest, ok := strings.CutPrefix(line, "#HttpOnly_"); ok {
			line, httpOnly = rest, true
		} else if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 7 {
			return nil, Errorf(KindInvalid, "line %d of the cookie jar is neither JSON nor a cookies.txt line of 7 tab-separated fields", n+1)
		}
		if len(out) == MaxJarCookies {
			return nil, Errorf(KindInvalid, "the cookie jar holds more than %d cookies", MaxJarCookies)
		}
		sub, ok1 := netscapeBool(f[1])
		secure, ok2 := netscapeBool(f[3])
		if !ok1 || !ok2 {
			return nil, Errorf(KindInvalid, "line %d of the cookie jar: the flags must be TRUE or FALSE", n+1)
		}
		sec, err := strconv.ParseFloat(strings.TrimSpace(f[4]), 64)
		if err != nil {
			return nil, Errorf(KindInvalid, "line %d of the cookie jar: the expiry must be a number of seconds", n+1)
		}
		c := Cookie{Domain: f[0], Path: f[2], Secure: secure, Name: f[5], Value: f[6], HTTPOnly: httpOnly}
		if sub && !strings.HasPrefix(c.Domain, ".") {
			c.Domain = "." + c.Domain
		}
		if !sub {
			c.Domain = strings.TrimPrefix(c.Domain, ".")
		}
		t, ok := expiryTime(sec)
		if !ok {
			return nil, Errorf(KindInvalid, "line %d of the cookie jar: the expiry must be a number of seconds", n+1)
		}
		c.Expires = t
		c.Domain = strings.ToLower(strings.TrimSpace(c.Domain))
		if !cookieOnPlatform(p, c.Domain) {
			continue
		}
		c, err = checkCookie(c)
		if err != nil {
			return nil, Errorf(KindInvalid, "line %d of the cookie jar: %s", n+1, err.Error())
		}
		out = append(out, c)
	}
	return out, nil
}

func netscapeBool(s string) (bool, bool) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "TRUE":
		return true, true
	case "FALSE":
		return false, true
	}
	return false, false
}

// expiryTime turns an export's expiry in seconds into a time: zero or
// negative is a session cookie (Playwright writes -1, cookies.txt 0), and
// so is a fraction of the first second, which whole seconds make 0: the
// stored form, in whole seconds, leaves 0 out as a session cookie's.
func expiryTime(sec float64) (time.Time, bool) {
	if math.IsNaN(sec) || math.IsInf(sec, 0) {
		return time.Time{}, false
	}
	if sec < 1 {
		return time.Time{}, true
	}
	if sec > maxExpiry {
		sec = maxExpiry
	}
	return time.Unix(int64(sec), 0).UTC(), true
}

// checkCookie defaults the path and refuses names and values a browser
// would never send; the domain is already one of the platform's. Its
// errors name the problem, never the value.
func checkCookie(c Cookie) (Cookie, error) {
	for i := 0; i < len(c.Domain); i++ {
		if b := c.Domain[i]; !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-' || b == '.') {
			return c, errors.New("the domain is not a host name")
		}
	}
	if c.Path == "" {
		c.Path = "/"
	}
	if !strings.HasPrefix(c.Path, "/") || strings.ContainsFunc(c.Path, isCookieCtl) || strings.Contains(c.Path, ";") {
		return c, errors.New("the path is not a URL path")
	}
	if c.Name == "" || !validCookieName(c.Name) {
		return c, errors.New("the name is empty or not a cookie name")
	}
	if !utf8.ValidString(c.Path) {
		return c, errors.New("the path is not UTF-8")
	}
	if !utf8.ValidString(c.Value) || strings.ContainsFunc(c.Value, isCookieCtl) || strings.Contains(c.Value, ";") {
		return c, errors.New("the value of cookie " + c.Name + " has characters a cookie cannot carry")
	}
	return c, nil
}

func isCookieCtl(r rune) bool { return r < 0x20 || r == 0x7f }

// validCookieName accepts RFC 6265 token characters.
func validCookieName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || strings.IndexByte(`()<>@,;:\"/[]?={}`, c) >= 0 {
			return false
		}
	}
	return true
}

// cookieOnPlatform reports whether a lower-cased cookie domain is one of
// the platform's domains or a subdomain of one.
func cookieOnPlatform(p Platform, domain string) bool {
	d := strings.TrimPrefix(domain, ".")
	for _, base := range platformDomains[p] {
		if d == base || strings.HasSuffix(d, "."+base) {
			return true
		}
	}
	return false
}

func hasCookie(cookies []Cookie, names []string) bool {
	for _, c := range cookies {
		for _, n := range names {
			if c.Name == n && c.Value != "" {
				return true
			}
		}
	}
	return false
}
