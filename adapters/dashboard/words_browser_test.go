package dashboard

// Words as a browser shows them, after the style sheet: the accounts
// cards' platforms, and the inbox's bulk bar at phone width. Run in
// Debian's Chromium; skipped without it.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
	"github.com/earshothq/earshot/ports"
)

// The accounts cards name their platform as every other page writes it,
// in lower case (docs/dashboard.md, the spec's platform values); the
// style sheet once capitalised them to "Reddit", "X", "Facebook".
func TestAccountCardsNamePlatformsInLowerCase(t *testing.T) {
	acc := []health.Status{
		health.StatusOf("", core.Reddit, false, health.Record{}),
		health.StatusOf("a-x", core.X, true, health.Record{LastCheckedAt: clock0.Add(-time.Minute)}),
		health.StatusOf("a-fb", core.Facebook, true, health.Record{LastIssue: health.Checkpointed, LastCheckedAt: clock0.Add(-time.Minute)}),
	}
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return clock0 }},
		Deps{Sessions: fakeSessions{}, Inbox: fakeInbox{}, Phrases: ownerPhrases{by: map[string][]core.Phrase{"own": {unread("p1", "acme", core.Reddit)}}},
			Accounts: fixedAccounts{acc}, Reddit: fixedReddit{}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	ctx := browserAt(t, srv, 1280)
	open(t, ctx, srv.URL+"/app/accounts")
	got := evalJS[[]string](t, ctx, `Array.from(document.querySelectorAll("section.account h2")).map(function(h){return h.innerText.replace(/\s+/g," ").trim()})`)
	want := []string{"reddit read by the server", "x healthy", "facebook action required"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("the cards are headed %q, want %q", got, want)
	}
}

// At phone width the bulk bar's select-all box says what it does in
// words a person sees, and the bar keeps to one row within the screen.
func TestBulkBarSelectAllVisibleOnAPhone(t *testing.T) {
	items := make([]ports.InboxItem, 3)
	for i := range items {
		items[i] = item(i+1, "about acme", "ada", "https://x.com/1")
	}
	d := newTestDashboard(t, items...)
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	ctx := browserAt(t, srv, 375)
	open(t, ctx, srv.URL+"/app/")
	if !evalJS[bool](t, ctx, `!!document.getElementById("select-all")`) {
		t.Fatal("no select-all box")
	}
	// What shows beside the box: the label's rendered text, generated
	// content included, without the visually hidden words.
	shown := evalJS[string](t, ctx, `(function(){var l=document.querySelector("label.select-all"),out="";
l.querySelectorAll("*").forEach(function(e){var r=e.getBoundingClientRect();if(e.tagName!=="INPUT"&&r.width>1&&r.height>1)out+=e.textContent});
var after=getComputedStyle(l,"::after").content;if(after&&after!=="none"&&after!=="normal")out+=" "+after;return out.trim()})()`)
	if !strings.Contains(strings.ToLower(shown), "all") {
		t.Errorf("beside the select-all box the phone shows %q", shown)
	}
	if name := accessibleName(t, ctx, `document.getElementById("select-all")`); name != "Select all" {
		t.Errorf("the box is named %q", name)
	}
	boxes := evalJS[string](t, ctx, `Array.from(document.querySelectorAll("#bulk > *")).filter(function(e){return e.getBoundingClientRect().width>1}).map(function(e){var r=e.getBoundingClientRect();return Math.round(r.left)+"-"+Math.round(r.right)+"@"+Math.round(r.top)}).join(" ")`)
	if got := evalJS[string](t, ctx, oneRowJS+`("#bulk")`); got != "" {
		t.Errorf("the bulk bar is not one row: %s (%s)", got, boxes)
	}
	if got := evalJS[string](t, ctx, overflowJS); got != "" {
		t.Errorf("the inbox is wider than the screen: %s", got)
	}
	t.Logf("bulk bar boxes %s", boxes)
}

// At phone width the bulk bar keeps within the page's margin, as the
// filters above it and the matches below do: each of its boxes ends
// where main's content ends, not in main's padding.
func TestBulkBarKeepsToTheMarginOnAPhone(t *testing.T) {
	items := make([]ports.InboxItem, 3)
	for i := range items {
		items[i] = item(i+1, "about acme", "ada", "https://x.com/1")
	}
	d := newTestDashboard(t, items...)
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	ctx := browserAt(t, srv, 375)
	open(t, ctx, srv.URL+"/app/")
	got := evalJS[string](t, ctx, `(function(){var m=document.querySelector("main"),s=getComputedStyle(m),bar=document.getElementById("bulk");
var edge=m.getBoundingClientRect().right-parseFloat(s.paddingRight),out=[];
Array.from(bar.children).forEach(function(e){var r=e.getBoundingClientRect();if(r.width>1&&r.right>edge+0.5)out.push((e.textContent||e.className).trim()+" ends at "+r.right.toFixed(1))});
if(bar.scrollWidth>bar.clientWidth)out.push("the bar scrolls "+bar.scrollWidth+" of "+bar.clientWidth);
return out.length?"margin at "+edge.toFixed(1)+": "+out.join("; "):""})()`)
	if got != "" {
		t.Errorf("the bulk bar runs past the page's margin: %s", got)
	}
}

// accessibleName is the name Chromium gives the element js evaluates
// to, as a screen reader reads it.
func accessibleName(t *testing.T, ctx context.Context, js string) string {
	t.Helper()
	var name string
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		obj, err := cdp.Call(ctx, tg, runtime.Evaluate, runtime.EvaluateParams{Expression: js})
		if err != nil {
			return err
		}
		if obj.Result == nil || obj.Result.ObjectID == "" {
			return fmt.Errorf("%s is no element", js)
		}
		only := false
		tree, err := cdp.Call(ctx, tg, accessibility.GetPartialAXTree, accessibility.GetPartialAXTreeParams{ObjectID: obj.Result.ObjectID, FetchRelatives: &only})
		if err != nil {
			return err
		}
		if len(tree.Nodes) == 0 || tree.Nodes[0].Name == nil {
			return fmt.Errorf("%s has no accessible name", js)
		}
		return json.Unmarshal(tree.Nodes[0].Name.Value, &name)
	}))
	if err != nil {
		t.Fatal(err)
	}
	return name
}

// oneRowJS, as cmd/earshot's walk has it: "" when the children of sel
// that show share one line and none pokes out of the page's width.
const oneRowJS = `(function(sel){var els=Array.from(document.querySelectorAll(sel+" > *")).filter(function(e){var r=e.getBoundingClientRect();return r.width>1&&r.height>1});
var rs=els.map(function(e){return e.getBoundingClientRect()});
if(rs.length<2)return "too few: "+rs.length;
var top=Math.max.apply(null,rs.map(function(r){return r.top})),bottom=Math.min.apply(null,rs.map(function(r){return r.bottom})),right=Math.max.apply(null,rs.map(function(r){return r.right}));
return top<bottom&&right<=document.documentElement.clientWidth?"":"tops "+rs.map(function(r){return Math.round(r.top)}).join(",")+", right edge "+Math.round(right)+" of "+document.documentElement.clientWidth})`
