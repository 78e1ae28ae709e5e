package main

// The browser kit of the dashboard tests: Debian's Chromium driven over
// the DevTools protocol (chromedp) against the real binary.

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// chromiumPath is where Debian's chromium package puts the browser.
const chromiumPath = "/usr/bin/chromium"

// browserRequired is set by CI: there a missing or broken Chromium fails
// the browser tests instead of skipping them.
func browserRequired() bool { return os.Getenv("EARSHOT_TEST_BROWSER") != "" }

// tab is one browser tab with its own profile, and the dialogs its pages
// opened (a page that runs injected script would open one).
type tab struct {
	t       *testing.T
	ctx     context.Context
	mu      sync.Mutex
	dialogs []string
}

// newTab starts Chromium with a fresh profile, or skips the test with a
// one-line reason when it is not installed (fails under
// EARSHOT_TEST_BROWSER).
func newTab(t *testing.T) *tab {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if browserRequired() {
			t.Fatalf("EARSHOT_TEST_BROWSER is set but there is no Chromium at %s", chromiumPath)
		}
		t.Skipf("no Chromium at %s (apt-get install -y chromium): browser test skipped", chromiumPath)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.NoSandbox, // tests run as root in CI
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tb := &tab{t: t}
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			tb.mu.Lock()
			tb.dialogs = append(tb.dialogs, d.Message)
			tb.mu.Unlock()
		}
	}))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The page counts as focused whatever window the desktop has in
	// front: the clicks are the page's own, which give no focus, and the
	// copy buttons' clipboard refuses a page without it.
	focused := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetFocusEmulationEnabled, emulation.SetFocusEmulationEnabledParams{Enabled: true})
		return err
	})
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank"), focused); err != nil {
		if browserRequired() {
			t.Fatalf("Chromium at %s does not start: %v", chromiumPath, err)
		}
		t.Skipf("Chromium at %s does not start (%v): browser test skipped", chromiumPath, err)
	}
	tb.ctx = ctx
	return tb
}

// do runs steps with a time limit, failing the test on error.
func (b *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("browser: %v (at %s)", err, b.location())
	}
}

func (b *tab) location() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	loc, _ := chromedp.Run(ctx, chromedp.Location())
	return loc
}

// open navigates and waits for the page's main element.
func (b *tab) open(u string) {
	b.t.Helper()
	b.do(chromedp.Navigate(u), chromedp.WaitReady(chromedp.CSS("main")))
}

// eval runs a JavaScript expression and returns its value.
func eval[T any](b *tab, expr string, opts ...chromedp.EvaluateOption) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v (at %s)", expr, err, b.location())
	}
	return v
}

// waitFor waits until a JavaScript expression is true. The page itself
// looks at it every few milliseconds (on a timer: animation frames stop
// while a window the page opened is in front); a page that navigates
// meanwhile ends that look, and the next page starts another once it is
// ready.
func (b *tab) waitFor(expr string, what string) {
	b.t.Helper()
	// A bound on a page that never comes, not a speed goal: CI runs the
	// browser beside every other package under the race detector, where
	// a page has taken over 20 s.
	deadline := time.Now().Add(60 * time.Second)
	// An expression that throws (it names what the page has not made
	// yet) is false, not the end of the look.
	pred := "(function(){try{return !!(" + expr + ")}catch(e){return false}})()"
	var last error
	for left := time.Until(deadline); left > 0; left = time.Until(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, left)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](pred, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(left)))
		if err == nil {
			cancel()
			return
		}
		last = err
		// The look ended with its page: wait for the next one.
		_, _ = chromedp.Run(ctx, chromedp.WaitReady(chromedp.CSS("body")))
		cancel()
	}
	b.t.Fatalf("waiting for %s: %v (at %s)\npage text:\n%s", what, last, b.location(), b.text("main"))
}

// openUntil opens u again and again until expr holds on it: for a page
// that shows what the server records meanwhile without updating itself.
func (b *tab) openUntil(u, expr, what string) {
	b.t.Helper()
	if !poll(20*time.Second, 100*time.Millisecond, func() bool { b.open(u); return eval[bool](b, "!!("+expr+")") }) {
		b.t.Fatalf("waiting for %s at %s\npage text:\n%s", what, u, b.text("main"))
	}
}

// rowOf returns the data-key (or data-delivery) of the table row whose
// heading cell says name, "" when there is none.
func (b *tab) rowOf(table, name string) string {
	b.t.Helper()
	return eval[string](b, `(function(){var r=Array.from(document.querySelectorAll(`+jsString(table+" tbody tr")+`)).find(function(tr){return tr.querySelector("th").innerText.trim()===`+jsString(name)+`});return r?(r.dataset.key||r.dataset.delivery||""):""})()`)
}

// text returns the visible text of the first element matching the CSS
// selector, "" when there is none.
func (b *tab) text(sel string) string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`(function(){var e=document.querySelector(`+jsString(sel)+`);return e?e.innerText:""})()`))
	return s
}

