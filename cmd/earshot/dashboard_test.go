package main

// The dashboard end to end, in a real browser against the real binary:
// sign in by link, read and filter the inbox, triage, a match arriving
// live, phrases up to the plan limit, plan meters, sign out, and a used
// link refused.

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/earshothq/earshot/testkit/mailtest"
)

// post is an ingest post of the x platform.
func xPost(id, author, text string) map[string]any {
	return map[string]any{"externalId": id, "authorName": author, "body": []string{text}, "url": "https://x.com/" + id, "likes": 1, "comments": 0}
}

func (s *instance) ingest(key string, platform string, posts ...any) {
	s.t.Helper()
	s.call("POST", "/ingest", key, map[string]any{"platform": platform, "posts": posts}).want(s.t, 200, "")
}

func TestDashboardFlow(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")

	// The first start prints a sign-in link beside the keys.
	m := linkRe.FindStringSubmatch(s.stdout.String())
	if m == nil || !strings.Contains(s.stdout.String(), "dashboard sign-in:") {
		t.Fatalf("first start printed no sign-in link:\n%s", s.stdout)
	}
	first := s.URL + "/app/login/" + m[1]

	// Signed out, the dashboard sends the browser to sign in; / leads there.
	b.open(s.URL + "/")
	if loc := b.location(); loc != s.URL+"/app/login" {
		t.Fatalf("GET / as a stranger ends at %s, want the sign-in page", loc)
	}
	b.signIn(first)
	if loc := b.location(); loc != s.URL+"/app/" {
		t.Fatalf("the sign-in link ended at %s, want /app/", loc)
	}
	if h := b.text("h1"); h != "Inbox" {
		t.Fatalf("h1 %q after signing in", h)
	}
	if got := b.text(".empty"); !strings.Contains(got, "add a phrase") {
		t.Fatalf("empty inbox says %q", got)
	}

	// Phrases: a refusal shows beside its field; then add one; then meet
	// the plan limit (one phrase per platform by default).
	b.open(s.URL + "/app/phrases")
	b.do(setValue("#p-platform", "reddit"), sendKeys("#p-phrase", "acme"))
	b.submitAndWait(`form.add button[type="submit"]`)
	if e := b.text("#e-community"); e != "community is required for reddit phrases" {
		t.Fatalf("error beside community: %q\n%s", e, b.text("main"))
	}
	if v := eval[string](b, `document.querySelector("#p-phrase").value`); v != "acme" {
		t.Fatalf("the form lost the phrase typed: %q", v)
	}
	b.do(setValue("#p-platform", "x"), setValue("#p-phrase", "acme"))
	b.submitAndWait(`form.add button[type="submit"]`)
	if n := b.text(".notice"); !strings.HasPrefix(n, "Phrase added.") {
		t.Fatalf("notice %q after adding", n)
	}
	if got := b.text("table.phrases tbody"); !strings.Contains(got, "acme") || !strings.Contains(got, "listening") {
		t.Fatalf("phrase list: %q", got)
	}
	b.do(setValue("#p-platform", "x"), setValue("#p-phrase", "widgets"))
	b.submitAndWait(`form.add button[type="submit"]`)
	if e := b.text("#e-platform"); e != "the plan allows 1 phrase per platform (x has 1); the operator raises it with EARSHOT_PLAN_PHRASES_PER_PLATFORM" {
		t.Fatalf("plan limit beside platform: %q\n%s", e, b.text("main"))
	}
	if n := eval[int](b, `document.querySelectorAll("table.phrases tbody tr").length`); n != 1 {
		t.Fatalf("%d phrases after the refused one, want 1", n)
	}

	// Posts arrive through the ingest endpoint, some carrying markup and
	// script from strangers.
	s.ingest(s.IngestKey, "x",
		xPost("p1", "ada", "Looking for an acme alternative, any recommendations?"),
		xPost("p2", `<script>window.__xss=1;alert(1)</script>`, `acme <script>window.__xss=2;alert(2)</script> works`),
		xPost("p3", `"><img src=x onerror="window.__xss=3;alert(3)">`, `"><img src=x onerror="window.__xss=4;alert(4)"> acme rocks`),
		xPost("p4", "bo", "acme javascript:window.__xss=5 click <a href=\"javascript:alert(5)\">here</a>"),
	)
	// A post whose own address is a javascript: URL is refused at ingest.
	r := s.call("POST", "/ingest", s.IngestKey, map[string]any{"platform": "x", "posts": []any{
		map[string]any{"externalId": "p5", "authorName": "eve", "body": []string{"acme"}, "url": "javascript:alert(6)"}}}).want(t, 200, "").JSON(t)
	if r["ingested"] != 0.0 {
		t.Fatalf("a javascript: post address was ingested: %v", r)
	}

	b.open(s.URL + "/app/")
	b.waitFor(`document.querySelectorAll("article.match").length === 4`, "four matches")
	main := b.text("#matches")
	for _, want := range []string{"Looking for an acme alternative", `<script>window.__xss=1;alert(1)</script>`,
		`"><img src=x onerror="window.__xss=4;alert(4)"> acme rocks`, `<a href="javascript:alert(5)">here</a>`} {
		if !strings.Contains(main, want) {
			t.Fatalf("the inbox does not show %q as text:\n%s", want, main)
		}
	}
	if n := eval[int](b, `document.querySelectorAll("#matches script, #matches img, #matches [onerror]").length`); n != 0 {
		t.Fatalf("%d elements made from post text", n)
	}
	if n := eval[int](b, `Array.from(document.querySelectorAll("a")).filter(a => a.href.trim().toLowerCase().startsWith("javascript:")).length`); n != 0 {
		t.Fatalf("%d links with a javascript: target", n)
	}
	if v := eval[bool](b, `window.__xss === undefined`); !v || b.dialogCount() != 0 {
		t.Fatalf("injected script ran: __xss=%v, dialogs %v", eval[any](b, `window.__xss`), b.dialogs)
	}
	// Every match shows phrase, score, intent, reason, author, text, when
	// and a link to the post, newest first.
	first4 := eval[string](b, `document.querySelector("article.match").innerText`)
	for _, want := range []string{"“acme”", "bo", "Open post", "just now"} {
		if !strings.Contains(first4, want) {
			t.Fatalf("the newest match lacks %q:\n%s", want, first4)
		}
	}
	b.waitFor(`document.querySelectorAll("article .score.pending").length === 0`, "every match scored")
	b.open(s.URL + "/app/")
	p1 := `article.match:last-of-type`
	if got := strings.ToLower(b.text(p1 + " .intent")); got != "recommendation" && got != "buying" && got != "question" {
		t.Fatalf("intent of p1: %q", got)
	}
	if got := b.text(p1 + " .reason"); got == "" {
		t.Fatal("p1 shows no reason")
	}
	if href := eval[string](b, `document.querySelector("`+p1+` a.open").href`); href != "https://x.com/p1" {
		t.Fatalf("link to the post: %q", href)
	}

	// Triage one at a time, through the page's script.
	b.do(js(`window.__stay = true`))
	b.click(p1+` button[value="read"]`, `!document.querySelector("`+p1+`").classList.contains("unread")`)
	if got := b.text(p1 + ` button[value="unread"]`); got != "Mark unread" {
		t.Fatalf("after marking read the button says %q", got)
	}
	// The keyboard alone: focus the match, s stars it, r toggles read.
	b.do(chromedp.Focus(chromedp.CSS(p1)), chromedp.KeyEvent("s"))
	b.waitFor(`document.querySelector("`+p1+` .star") !== null`, "the star from the keyboard")
	b.do(chromedp.KeyEvent("r"))
	b.waitFor(`document.querySelector("`+p1+`").classList.contains("unread")`, "unread from the keyboard")
	b.click(p1+` button[value="read"]`, `!document.querySelector("`+p1+`").classList.contains("unread")`)
	if !eval[bool](b, `window.__stay === true`) {
		t.Fatal("triage reloaded the page instead of updating the match in place")
	}

	// Filters live in the URL; the Show menu selects read state.
	b.do(setValue("#f-show", "unread"))
	b.submitAndWait(`form.filters button[type="submit"]`)
	if loc := b.location(); !strings.Contains(loc, "show=unread") {
		t.Fatalf("filtered address %s", loc)
	}
	if n := eval[int](b, `document.querySelectorAll("article.match").length`); n != 3 {
		t.Fatalf("%d unread matches, want 3", n)
	}
	b.open(s.URL + "/app/?show=starred")
	if n := eval[int](b, `document.querySelectorAll("article.match").length`); n != 1 || !strings.Contains(b.text("#matches"), "acme alternative") {
		t.Fatalf("starred view: %s", b.text("#matches"))
	}
	b.open(s.URL + "/app/?min_score=101")
	if p := b.text(".problem"); p != "min_score must be a whole number from 0 to 100" {
		t.Fatalf("a bad filter says %q", p)
	}
	b.open(s.URL + "/app/?platform=reddit")
	if got := b.text(".empty"); got != "No match fits these filters." {
		t.Fatalf("reddit filter: %q", got)
	}
	b.open(s.URL + "/app/")
	intent := strings.ToLower(b.text(p1 + " .intent"))
	b.open(s.URL + "/app/?intent=" + intent)
	if got := b.text("#matches"); !strings.Contains(got, "acme alternative") {
		t.Fatalf("intent=%s leaves out p1:\n%s", intent, got)
	}

	// Bulk: select two and archive them; the inbox hides archived ones.
	b.open(s.URL + "/app/")
	b.do(clickOn(`#matches article:nth-of-type(1) input[type="checkbox"]`), clickOn(`#matches article:nth-of-type(2) input[type="checkbox"]`))
	b.submitAndWait(`#bulk button[value="archive"]`)
	if n := b.text(".notice"); n != "2 matches archived." {
		t.Fatalf("bulk notice %q", n)
	}
	if n := eval[int](b, `document.querySelectorAll("article.match").length`); n != 2 {
		t.Fatalf("%d matches in the inbox after archiving 2 of 4", n)
	}
	b.open(s.URL + "/app/?show=archived")
	if n := eval[int](b, `document.querySelectorAll("article.match").length`); n != 2 {
		t.Fatalf("%d archived matches, want 2", n)
	}

	// A match that arrives while the inbox is open appears without a
	// reload, scored.
	b.open(s.URL + "/app/")
	b.do(js(`window.__stay = true`))
	s.ingest(s.IngestKey, "x", xPost("p6", "cy", "We need acme pricing for 40 seats, who sells it?"))
	b.waitFor(`!!Array.from(document.querySelectorAll("article.match")).find(a => a.innerText.includes("40 seats") && !a.querySelector(".score.pending"))`, "the new match live")
	if !eval[bool](b, `window.__stay === true`) {
		t.Fatal("the page reloaded")
	}
	if got := b.text("#live-status"); got != "1 new match arrived." {
		t.Fatalf("live status %q", got)
	}

	// Plan meters say what GET /me says.
	b.open(s.URL + "/app/plan")
	meters := eval[[]string](b, `Array.from(document.querySelectorAll(".meter")).map(m => m.textContent.replace(/\s+/g, " ").trim())`)
	for _, want := range []string{"x phrases 1 of 1 1 of 1 · limit reached", "reddit phrases 0 of 1 0 of 1", "x accounts 1 of 1 1 of 1 · limit reached",
		"facebook accounts 0 of 1 0 of 1", "webhooks and channels not part of the plan"} {
		if !slices.Contains(meters, want) {
			t.Fatalf("no meter %q among %q", want, meters)
		}
	}
	if n := eval[int](b, `document.querySelectorAll("meter").length`); n != 6 {
		t.Fatalf("%d meters, want 6", n)
	}

	// Pause, resume, then delete the phrase after a confirmation that
	// says its matches go too.
	b.open(s.URL + "/app/phrases")
	b.submitAndWait(`.row-actions button`)
	if got := b.text("table.phrases tbody"); !strings.Contains(got, "paused") {
		t.Fatalf("after pausing: %q", got)
	}
	b.submitAndWait(`.row-actions button`)
	if got := b.text("table.phrases tbody"); !strings.Contains(got, "listening") {
		t.Fatalf("after resuming: %q", got)
	}
	b.submitAndWait(`.row-actions a.danger`)
	if got := b.text("main"); !strings.Contains(got, "its 5 matches go too") {
		t.Fatalf("the confirmation says:\n%s", got)
	}
	b.submitAndWait(`form.confirm button`)
	if got := b.text(".notice"); got != "Phrase deleted, with its matches." {
		t.Fatalf("after deleting: %q", got)
	}
	b.open(s.URL + "/app/?show=all")
	if n := eval[int](b, `document.querySelectorAll("article.match").length`); n != 0 {
		t.Fatalf("%d matches left after deleting their phrase", n)
	}

	// Sign out; the dashboard is closed again, and the used link stays used.
	b.submitAndWait(`form.signout button`)
	if got := b.text(".notice"); got != "You are signed out." {
		t.Fatalf("after signing out: %q", got)
	}
	b.open(s.URL + "/app/phrases")
	if loc := b.location(); loc != s.URL+"/app/login" {
		t.Fatalf("signed out, /app/phrases ends at %s", loc)
	}
	b.signIn(first)
	if loc := b.location(); !strings.HasPrefix(loc, s.URL+"/app/login/") || !strings.Contains(b.text(".problem"), "used already or has expired") {
		t.Fatalf("reusing the link: at %s, page says %q", loc, b.text("main"))
	}
	b.open(s.URL + "/app/")
	if loc := b.location(); loc != s.URL+"/app/login" {
		t.Fatalf("a reused link signed the browser in: %s", loc)
	}
}

