package main

// The inbox as an owner works it in a browser, with and without the
// page's script: the bulk buttons with nothing ticked, select all, the
// keyboard, paging with filters, and live updates across a restart of
// the server.

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// scriptOff turns the page's script off in b's tab from the next page on.
func scriptOff(b *tab) {
	b.t.Helper()
	b.do(chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
		return err
	}))
}

// noConsole fails t with what the tab logged since the last look.
func noConsole(t *testing.T, c *walkLog, where string) {
	t.Helper()
	for _, m := range c.take() {
		t.Errorf("%s logged %s", where, m)
	}
}

// thirtyMatches starts a server whose owner has 30 x matches of "acme",
// more than a page.
func thirtyMatches(t *testing.T, env ...string) *instance {
	s := start(t, append([]string{"EARSHOT_RATE_LIMIT_PER_MINUTE=10000"}, env...)...)
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	var posts []any
	for i := range 30 {
		posts = append(posts, xPost(fmt.Sprintf("p%02d", i), "ada", fmt.Sprintf("acme post %02d", i)))
	}
	s.ingest(s.IngestKey, "x", posts...)
	return s
}

// A "Selected:" button pressed with nothing ticked comes back to the
// view the owner was on, its filters and page kept, saying why nothing
// changed: with the script and without it.
func TestDashboardBulkNothingSelected(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	console := watchWalk(t, b)
	s := thirtyMatches(t)
	b.signIn(s.loginLink(s.OwnerID))
	for _, mode := range []string{"with script", "without script"} {
		if mode == "without script" {
			scriptOff(b)
		}
		b.open(s.URL + "/app/?show=unread&platform=x")
		if on := eval[bool](b, `document.getElementById("select-all") !== null`); on != (mode == "with script") {
			t.Fatalf("%s: select all offered %v", mode, on)
		}
		b.submitAndWait(`.pager a[rel="next"]`)
		older := b.location()
		if n := eval[int](b, `document.querySelectorAll("article.match").length`); n != 5 {
			t.Fatalf("%s: %d matches on the second page, want 5", mode, n)
		}
		b.submitAndWait(`#bulk button[value="archive"]`)
		u, err := url.Parse(b.location())
		if err != nil || u.Path != "/app/" {
			t.Fatalf("%s: pressing Archive with nothing ticked ends at %s:\n%s", mode, b.location(), b.text("main"))
		}
		was, _ := url.Parse(older)
		for _, k := range []string{"show", "platform", "before"} {
			if u.Query().Get(k) != was.Query().Get(k) || u.Query().Get(k) == "" {
				t.Errorf("%s: the way back %s lost %s of %s", mode, u, k, older)
			}
		}
		if got := b.text(".problem"); got != "Nothing was changed: select at least one match first." {
			t.Errorf("%s: the page says %q", mode, got)
		}
		if n := eval[int](b, `document.querySelectorAll("article.match").length`); n != 5 {
			t.Errorf("%s: %d matches after the refusal, want the same 5", mode, n)
		}
		if v := eval[string](b, `document.querySelector("#f-show").value + " " + document.querySelector("#f-platform").value`); v != "unread x" {
			t.Errorf("%s: the filters show %q", mode, v)
		}
		// The next action does not carry the refusal along.
		b.do(clickOn(`article.match:first-of-type input[type="checkbox"]`))
		b.submitAndWait(`#bulk button[value="star"]`)
		if got := b.text(".notice") + "|" + b.text(".problem"); got != "1 match starred.|" {
			t.Errorf("%s: after starring one the page says %q", mode, got)
		}
		noConsole(t, console, mode)
	}
}