// click clicks the first element matching the CSS selector and, when
// then is not empty, waits for that expression to hold. The click is
// the element's own, inside the page: chromedp's finds the node, then
// clicks at its place, and a script that replaced the node meanwhile
// (a triage updating its match in place) fails it under load.
func (b *tab) click(sel, then string) {
	b.t.Helper()
	b.domClick(sel)
	if then != "" {
		b.waitFor(then, "after clicking "+sel)
	}
}

// submitAndWait clicks a submit button or a link and waits for the
// next page to load: the old page's marker is gone and main is there
// again. The click is inside the page, as click's: chromedp's clicks at
// the place it measured, and a page still laying out (a live inbox
// swapping in scores) moved the button away under CI's load, so the
// click fell beside it and no page came.
func (b *tab) submitAndWait(sel string) {
	b.t.Helper()
	b.do(js(`window.__old = true`))
	b.domClick(sel)
	b.waitFor(`window.__old === undefined && document.readyState === "complete" && !!document.querySelector("main")`, "the page after "+sel)
}

// domClick waits for an element matching sel to be shown, as
// chromedp's click does, then clicks it inside the page.
func (b *tab) domClick(sel string) {
	b.t.Helper()
	b.waitFor(`document.querySelector(`+jsString(sel)+`).getClientRects().length > 0`, sel)
	b.do(js(`document.querySelector(` + jsString(sel) + `).click()`))
}

func (b *tab) dialogCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.dialogs)
}

func jsString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

var linkRe = regexp.MustCompile(`https?://\S+/app/login/([A-Za-z0-9_-]{43})`)

// loginLink asks the admin console for a sign-in link of the owner and
// returns it on the running server's address.
func (s *instance) loginLink(owner string) string {
	s.t.Helper()
	out := s.mustAdmin("owner", "login-link", "--owner", owner)
	m := linkRe.FindStringSubmatch(out)
	if m == nil || strings.Contains(out, "\n") {
		s.t.Fatalf("login-link printed %q, want one link", out)
	}
	return s.URL + "/app/login/" + m[1]
}

// browserless is an HTTP client with its own cookies, for a second
// browser session or for requests a browser would not make.
type browserless struct {
	t      *testing.T
	s      *instance
	client *http.Client
}

func newBrowserless(t *testing.T, s *instance) *browserless {
	jar, _ := cookiejar.New(nil)
	return &browserless{t: t, s: s, client: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
}

// signIn opens a sign-in link, presses its button and checks it lands
// on the inbox.
func (c *browserless) signIn(link string) {
	c.t.Helper()
	action, form := c.confirmForm(link)
	if code, loc, _ := c.post(action, form); code != 303 || loc != "/app/" {
		c.t.Fatalf("signing in answered %d, to %s", code, loc)
	}
}

// get fetches a dashboard page without following redirects.
func (c *browserless) get(path string) (int, string, string) {
	c.t.Helper()
	req, _ := http.NewRequest("GET", c.s.URL+path, nil)
	return c.do(req)
}

// post sends a form as the dashboard's own pages would (same origin).
func (c *browserless) post(path string, form url.Values, headers ...string) (int, string, string) {
	c.t.Helper()
	req, _ := http.NewRequest("POST", c.s.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", c.s.URL)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return c.do(req)
}

// send sends req with the client's cookies and follows no redirect.
func (c *browserless) send(req *http.Request) *http.Response {
	c.t.Helper()
	cl := *c.client
	cl.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := cl.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// do sends req as send does and returns the status, the Location header
// and the body.
func (c *browserless) do(req *http.Request) (int, string, string) {
	c.t.Helper()
	resp := c.send(req)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Location"), string(b)
}

func setValue(sel, v string) chromedp.Action[chromedp.Void] {
	return chromedp.SetValue(chromedp.CSS(sel), v)
}
func sendKeys(sel, v string) chromedp.Action[chromedp.Void] {
	return chromedp.SendKeys(chromedp.CSS(sel), v)
}

// clickOn clicks the first element matching sel inside the page once it
// is shown, for the reason submitAndWait gives.
func clickOn(sel string) chromedp.Action[chromedp.Void] {
	q := `document.querySelector(` + jsString(sel) + `)`
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		if _, err := chromedp.Poll[bool](`!!`+q+` && `+q+`.getClientRects().length > 0`, chromedp.WithPollingInterval(20*time.Millisecond))(ctx, t); err != nil {
			return err
		}
		_, err := chromedp.Evaluate[any](q+`.click()`)(ctx, t)
		return err
	})
}

// js runs a script for its effect.
func js(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[any](expr)(ctx, t)
		return err
	})
}

func mustRequest(method, u string) *http.Request {
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		panic(err)
	}
	return req
}

// rawDo sends req as send does and returns the answer with its body
// closed.
func (c *browserless) rawDo(req *http.Request) *http.Response {
	c.t.Helper()
	resp := c.send(req)
	resp.Body.Close()
	return resp
}