// Asking for a link by email: the same answer for known and unknown
// addresses, one mail (to the owner) through the configured SMTP server,
// limited per requesting address.
func TestDashboardEmailLink(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	smtp := mailtest.NewServer(t)
	s := start(t, "EARSHOT_SMTP_URL="+smtp.URL(), "EARSHOT_MAIL_FROM=earshot@example.com")
	for _, email := range []string{"nobody@example.com", "owner@localhost"} {
		b.open(s.URL + "/app/login")
		b.do(sendKeys("#email", email))
		b.submitAndWait(`main form button[type="submit"]`)
		if h := b.text("h1"); h != "Check your email" || !strings.Contains(b.text("main"), "If "+email+" belongs to an owner here") {
			t.Fatalf("after asking for %s: %q", email, b.text("main"))
		}
	}
	msgs := smtp.WaitFor(1, 10*time.Second)
	if len(msgs) != 1 || msgs[0].To[0] != "owner@localhost" {
		t.Fatalf("want exactly one mail (the unknown address gets none): %+v", msgs)
	}
	m := linkRe.FindStringSubmatch(msgs[0].Body)
	if m == nil {
		t.Fatalf("no sign-in link in the mail:\n%s", msgs[0].Body)
	}
	b.signIn(s.URL + "/app/login/" + m[1])
	if h := b.text("h1"); h != "Inbox" {
		t.Fatalf("the emailed link led to %q", h)
	}
	// Per requesting address, ten requests a minute; then a clear refusal.
	c := newBrowserless(t, s)
	for i := 2; i < 10; i++ {
		if code, _, _ := c.post("/app/login", url.Values{"email": {"owner@localhost"}}); code != 200 {
			t.Fatalf("request %d: %d", i+1, code)
		}
	}
	code, _, body := c.post("/app/login", url.Values{"email": {"owner@localhost"}})
	if code != 429 || !strings.Contains(body, "too many sign-in requests") {
		t.Fatalf("eleventh request: %d\n%s", code, body)
	}
}

