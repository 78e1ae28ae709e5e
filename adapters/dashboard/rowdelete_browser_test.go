package dashboard

// A channel deleted in a real browser: Debian's Chromium driven over the
// DevTools protocol (chromedp), as the binary's browser tests drive it
// (cmd/earshot/browser_test.go), against this package's handler over the
// real services on SQLite, signed in through a real sign-in link.

import (
	"context"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
)

// chromium is where Debian's chromium package puts the browser.
const chromium = "/usr/bin/chromium"

// browserTab starts Chromium with a fresh profile, or skips the test
// when it is not installed; under EARSHOT_TEST_BROWSER (CI) a missing
// or broken Chromium fails it instead.
func browserTab(t *testing.T) context.Context {
	t.Helper()
	required := os.Getenv("EARSHOT_TEST_BROWSER") != ""
	if _, err := os.Stat(chromium); err != nil {
		if required {
			t.Fatalf("EARSHOT_TEST_BROWSER is set but there is no Chromium at %s", chromium)
		}
		t.Skipf("no Chromium at %s (apt-get install -y chromium): browser test skipped", chromium)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // tests run as root in CI
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("no-first-run", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		if required {
			t.Fatalf("Chromium at %s does not start: %v", chromium, err)
		}
		t.Skipf("Chromium at %s does not start (%v): browser test skipped", chromium, err)
	}
	return ctx
}

// browse runs steps on the tab within a time limit, failing t on error.
func browse(t *testing.T, tab context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("browser: %v", err)
	}
}

// pageEval returns the value of a JavaScript expression on the tab.
func pageEval[T any](t *testing.T, tab context.Context, expr string) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// script runs JavaScript on the tab for its effect.
func script(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[any](expr)(ctx, tg)
		return err
	})
}

// submit clicks a submit button and waits until the page it leads to
// is loaded: the old page's marker is gone and its main element there.
// The page looks at that every few milliseconds; a look that ends with
// the old page is started again on the next one once it is ready.
func submit(t *testing.T, tab context.Context, sel string) {
	t.Helper()
	browse(t, tab, script(`window.__old = true`), chromedp.Click(chromedp.CSS(sel)))
	const loaded = `(function(){try{return window.__old === undefined && document.readyState === "complete" && !!document.querySelector("main")}catch(e){return false}})()`
	deadline := time.Now().Add(20 * time.Second)
	var last error
	for left := time.Until(deadline); left > 0; left = time.Until(deadline) {
		ctx, cancel := context.WithTimeout(tab, left)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](loaded, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(left)))
		if err == nil {
			cancel()
			return
		}
		last = err
		_, _ = chromedp.Run(ctx, chromedp.WaitReady(chromedp.CSS("body")))
		cancel()
	}
	t.Fatalf("waiting for the page after %s: %v", sel, last)
}

// Add an ntfy channel from its form, open its page from the list, delete
// it through the confirmation page, and see the list name it and no
// longer list it.
func TestDeleteChannelInBrowser(t *testing.T) {
	tab := browserTab(t)
	w := newRowWorld(t)
	var srv *httptest.Server
	sessions := app.NewSessions(app.SessionDeps{Store: gormstore.NewSessionStore(w.db)},
		app.SessionConfig{SiteURL: func() string { return srv.URL }})
	srv = httptest.NewServer(w.dashboard(t, sessions))
	t.Cleanup(srv.Close)
	hook, _, err := w.hooks.Create(context.Background(), w.a, rowHookURL, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	link, err := sessions.LoginLink(context.Background(), w.a)
	if err != nil {
		t.Fatal(err)
	}
	browse(t, tab, chromedp.Navigate(link), chromedp.WaitReady(chromedp.CSS("main")))
	submit(t, tab, "form.signin button")

	const topic = "earshot-alerts-9f3k2m"
	browse(t, tab, chromedp.Navigate(srv.URL+"/app/webhooks"), chromedp.WaitReady(chromedp.CSS("main")),
		script(`document.querySelector("#add-ntfy").open = true`),
		chromedp.SetValue(chromedp.CSS("#ntfy-url"), "https://ntfy.sh/"+topic))
	submit(t, tab, `#add-ntfy button[type="submit"]`)
	if got := pageEval[string](t, tab, `document.querySelector(".notice").innerText`); !strings.Contains(got, "ntfy channel added") {
		t.Fatalf("adding the channel: %q", got)
	}
	kinds := `Array.from(document.querySelectorAll("#destinations tbody tr")).map(function(tr){return tr.dataset.kind}).join(",")`
	if got := pageEval[string](t, tab, kinds); got != "Webhook,ntfy" {
		t.Fatalf("the list before: %q", got)
	}

	browse(t, tab, chromedp.Navigate(srv.URL+"/app/webhooks"), chromedp.WaitReady(chromedp.CSS("main")))
	submit(t, tab, `#destinations tr[data-kind="ntfy"] th a`)
	submit(t, tab, "#delete")
	if got := pageEval[string](t, tab, `document.querySelector("h1").innerText`); got != "Delete this ntfy channel?" {
		t.Fatalf("the confirmation's heading: %q", got)
	}
	text := pageEval[string](t, tab, `document.querySelector("main").innerText`)
	if !strings.Contains(text, "ntfy.sh/…3k2m") || !strings.Contains(text, "queued deliveries") || strings.Contains(text, topic) {
		t.Fatalf("the confirmation says:\n%s", text)
	}
	submit(t, tab, "#delete-confirm")

	if got := pageEval[string](t, tab, `location.pathname`); got != "/app/webhooks" {
		t.Fatalf("after the deletion the browser is at %s", got)
	}
	if got := pageEval[string](t, tab, `document.querySelector(".notice").innerText`); !strings.Contains(got, "Deleted the ntfy channel ntfy.sh/…3k2m") {
		t.Fatalf("the list's notice: %q", got)
	}
	if got := pageEval[string](t, tab, kinds); got != "Webhook" {
		t.Fatalf("the list after: %q", got)
	}
	all, err := w.channels.All(context.Background(), w.a)
	if err != nil || len(all) != 1 || all[0].ID != hook.ID {
		t.Fatalf("the owner's webhooks and channels: %v, %v", all, err)
	}
	// The notice is said once: a reload no longer names the deletion.
	browse(t, tab, chromedp.Reload(), chromedp.WaitReady(chromedp.CSS("main")))
	if pageEval[bool](t, tab, `!!document.querySelector(".notice")`) {
		t.Fatal("a reload names the deletion again")
	}
}
