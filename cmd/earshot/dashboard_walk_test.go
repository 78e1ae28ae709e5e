package main

// Every dashboard page an owner reaches by following its links, at
// desktop and phone width, with data a stranger or an owner may type:
// long unbroken words and addresses, markup and ampersands. No page may
// log an error, reach past the width of the screen, show a character
// reference as text, or link to a page that is not there.

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// walkLog collects what the pages of a tab log as errors or warnings,
// the browser's own log (failed loads, refused scripts) included.
type walkLog struct {
	mu   sync.Mutex
	msgs []string
}

func (c *walkLog) take() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.msgs
	c.msgs = nil
	return m
}

func watchWalk(t *testing.T, b *tab) *walkLog {
	c := &walkLog{}
	if err := chromedp.Listen(b.ctx, func(ev any) {
		var s string
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			s = "exception: " + e.ExceptionDetails.Text
			if e.ExceptionDetails.Exception != nil {
				s += " " + e.ExceptionDetails.Exception.Description
			}
		case *runtime.EventConsoleAPICalled:
			if e.Type == "error" || e.Type == "warning" {
				var parts []string
				for _, a := range e.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				s = string(e.Type) + ": " + strings.Join(parts, " ")
			}
		case *log.EventEntryAdded:
			if e.Entry.Level == "error" || e.Entry.Level == "warning" {
				s = string(e.Entry.Level) + ": " + e.Entry.Text + " " + e.Entry.URL
			}
		}
		if s != "" {
			c.mu.Lock()
			c.msgs = append(c.msgs, s)
			c.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	return c
}

// overflowJS says how far the page reaches past the viewport's width and
// the first elements that do, "" when nothing does.
const overflowJS = `(function(){var d=document.documentElement;if(d.scrollWidth<=d.clientWidth)return "";
var out=[];document.querySelectorAll("body *").forEach(function(e){var r=e.getBoundingClientRect();if(r.right>d.clientWidth+1&&out.length<5)out.push(e.tagName.toLowerCase()+(e.id?"#"+e.id:"")+(e.className?"."+e.className:""))});
return "scroll width "+d.scrollWidth+" of "+d.clientWidth+": "+out.join(", ")})()`

func TestDashboardWalk(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	console := watchWalk(t, b)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000", "EARSHOT_PLAN_PHRASES_PER_PLATFORM=30",
		"EARSHOT_WEBHOOK_ALLOW_PRIVATE=true", "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=5")
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500) }))
	t.Cleanup(recv.Close)

	// One long word, as a pasted address or token is.
	long := strings.Repeat("verylongword", 20)
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme & co", "platform": "x"}).want(t, 201, "")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "reddit", "community": "r/SaaS"}).want(t, 201, "")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme" + long[:90], "platform": "facebook"}).want(t, 201, "")
	var posts []any
	for i := range 30 { // more than a page
		posts = append(posts, xPost(fmt.Sprintf("p%d", i), "a&b <i>", fmt.Sprintf(`acme & co post %d <b>bold</b> "q" 'a' &amp;`, i)))
	}
	posts = append(posts, xPost("long", long, "acme & co "+long+" https://example.com/"+long))
	s.ingest(s.IngestKey, "x", posts...)
	// A webhook address as services hand them out: long, no spaces.
	hookAt(t, s, s.APIKey, recv.URL+"/services/T0123ABCD/B0123ABCD/"+long[:60])
	chanID := dataOf(t, s.call("POST", "/api/v1/channels", s.APIKey, map[string]any{"kind": "ntfy", "url": recv.URL + "/topic", "platforms": []string{"x"}}).want(t, 201, ""))["id"].(string)
	s.call("POST", "/account-status", s.IngestKey, map[string]any{"platform": "facebook", "status": 400, "code": 190, "subcode": 459}).want(t, 200, "")
	b.signIn(s.loginLink(s.OwnerID))
	c := newBrowserless(t, s)
	c.signIn(s.loginLink(s.OwnerID))

	// A key made in the browser, with a long name: the answer shows it.
	newKey := func() {
		b.open(s.URL + "/app/keys")
		b.do(setValue("#k-name", long[:90]))
		b.submitAndWait(`form.add button[type="submit"]`)
		if !strings.Contains(b.text("#new-h"), long[:90]) {
			t.Fatalf("no new key shown:\n%s", b.text("main"))
		}
	}
	const keyMade = "(a key just made)"
	queue := []string{keyMade, "/app/", "/app/?show=all&q=acme", "/app/channels/" + chanID, "/app/nope"}
	queued := map[string]bool{}
	for _, p := range queue {
		queued[p] = true
	}
	checked := map[string]bool{}
	for i := 0; i < len(queue); i++ {
		p := queue[i]
		for _, w := range []int64{1280, 375} {
			b.do(chromedp.EmulateViewport(w, 800))
			if p == keyMade {
				newKey()
			} else {
				b.open(s.URL + p)
			}
			at := fmt.Sprintf("%s at %d px", p, w)
			if over := eval[string](b, overflowJS); over != "" {
				t.Errorf("%s reaches past the screen: %s", at, over)
			}
			text := b.text("body")
			for _, ref := range []string{"&amp;", "&lt;", "&gt;", "&quot;", "&#"} {
				// The posts' own "&amp;" is text; one more is escaped twice.
				if strings.Contains(strings.ReplaceAll(text, "'a' &amp;", ""), ref) {
					t.Errorf("%s shows %q as text:\n%s", at, ref, text)
				}
			}
			if n := eval[int](b, `document.querySelectorAll("main script, main img, main [onerror]").length`); n != 0 {
				t.Errorf("%s: %d elements made from a stranger's text", at, n)
			}
			for _, m := range console.take() {
				if p == "/app/nope" && strings.Contains(m, "404") {
					continue // the not-found page is one
				}
				t.Errorf("%s logged %s", at, m)
			}
			for _, l := range eval[[]string](b, `Array.from(document.querySelectorAll("a[href]")).map(function(a){return a.href}).filter(function(h){return h.startsWith(location.origin+"/app/")})`) {
				q, _, _ := strings.Cut(strings.TrimPrefix(l, s.URL), "#")
				if strings.HasPrefix(q, "/app/nope") {
					continue
				}
				if !checked[q] {
					checked[q] = true
					if code, _, _ := c.get(q); code >= 400 {
						t.Errorf("%s links to %s, which answers %d", at, q, code)
					}
				}
				if !queued[q] && !strings.HasPrefix(q, "/app/export") && !strings.HasPrefix(q, "/app/login") {
					queued[q] = true
					queue = append(queue, q)
				}
			}
		}
	}
	for _, want := range []string{"/app/phrases", "/app/trends", "/app/plan", "/app/account", "/app/keys", "/app/webhooks", "/app/accounts", "/app/notifications"} {
		if !queued[want] {
			t.Errorf("the walk never reached %s; it saw %v", want, queue)
		}
	}
	t.Logf("walked %d pages", len(queue))
}