// Sign out everywhere ends the other browser's session too.
func TestDashboardSignOutEverywhere(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	s := start(t)
	other := newBrowserless(t, s)
	other.signIn(s.loginLink(s.OwnerID))
	b.signIn(s.loginLink(s.OwnerID))
	b.open(s.URL + "/app/plan")
	b.submitAndWait(`form[action="/app/logout/everywhere"] button`)
	if got := b.text(".notice"); got != "You are signed out on every browser." {
		t.Fatalf("notice %q", got)
	}
	if code, loc, _ := other.get("/app/"); code != 303 || loc != "/app/login" {
		t.Fatalf("the other browser after signing out everywhere: %d %s", code, loc)
	}
}

// Two owners: each sees and changes only their own matches and phrases.
func TestDashboardTwoOwners(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	a, bo := newTenant(t, s, "a@example.com"), newTenant(t, s, "b@example.com")
	ph := dataOf(t, s.call("POST", "/api/v1/keywords", a.full, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, ""))
	s.ingest(a.ingest, "x", xPost("a1", "ada", "acme secret plans of A"))
	ms := s.call("GET", "/api/v1/matches", a.full, nil).want(t, 200, "").JSON(t)["data"].([]any)
	if len(ms) != 1 {
		t.Fatalf("%d matches for A", len(ms))
	}
	mid := ms[0].(map[string]any)["id"].(string)

	cb := newBrowserless(t, s)
	cb.signIn(s.loginLink(bo.id))
	for _, path := range []string{"/app/", "/app/?show=all", "/app/?phrase=" + ph["id"].(string), "/app/phrases", "/app/phrases/" + ph["id"].(string) + "/delete"} {
		_, _, body := cb.get(path)
		if strings.Contains(body, "secret plans") || strings.Contains(body, ">acme<") {
			t.Fatalf("B sees A's data on %s", path)
		}
	}
	for _, action := range []string{"read", "star", "archive"} {
		if code, _, _ := cb.post("/app/matches/"+mid, url.Values{"action": {action}}); code != 404 {
			t.Fatalf("B %s A's match: %d, want 404", action, code)
		}
	}
	if code, _, _ := cb.post("/app/matches/bulk", url.Values{"id": {mid}, "action": {"archive"}}); code != 303 {
		t.Fatalf("B's bulk archive of A's match: %d", code)
	}
	for _, path := range []string{"/pause", "/delete"} {
		if code, _, _ := cb.post("/app/phrases/"+ph["id"].(string)+path, url.Values{}); code != 404 {
			t.Fatalf("B on A's phrase %s: %d, want 404", path, code)
		}
	}
	// A's match and phrase are as they were.
	ca := newBrowserless(t, s)
	ca.signIn(s.loginLink(a.id))
	_, _, body := ca.get("/app/")
	if !strings.Contains(body, "secret plans") || !strings.Contains(body, "flag new") || strings.Contains(body, "★ starred") {
		t.Fatalf("A's inbox changed:\n%s", body)
	}
	p := dataOf(t, s.call("GET", "/api/v1/keywords/"+ph["id"].(string), a.full, nil).want(t, 200, ""))
	if p["status"] != "listening" {
		t.Fatalf("A's phrase: %v", p)
	}
}

