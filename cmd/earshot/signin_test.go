package main

// Signing in by email link on the real binary: the request answers alike
// for known and unknown addresses, strangers cannot keep an owner's own
// request from being sent, opening a link asks before signing in, the
// log never holds a link, and the cookie follows the site's scheme.

import (
	"html"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/mailtest"
)

// signIn opens a sign-in link in the browser and presses its button.
func (b *tab) signIn(link string) {
	b.t.Helper()
	b.open(link)
	b.submitAndWait(`form.signin button`)
}

var (
	confirmAction = regexp.MustCompile(`<form class="signin" method="post" action="([^"]+)">`)
	confirmToken  = regexp.MustCompile(`name="token" value="([^"]+)"`)
)

// confirmForm opens a sign-in link and returns where its button posts
// and the token it sends; opening the link sets no cookie.
func (c *browserless) confirmForm(link string) (string, url.Values) {
	c.t.Helper()
	resp := c.send(mustRequest("GET", link))
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a, tok := confirmAction.FindSubmatch(b), confirmToken.FindSubmatch(b)
	if resp.StatusCode != 200 || a == nil || tok == nil {
		c.t.Fatalf("opening %s: %d\n%s", link, resp.StatusCode, b)
	}
	if sc := resp.Header.Get("Set-Cookie"); sc != "" {
		c.t.Fatalf("opening a link set a cookie: %s", sc)
	}
	return html.UnescapeString(string(a[1])), url.Values{"token": {html.UnescapeString(string(tok[1]))}}
}

// fromAddr is a client whose requests come from another loopback
// address, as requests from other people would.
func fromAddr(t *testing.T, s *instance, ip string) *browserless {
	jar, _ := cookiejar.New(nil)
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &browserless{t: t, s: s, client: &http.Client{Jar: jar, Transport: tr, Timeout: 30 * time.Second}}
}

// A link opened shows a button and signs in only on its POST: opening
// it uses nothing and sets no cookie, and a POST from another site is
// refused and leaves the link usable.
func TestSignInLinkAsksFirst(t *testing.T) {
	t.Parallel()
	s := start(t)
	link := s.loginLink(s.OwnerID)
	c := newBrowserless(t, s)
	action, form := c.confirmForm(link)
	c.confirmForm(link) // opening twice uses nothing
	if code, _, _ := c.get("/app/"); code != 303 {
		t.Fatalf("opening the link signed in: /app/ answers %d", code)
	}

	// Another site's page posting the form (login CSRF) is refused.
	req, _ := http.NewRequest("POST", s.URL+action, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "https://attacker.example")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp := c.send(req)
	resp.Body.Close()
	if resp.StatusCode != 403 || resp.Header.Get("Set-Cookie") != "" {
		t.Fatalf("cross-site POST: %d, Set-Cookie %q", resp.StatusCode, resp.Header.Get("Set-Cookie"))
	}

	code, loc, _ := c.post(action, form)
	if code != 303 || loc != "/app/" {
		t.Fatalf("pressing the button: %d %s", code, loc)
	}
	if code, _, body := c.get("/app/"); code != 200 || !strings.Contains(body, "Inbox") {
		t.Fatalf("after signing in /app/ answers %d", code)
	}
	other := newBrowserless(t, s)
	if code, _, body := other.post(action, form); code != 404 || !strings.Contains(body, "used already or has expired") {
		t.Fatalf("a used link: %d\n%s", code, body)
	}
}

// Known and unknown addresses get the same answer; three strangers
// asking for the owner's link from three addresses do not stop the
// owner's own request from a fourth; the emailed link works.
func TestSignInRequestByEmail(t *testing.T) {
	t.Parallel()
	smtp := mailtest.NewServer(t)
	s := start(t, "EARSHOT_SMTP_URL="+smtp.URL(), "EARSHOT_MAIL_FROM=earshot@example.com")
	c := newBrowserless(t, s)
	code1, _, known := c.post("/app/login", url.Values{"email": {"owner@localhost"}})
	code2, _, unknown := c.post("/app/login", url.Values{"email": {"nobody@localhost"}})
	if code1 != 200 || code1 != code2 || strings.ReplaceAll(unknown, "nobody@localhost", "owner@localhost") != known {
		t.Fatalf("known: %d, unknown: %d; bodies differ:\n%s\n---\n%s", code1, code2, known, unknown)
	}
	msgs := smtp.WaitFor(1, 10*time.Second)
	if len(msgs) != 1 || msgs[0].To[0] != "owner@localhost" {
		t.Fatalf("mail after a known and an unknown request: %+v", msgs)
	}
	for _, ip := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4"} {
		if code, _, _ := fromAddr(t, s, ip).post("/app/login", url.Values{"email": {"owner@localhost"}}); code != 200 {
			t.Fatalf("request from %s: %d", ip, code)
		}
	}
	code, _, body := fromAddr(t, s, "127.0.0.5").post("/app/login", url.Values{"email": {"owner@localhost"}})
	if code != 200 || body != known {
		t.Fatalf("the owner's own request after three strangers': %d\n%s", code, body)
	}
	msgs = smtp.WaitFor(5, 10*time.Second)
	if len(msgs) != 5 {
		t.Fatalf("%d emails, want 5: one per request of a distinct address", len(msgs))
	}
	m := linkRe.FindStringSubmatch(msgs[4].Body)
	if m == nil {
		t.Fatalf("no link in %q", msgs[4].Body)
	}
	owner := newBrowserless(t, s)
	owner.signIn(s.URL + "/app/login/" + m[1])
}

// Without a mail server the log says a link was requested, for which
// owner, and never holds the link.
func TestSignInLogsNoLink(t *testing.T) {
	t.Parallel()
	s := start(t)
	c := newBrowserless(t, s)
	if code, _, _ := c.post("/app/login", url.Values{"email": {"owner@localhost"}}); code != 200 {
		t.Fatalf("request: %d", code)
	}
	waitLog(t, s, "sign-in link requested")
	logs := s.logs.String()
	if !strings.Contains(logs, s.OwnerID) || strings.Contains(logs, "/app/login/") {
		t.Fatalf("the log after a request:\n%s", logs)
	}
}

// An upper-case https site address is the same site: links under the
// normalised address, and the cookie Secure with the __Host- prefix.
func TestSignInHTTPSCookie(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_SITE_URL=HTTPS://Listen.Example.COM/")
	m := regexp.MustCompile(`dashboard sign-in: +https://listen\.example\.com/app/login/([A-Za-z0-9_-]{43}) `).FindStringSubmatch(s.stdout.String())
	if m == nil {
		t.Fatalf("first start:\n%s", s.stdout)
	}
	c := newBrowserless(t, s)
	action, form := c.confirmForm(s.URL + "/app/login/" + m[1])
	req, _ := http.NewRequest("POST", s.URL+action, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp := c.send(req)
	resp.Body.Close()
	sc := resp.Header.Get("Set-Cookie")
	if resp.StatusCode != 303 || !strings.HasPrefix(sc, "__Host-earshot_session=") || !strings.Contains(sc, "; Path=/;") ||
		!strings.Contains(sc, "; Secure") || strings.Contains(sc, "Domain") {
		t.Fatalf("%d, Set-Cookie %s", resp.StatusCode, sc)
	}
}

// waitLog waits until the server's log holds want.
func waitLog(t *testing.T, s *instance, want string) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(s.logs.String(), want) {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("no %q in the log:\n%s", want, s.logs)
		}
	}
}
