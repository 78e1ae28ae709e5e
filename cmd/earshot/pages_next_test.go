package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
)

// consoleErrors collects what the pages of a tab log as errors or throw.
type consoleErrors struct {
	mu   sync.Mutex
	msgs []string
}

func watchConsole(b *tab) *consoleErrors {
	c := &consoleErrors{}
	msgs := chromedp.Console(b.ctx)
	go func() {
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				c.mu.Lock()
				c.msgs = append(c.msgs, m.String()+" ("+m.URL+")")
				c.mu.Unlock()
			}
		}
	}()
	return c
}

func (c *consoleErrors) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.msgs...)
}

// atWidths runs check at desktop and phone width.
func atWidths(b *tab, check func(width string)) {
	b.t.Helper()
	for _, w := range []struct {
		name          string
		width, height int64
		mobile        bool
	}{{"desktop", 1280, 900, false}, {"phone", 390, 844, true}} {
		opts := []chromedp.EmulateViewportOption{}
		if w.mobile {
			opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulateScale(2))
		}
		b.do(chromedp.EmulateViewport(w.width, w.height, opts...))
		check(w.name)
	}
}

// oneRow is true when the visible children of the element sel share one
// line (each starts above the bottom of every other) and none pokes out
// of the page's width.
const oneRowJS = `(function(sel){var els=Array.from(document.querySelectorAll(sel+" > *")).filter(function(e){var r=e.getBoundingClientRect();return r.width>1&&r.height>1});
var rs=els.map(function(e){return e.getBoundingClientRect()});
if(rs.length<2)return "too few: "+rs.length;
var top=Math.max.apply(null,rs.map(function(r){return r.top})),bottom=Math.min.apply(null,rs.map(function(r){return r.bottom})),right=Math.max.apply(null,rs.map(function(r){return r.right}));
return top<bottom&&right<=document.documentElement.clientWidth?"":"tops "+rs.map(function(r){return Math.round(r.top)}).join(",")+", right edge "+Math.round(right)+" of "+document.documentElement.clientWidth})`

// The pages say what to do next, at desktop and phone width: an empty
// inbox points to adding a phrase, then to running a helper; an x phrase
// no helper has read waits for one until a helper's batch; the accounts
// page says the server reads reddit and shows the owner's communities,
// never calls an unreported account healthy and writes waiting as words;
// the bulk bar keeps to one row on a phone; and no page logs an error,
// the icon included.
func TestPagesSayWhatToDoNext(t *testing.T) {
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	console := watchConsole(b)
	b.signIn(s.loginLink(s.OwnerID))
	exists := func(sel string) bool {
		return eval[bool](b, `!!document.querySelector(`+jsString(sel)+`)`)
	}

	atWidths(b, func(w string) {
		b.open(s.URL + "/app/")
		if !exists(`#empty a[href="/app/phrases"]`) || strings.Contains(b.text("#empty"), "earshot helper") {
			t.Fatalf("%s: the empty inbox of an owner without phrases says %q", w, b.text("#empty"))
		}
	})

	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme crm", "platform": "x"}).want(t, 201, "")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "reddit", "community": "r/SaaS"}).want(t, 201, "")
	status := func() string {
		return eval[string](b, `(function(){var r=Array.from(document.querySelectorAll("table.phrases tbody tr")).find(function(tr){return tr.querySelector("th").innerText.trim()==="acme crm"});return r?r.innerText:""})()`)
	}
	atWidths(b, func(w string) {
		b.open(s.URL + "/app/")
		if !exists(`#empty a[href="/app/keys"]`) || !strings.Contains(b.text("#empty"), "earshot helper") {
			t.Fatalf("%s: the empty inbox of an owner with an x phrase says %q", w, b.text("#empty"))
		}
		b.open(s.URL + "/app/phrases")
		if got := status(); !strings.Contains(got, "waiting for a helper") || strings.Contains(got, "just now") || strings.Contains(got, "\thelper") {
			t.Fatalf("%s: an x phrase no helper read shows %q", w, got)
		}
		if !exists(`#waiting-next a[href="/app/keys"]`) {
			t.Fatalf("%s: the phrases page does not say how to run a helper", w)
		}
	})

	// A helper's batch: the phrase is read, the account exists without a
	// report, and the inbox has matches.
	for i := range 3 {
		s.ingest(s.IngestKey, "x", xPost(fmt.Sprint("n", i), "maya", fmt.Sprint("Is acme crm worth it for a team of ", i+3, "?")))
	}
	atWidths(b, func(w string) {
		b.open(s.URL + "/app/phrases")
		if got := status(); !strings.Contains(got, "listening") || !strings.Contains(got, "helper") || strings.Contains(got, "waiting") {
			t.Fatalf("%s: after a helper's batch the x phrase shows %q", w, got)
		}
		b.open(s.URL + "/app/")
		b.waitFor(`document.querySelectorAll("article.match").length === 3 && document.getElementById("select-all")`, "the matches")
		boxes := eval[string](b, `Array.from(document.querySelectorAll("#bulk > *")).filter(function(e){return e.getBoundingClientRect().width>1}).map(function(e){var r=e.getBoundingClientRect();return Math.round(r.left)+"-"+Math.round(r.right)+"@"+Math.round(r.top)}).join(" ")`)
		if got := eval[string](b, oneRowJS+`("#bulk")`); got != "" {
			t.Fatalf("%s: the bulk bar is not one row: %s (%s)", w, got, boxes)
		}
		t.Logf("%s: bulk bar boxes %s", w, boxes)
		b.open(s.URL + "/app/accounts")
		if got := b.text("#acct-reddit"); !strings.Contains(got, "The server reads reddit") || exists(`#acct-reddit a[href="/app/keys"]`) {
			t.Fatalf("%s: the reddit card says %q", w, got)
		}
		if !exists(`#acct-reddit table.communities tr[data-community="saas"]`) {
			t.Fatalf("%s: no health of r/saas on the reddit card: %q", w, b.text("#acct-reddit"))
		}
		if got := eval[string](b, `Array.from(document.querySelectorAll("section.account")).filter(function(s){return s.querySelector(".state").innerText.trim()==="healthy" && /Last checked\s*never/.test(s.innerText)}).map(function(s){return s.id}).join(",")`); got != "" {
			t.Fatalf("%s: healthy beside last checked never on %s", w, got)
		}
		if got := b.text("#acct-x .state"); got != "no report yet" {
			t.Fatalf("%s: an account created by a batch, never reported on, is %q", w, got)
		}
	})

	// Rate limited: there is nothing to press.
	s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "x", "status": 429}).want(t, 200, "")
	atWidths(b, func(w string) {
		b.open(s.URL + "/app/accounts")
		if got := b.text("#acct-x .action"); !strings.HasPrefix(got, "Wait") {
			t.Fatalf("%s: x action %q", w, got)
		}
		if exists(`#acct-x .account-actions .button, #acct-x .account-actions button`) || !strings.Contains(b.text("#acct-x .account-actions"), "Nothing to press") {
			t.Fatalf("%s: waiting is drawn as a button: %q", w, b.text("#acct-x .account-actions"))
		}
	})

	if got := eval[int](b, `fetch("/favicon.ico").then(function(r){return r.status})`, chromedp.EvalAsValue, chromedp.EvalAwaitPromise); got != 200 {
		t.Fatalf("/favicon.ico answers %d", got)
	}
	b.open(s.URL + "/app/notifications")
	b.waitFor(`document.readyState === "complete"`, "the last page")
	if errs := console.list(); len(errs) > 0 {
		t.Fatalf("the pages logged errors:\n%s", strings.Join(errs, "\n"))
	}
}