// Writes from another site are refused and change nothing; every page
// carries the security headers.
func TestDashboardCrossOriginAndHeaders(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	s.ingest(s.IngestKey, "x", xPost("c1", "ada", "acme question"))
	mid := s.call("GET", "/api/v1/matches", s.APIKey, nil).want(t, 200, "").JSON(t)["data"].([]any)[0].(map[string]any)["id"].(string)
	c := newBrowserless(t, s)
	c.signIn(s.loginLink(s.OwnerID))
	for _, h := range [][]string{
		{"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"},
		{"Origin", "https://evil.example", "Sec-Fetch-Site", ""},
	} {
		code, _, body := c.post("/app/matches/"+mid, url.Values{"action": {"archive"}}, h...)
		if code != 403 || !strings.Contains(body, "nothing was changed") {
			t.Fatalf("cross-origin archive %v: %d", h, code)
		}
		if code, _, _ := c.post("/app/logout/everywhere", url.Values{}, h...); code != 403 {
			t.Fatalf("cross-origin sign out everywhere: %d", code)
		}
	}
	_, _, body := c.get("/app/")
	if !strings.Contains(body, "flag new") || strings.Contains(body, "flag\">archived") {
		t.Fatal("a cross-origin write changed the match")
	}
	for _, path := range []string{"/app/", "/app/login", "/app/phrases", "/app/plan", "/app/nope"} {
		resp := c.rawDo(mustRequest("GET", s.URL+path))
		csp := resp.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") || !strings.Contains(csp, "frame-ancestors 'none'") ||
			resp.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%s headers: %v", path, resp.Header)
		}
	}
	if code, loc, _ := newBrowserless(t, s).get("/"); code != 303 || loc != "/app/" {
		t.Fatalf("GET / = %d %s", code, loc)
	}
	// The session cookie: HttpOnly, SameSite=Lax, scoped to /app/.
	action, form := c.confirmForm(s.loginLink(s.OwnerID))
	req, _ := http.NewRequest("POST", s.URL+action, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp := c.rawDo(req)
	sc := resp.Header.Get("Set-Cookie")
	if !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Lax") || !strings.Contains(sc, "Path=/app/") || strings.Contains(sc, "Secure") {
		t.Fatalf("Set-Cookie: %s", sc)
	}
}

