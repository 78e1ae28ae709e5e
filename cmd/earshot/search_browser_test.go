package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// The inbox's search in the browser: typed into the filter form, it
// keeps the posts that hold every word and none excluded, marks the
// phrase and the words found in each, and leaves a stranger's markup as
// text; the view's download links give files whose rows are the
// view's matches, in its order.
func TestInboxBrowserSearchAndExport(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme crm", "platform": "x"}).want(t, 201, "")
	s.ingest(s.IngestKey, "x",
		xPost("a1", "maya", "Is acme crm worth it? The pricing page is unclear."),
		xPost("a2", "devon", "acme crm support took three days to answer."),
		xPost("a3", "priya", "ACME CRM pricing went up again. Spam spam."),
		xPost("a4", `<script>window.__xss=1</script>`, `acme crm <img src=x onerror="window.__xss=2"> Pricing? =SUM(A1)`),
	)
	b.signIn(s.loginLink(s.OwnerID))
	b.open(s.URL + "/app/")
	b.waitFor(`document.querySelectorAll("article.match").length === 4`, "four matches")

	b.do(sendKeys("#f-q", `pricing -spam`))
	b.submitAndWait(`form.filters button[type="submit"]`)
	if q := eval[string](b, `new URL(location.href).searchParams.get("q")`); q != "pricing -spam" {
		t.Fatalf("the address carries q %q", q)
	}
	texts := eval[[]string](b, `Array.from(document.querySelectorAll("#matches article.match .text")).map(function(p){return p.innerText})`)
	if len(texts) != 2 || !strings.HasPrefix(texts[0], "acme crm <img") || !strings.HasPrefix(texts[1], "Is acme crm worth it") {
		t.Fatalf("the search shows\n%s", strings.Join(texts, "\n"))
	}
	marks := eval[[]string](b, `Array.from(document.querySelectorAll("#matches article.match .text mark")).map(function(m){return m.textContent})`)
	if !slices.Equal(marks, []string{"acme crm", "Pricing", "acme crm", "pricing"}) {
		t.Fatalf("marked %q", marks)
	}
	if n := eval[int](b, `document.querySelectorAll("#matches script, #matches img, #matches [onerror]").length`); n != 0 || b.dialogCount() != 0 ||
		eval[bool](b, `window.__xss !== undefined`) {
		t.Fatalf("a stranger's markup ran: %d elements, %d dialogs", n, b.dialogCount())
	}
	if v := eval[string](b, `document.querySelector("#f-q").value`); v != "pricing -spam" {
		t.Fatalf("the search box holds %q", v)
	}

	// New posts reach the open search live, when they fit it.
	s.ingest(s.IngestKey, "x",
		xPost("a5", "sam", "Spam: acme crm pricing, cheap"),
		xPost("a6", "lee", "Does acme crm list its pricing per seat?"),
	)
	b.waitFor(`document.querySelectorAll("#matches article.match").length === 3`, "the new post that fits the search")
	first := eval[string](b, `document.querySelector("#matches article.match .text").innerHTML`)
	if first != "Does <mark>acme crm</mark> list its <mark>pricing</mark> per seat?" {
		t.Fatalf("the live match shows %q", first)
	}
	b.open(b.location())
	view := eval[[]string](b, `Array.from(document.querySelectorAll("#matches article.match")).map(function(a){return a.id.slice(2)})`)
	if len(view) != 3 {
		t.Fatalf("the search shows %d matches after a reload", len(view))
	}

	dir := t.TempDir()
	download := func(link string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
		defer cancel()
		progress := chromedp.Events(ctx, browser.DownloadProgress)
		b.do(chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
				Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: new(true)})
			return err
		}), clickOn(link))
		for ev, err := range progress {
			if err != nil {
				t.Fatalf("downloading from %s: %v", link, err)
			}
			if ev.State == browser.DownloadProgressStateCanceled {
				t.Fatalf("the download from %s was cancelled", link)
			}
			if ev.State == browser.DownloadProgressStateCompleted {
				b, err := os.ReadFile(filepath.Join(dir, ev.GUID))
				if err != nil {
					t.Fatal(err)
				}
				return string(b)
			}
		}
		t.Fatalf("no download from %s", link)
		return ""
	}

	rows, err := csv.NewReader(strings.NewReader(download(`.export a[href*="format=csv"]`))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rows[1:] {
		ids = append(ids, r[0])
	}
	if rows[0][0] != "id" || !slices.Equal(ids, view) {
		t.Fatalf("the CSV holds %q, the view %q", ids, view)
	}
	if r := rows[2]; r[10] != "https://x.com/a4" || r[9] != `acme crm <img src=x onerror="window.__xss=2"> Pricing? =SUM(A1)` || r[7] != `<script>window.__xss=1</script>` {
		t.Fatalf("the CSV's second row: %q", r)
	}

	sc, ids := bufio.NewScanner(strings.NewReader(download(`.export a[href*="format=jsonl"]`))), nil
	for sc.Scan() {
		var m struct{ ID string }
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, m.ID)
	}
	if !slices.Equal(ids, view) {
		t.Fatalf("the JSON Lines hold %q, the view %q", ids, view)
	}
}