// Select all and the bulk buttons, the keyboard shortcuts, and paging
// that keeps the filters, with the page's script on.
func TestDashboardInboxScript(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	console := watchWalk(t, b)
	s := thirtyMatches(t)
	b.signIn(s.loginLink(s.OwnerID))
	b.open(s.URL + "/app/?platform=x")
	b.do(js(`window.__stay = true`))

	// j/k move, x selects, e archives and r reads in place, o opens.
	focused := `(document.activeElement && document.activeElement.id || "")`
	ids := eval[[]string](b, `Array.from(document.querySelectorAll("article.match")).map(function(a){return a.id})`)
	if len(ids) != 25 {
		t.Fatalf("%d matches on the first page", len(ids))
	}
	key := func(k string) { b.do(chromedp.KeyEvent(k)) }
	key("j")
	key("j")
	key("k")
	if got := eval[string](b, focused); got != ids[0] {
		t.Fatalf("j j k focused %q, want %q", got, ids[0])
	}
	key("j")
	key("x")
	if !eval[bool](b, `document.querySelector("#`+ids[1]+` input[type=checkbox]").checked`) {
		t.Fatal("x did not select the focused match")
	}
	key("e")
	b.waitFor(`document.querySelector("#`+ids[1]+` button[value=unarchive]") !== null`, "the match archived from the keyboard")
	key("r")
	b.waitFor(`!document.querySelector("#`+ids[1]+`").classList.contains("unread")`, "the match read from the keyboard")
	if got := eval[string](b, focused); got != ids[1] {
		t.Errorf("after e and r the focus is on %q, want %q", got, ids[1])
	}
	if !eval[bool](b, `document.querySelector("#`+ids[1]+` input[type=checkbox]").checked`) {
		t.Error("triage in place lost the selection")
	}
	key("e")
	b.waitFor(`document.querySelector("#`+ids[1]+` button[value=archive]") !== null`, "the match back in the inbox from the keyboard")
	b.do(js(`document.querySelector("#` + ids[1] + ` a.open").addEventListener("click", function(e){ e.preventDefault(); window.__opened = this.href })`))
	key("o")
	if got, want := eval[string](b, `window.__opened || ""`), eval[string](b, `document.querySelector("#`+ids[1]+` a.open").href`); got != want {
		t.Errorf("o opened %q, want %q", got, want)
	}
	// Typing in the search box is typing, not shortcuts.
	b.do(chromedp.Focus(chromedp.CSS("#f-q")), chromedp.KeyEvent("jx"))
	if got := eval[string](b, `document.querySelector("#f-q").value + "|" + `+focused); got != "jx|f-q" {
		t.Errorf("typing j and x in the search box: %q", got)
	}
	if !eval[bool](b, `window.__stay === true`) {
		t.Fatal("the keyboard reloaded the page")
	}

	// Select all ticks the page; a bulk button acts on all of it.
	b.do(clickOn("#select-all"))
	if n := eval[int](b, `document.querySelectorAll('#matches input[type="checkbox"]:checked').length`); n != 25 {
		t.Fatalf("select all ticked %d of 25", n)
	}
	b.submitAndWait(`#bulk button[value="star"]`)
	if got := b.text(".notice"); got != "25 matches starred." {
		t.Fatalf("after starring all: %q", got)
	}
	if loc := b.location(); !strings.Contains(loc, "platform=x") {
		t.Fatalf("the bulk action left the filter: %s", loc)
	}
	if n := eval[int](b, `document.querySelectorAll("article.match .star").length`); n != 25 {
		t.Fatalf("%d of 25 starred", n)
	}
	if eval[bool](b, `document.querySelector("#select-all").checked`) {
		t.Error("select all is still ticked on the new page")
	}

	// Older and newest keep the filters.
	b.submitAndWait(`.pager a[rel="next"]`)
	older, _ := url.Parse(b.location())
	if older.Query().Get("platform") != "x" || older.Query().Get("before") == "" || older.Query().Get("done") != "" {
		t.Fatalf("older matches at %s", older)
	}
	if n := eval[int](b, `document.querySelectorAll("article.match").length`); n != 5 {
		t.Fatalf("%d on the second page", n)
	}
	b.submitAndWait(`.pager a:not([rel])`)
	if loc := b.location(); loc != s.URL+"/app/?platform=x" {
		t.Fatalf("newest matches at %s", loc)
	}
	noConsole(t, console, "the inbox")
}

// A match scored while the inbox is open appears; when the server
// restarts, the live stream reconnects and the next match appears too.
func TestDashboardLiveReconnects(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	console := watchWalk(t, b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000", "EARSHOT_ADDR="+addr)
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	s.ingest(s.IngestKey, "x", xPost("old", "ada", "acme before"))
	b.signIn(s.loginLink(s.OwnerID))
	b.open(s.URL + "/app/?platform=x")
	b.do(js(`window.__stay = true`))
	arrived := func(text string) string {
		return `!!Array.from(document.querySelectorAll("article.match")).find(function(a){return a.innerText.includes(` + jsString(text) + `) && !a.querySelector(".score.pending")})`
	}
	s.ingest(s.IngestKey, "x", xPost("live1", "bo", "acme while open"))
	b.waitFor(arrived("acme while open"), "the first live match, scored")
	noConsole(t, console, "the live inbox")

	s.restart()
	if s.URL != "http://"+addr {
		t.Fatalf("the server came back at %s, not %s", s.URL, addr)
	}
	s.ingest(s.IngestKey, "x", xPost("live2", "cy", "acme after the restart"))
	b.waitFor(arrived("acme after the restart"), "the live match after the restart")
	if !eval[bool](b, `window.__stay === true`) {
		t.Fatal("the page reloaded")
	}
	if got := b.text("#live-status"); got != "2 new matches arrived." {
		t.Errorf("live status %q", got)
	}
	if n := eval[int](b, `document.querySelectorAll("article.match").length`); n != 3 {
		t.Errorf("%d matches shown, want 3 (each once)", n)
	}
	// While the server was away the stream's connection failed: that is
	// the browser's own line about it, nothing else.
	for _, m := range console.take() {
		if !strings.Contains(m, "/app/events") {
			t.Errorf("the live inbox logged %s", m)
		}
	}
}