// The browser follows replica A while the match arrives through replica
// B: the live inbox reads the shared database, not one process's bus.
func TestDashboardLiveAcrossReplicas(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	db := "EARSHOT_DATABASE_URL=sqlite://" + t.TempDir() + "/shared.db"
	ra := start(t, db)
	rb := start(t, db, "EARSHOT_BOOTSTRAP=false")
	ra.call("POST", "/api/v1/keywords", ra.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	b.signIn(ra.loginLink(ra.OwnerID))
	if h := b.text("h1"); h != "Inbox" {
		t.Fatalf("signed in to %q", h)
	}
	b.do(js(`window.__stay = true`))
	rb.ingest(ra.IngestKey, "x", xPost("r1", "ada", "acme via the other replica"))
	b.waitFor(`!!Array.from(document.querySelectorAll("article.match")).find(a => a.innerText.includes("via the other replica") && !a.querySelector(".score.pending"))`,
		"the match from replica B, scored")
	if !eval[bool](b, `window.__stay === true`) || b.text(".empty") != "" {
		t.Fatal("the page reloaded, or still says it is empty")
	}
}

// The triage extension of /api/v1 reads and writes the state the
// dashboard shows, for the key's owner only.
func TestTriageAPI(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	a, bo := newTenant(t, s, "a@example.com"), newTenant(t, s, "b@example.com")
	s.call("POST", "/api/v1/keywords", a.full, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	s.ingest(a.ingest, "x", xPost("t1", "ada", "acme one"), xPost("t2", "ada", "acme two"))
	ms := s.call("GET", "/api/v1/matches", a.full, nil).want(t, 200, "").JSON(t)["data"].([]any)
	m1, m2 := ms[0].(map[string]any)["id"].(string), ms[1].(map[string]any)["id"].(string)
	if len(ms[0].(map[string]any)) != 8 {
		t.Fatalf("the v1 match record changed: %v", ms[0])
	}
	tr := dataOf(t, s.call("GET", "/api/v1/matches/"+m1+"/triage", a.readOnly, nil).want(t, 200, ""))
	if tr["matchId"] != m1 || tr["read"] != false || tr["starred"] != false || tr["archived"] != false {
		t.Fatalf("untouched triage: %v", tr)
	}
	tr = dataOf(t, s.call("PATCH", "/api/v1/matches/"+m1+"/triage", a.readOnly, map[string]any{"read": true, "starred": true}).want(t, 200, ""))
	if tr["read"] != true || tr["starred"] != true || tr["archived"] != false {
		t.Fatalf("after PATCH: %v", tr)
	}
	s.call("PATCH", "/api/v1/matches/"+m1+"/triage", a.full, map[string]any{}).want(t, 400, "invalid_parameter")
	s.call("PATCH", "/api/v1/matches/"+m1+"/triage", a.full, map[string]any{"read": "yes"}).want(t, 400, "invalid_parameter")
	s.call("PATCH", "/api/v1/matches/"+m1+"/triage", a.full, map[string]any{"pinned": true}).want(t, 400, "invalid_parameter")
	s.call("PATCH", "/api/v1/matches/nope/triage", a.full, map[string]any{"read": true}).want(t, 404, "not_found")
	up := dataOf(t, s.call("POST", "/api/v1/triage", a.full, map[string]any{"ids": []string{m1, m2, "nope"}, "archived": true}).want(t, 200, ""))
	if up["updated"] != 2.0 {
		t.Fatalf("bulk: %v", up)
	}
	s.call("POST", "/api/v1/triage", a.full, map[string]any{"ids": []string{}, "archived": true}).want(t, 400, "invalid_parameter")
	s.call("POST", "/api/v1/triage", a.full, map[string]any{"archived": true}).want(t, 400, "invalid_parameter")
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprint(i)
	}
	s.call("POST", "/api/v1/triage", a.full, map[string]any{"ids": many, "read": true}).want(t, 400, "invalid_parameter")

	// Owner B can neither read nor change A's triage.
	s.call("GET", "/api/v1/matches/"+m1+"/triage", bo.full, nil).want(t, 404, "not_found")
	s.call("PATCH", "/api/v1/matches/"+m1+"/triage", bo.full, map[string]any{"archived": false}).want(t, 404, "not_found")
	if up := dataOf(t, s.call("POST", "/api/v1/triage", bo.full, map[string]any{"ids": []string{m1, m2}, "archived": false}).want(t, 200, "")); up["updated"] != 0.0 {
		t.Fatalf("B's bulk touched A's matches: %v", up)
	}
	tr = dataOf(t, s.call("GET", "/api/v1/matches/"+m1+"/triage", a.full, nil).want(t, 200, ""))
	if tr["read"] != true || tr["starred"] != true || tr["archived"] != true {
		t.Fatalf("A's triage after B tried: %v", tr)
	}
	// The dashboard shows the same state.
	c := newBrowserless(t, s)
	c.signIn(s.loginLink(a.id))
	if _, _, body := c.get("/app/?show=archived"); strings.Count(body, `<article class="match archived"`) != 1 || !strings.Contains(body, "★ starred") {
		t.Fatalf("the dashboard's archived view:\n%s", body)
	}
	// The document marks the extension.
	doc := s.call("GET", "/api/v1/openapi.json", "", nil).want(t, 200, "").JSON(t)
	paths := doc["paths"].(map[string]any)
	for _, p := range []string{"/api/v1/matches/{id}/triage", "/api/v1/triage"} {
		for method, op := range paths[p].(map[string]any) {
			if o, ok := op.(map[string]any); ok && method != "parameters" && o["x-extension"] != true {
				t.Fatalf("%s %s is not marked x-extension", method, p)
			}
		}
	}
}

// With script turned off the pages still work: forms post, the browser
// comes back to the view it was on.
func TestDashboardWithoutScript(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	s.ingest(s.IngestKey, "x", xPost("n1", "ada", "acme one"), xPost("n2", "bo", "acme two"), xPost("n3", "cy", "acme three"))
	b.signIn(s.loginLink(s.OwnerID))
	b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))
	b.open(s.URL + "/app/?show=unread")
	if eval[bool](b, `document.getElementById("select-all") !== null`) {
		t.Fatal("the page's script ran")
	}
	if n := eval[int](b, `document.querySelectorAll("article.match").length`); n != 3 {
		t.Fatalf("%d unread", n)
	}
	b.do(clickOn(`article.match:first-of-type button[value="read"]`))
	b.waitFor(`document.readyState === "complete" && document.querySelectorAll("article.match").length === 2`, "the unread view without the match read")
	if loc := b.location(); loc != s.URL+"/app/?show=unread" {
		t.Fatalf("back at %s", loc)
	}
	b.do(clickOn(`article.match:first-of-type input[type="checkbox"]`), clickOn(`#bulk button[value="archive"]`))
	b.waitFor(`document.readyState === "complete" && document.querySelectorAll("article.match").length === 1`, "the bulk archive")
	if got := b.text(".notice"); got != "1 match archived." {
		t.Fatalf("notice %q", got)
	}
}

// Links are made under EARSHOT_SITE_URL, and an https site marks the
// session cookie Secure.
func TestDashboardSiteURL(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_SITE_URL=https://listen.example.com")
	if !strings.Contains(s.stdout.String(), "dashboard sign-in:     https://listen.example.com/app/login/") {
		t.Fatalf("first start:\n%s", s.stdout)
	}
	out := s.mustAdmin("owner", "login-link", "--owner", s.OwnerID)
	m := regexp.MustCompile(`^https://listen\.example\.com/app/login/([A-Za-z0-9_-]{43})$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("login-link printed %q", out)
	}
	if _, err := s.admin("owner", "login-link", "--owner", "no-such-owner"); err == nil {
		t.Fatal("a link for an unknown owner")
	}
	c := newBrowserless(t, s)
	action, form := c.confirmForm(s.URL + "/app/login/" + m[1])
	req, _ := http.NewRequest("POST", s.URL+action, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp := c.rawDo(req)
	if sc := resp.Header.Get("Set-Cookie"); resp.StatusCode != 303 || !strings.Contains(sc, "; Secure") {
		t.Fatalf("%d, Set-Cookie %s", resp.StatusCode, sc)
	}
}
