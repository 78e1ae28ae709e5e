package main

// The window of recent posts end to end, against the real binary:
// posts read before a phrase exists are previewed, fill the phrase once
// it is added (marked as found there), and a change of its filters is
// previewed against its matches and applied to them, reversibly. Through
// the API and in a real browser.

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// windowPosts are read before any phrase: only posts kept in the window
// can match one added later.
func windowPosts() []any {
	return []any{
		xPost("w-price", "ada", "acme price is up again"),
		xPost("w-hiring", "bob", "we are hiring at acme"),
		xPost("w-markup", "eve", `acme <script>alert(1)</script> rocks`),
		xPost("w-none", "ada", "nothing to see"),
	}
}

// backfilled returns the external ids (urls) of the key's matches marked
// backfilled, waiting until there are want of them.
func (s *instance) backfilled(key string, want int) []string {
	s.t.Helper()
	var got []string
	waitUntil(s.t, 20*time.Second, 50*time.Millisecond, func() bool {
		got = nil
		for _, m := range s.call("GET", "/api/v1/matches", key, nil).want(s.t, 200, "").JSON(s.t)["data"].([]any) {
			if mm := m.(map[string]any); mm["backfilled"] == true {
				got = append(got, mm["post"].(map[string]any)["url"].(string))
			}
		}
		return len(got) >= want
	}, func() string { return "backfilled matches: " + strings.Join(got, ", ") })
	slices.Sort(got)
	return got
}

func TestAPIWindow(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	key := s.APIKey
	s.ingest(s.IngestKey, "x", windowPosts()...)

	// A preview takes the create body and stores nothing.
	pv := dataOf(t, s.call("POST", "/api/v1/keywords/preview", key, map[string]any{"phrase": "ACME", "platform": "x",
		"exclude": []string{"hiring"}}).want(t, 200, ""))
	w := pv["window"].(map[string]any)
	if w["on"] != true || w["days"] != 7.0 || w["count"] != 2.0 || w["complete"] != true || len(w["posts"].([]any)) != 2 {
		t.Fatalf("preview window: %v", w)
	}
	if got := s.call("GET", "/api/v1/keywords", key, nil).want(t, 200, "").JSON(t)["data"].([]any); len(got) != 0 {
		t.Fatalf("a preview stored a phrase: %v", got)
	}
	s.call("POST", "/api/v1/keywords/preview", key, map[string]any{"phrase": "", "platform": "x"}).want(t, 400, "invalid_parameter")

	// Added, the phrase is filled from the window: what the preview
	// showed, marked backfilled, scored like any match.
	p := dataOf(t, s.call("POST", "/api/v1/keywords", key, map[string]any{"phrase": "acme", "platform": "x",
		"exclude": []string{"hiring"}}).want(t, 201, ""))
	id := p["id"].(string)
	if got := s.backfilled(key, 2); !slices.Equal(got, []string{"https://x.com/w-markup", "https://x.com/w-price"}) {
		t.Fatalf("backfilled %v", got)
	}
	waitUntil(t, 20*time.Second, 50*time.Millisecond, func() bool {
		for _, m := range s.call("GET", "/api/v1/matches", key, nil).want(t, 200, "").JSON(t)["data"].([]any) {
			if m.(map[string]any)["score"] == nil {
				return false
			}
		}
		return true
	}, func() string { return "every backfilled match scored" })
	// A match found as its post is read is not marked.
	s.ingest(s.IngestKey, "x", xPost("w-live", "ada", "acme, live"))
	for _, m := range s.call("GET", "/api/v1/matches", key, nil).want(t, 200, "").JSON(t)["data"].([]any) {
		mm := m.(map[string]any)
		if _, marked := mm["backfilled"]; marked == (mm["post"].(map[string]any)["url"] == "https://x.com/w-live") {
			t.Fatalf("match %v: backfilled %v", mm["post"], mm["backfilled"])
		}
	}

	// A change of filters, previewed: what it would drop.
	ch := dataOf(t, s.call("POST", "/api/v1/keywords/"+id+"/preview", key, map[string]any{"exclude": []string{"hiring", "price"}}).want(t, 200, ""))
	d := ch["dropped"].(map[string]any)
	if d["count"] != 1.0 || d["archivable"] != 1.0 || d["matches"].([]any)[0].(map[string]any)["post"].(map[string]any)["url"] != "https://x.com/w-price" {
		t.Fatalf("dropped: %v", d)
	}
	s.call("PATCH", "/api/v1/keywords/"+id, key, map[string]any{"exclude": []string{"hiring", "price"}}).want(t, 200, "")
	applied := dataOf(t, s.call("POST", "/api/v1/keywords/"+id+"/apply-filters", key, nil).want(t, 200, ""))
	if applied["archived"] != 1.0 || applied["setId"] == nil {
		t.Fatalf("apply: %v", applied)
	}
	archived := func() []string {
		var out []string
		for _, m := range s.call("GET", "/api/v1/matches", key, nil).want(t, 200, "").JSON(t)["data"].([]any) {
			mm := m.(map[string]any)
			tr := dataOf(t, s.call("GET", "/api/v1/matches/"+mm["id"].(string)+"/triage", key, nil).want(t, 200, ""))
			if tr["archived"] == true {
				out = append(out, mm["post"].(map[string]any)["url"].(string))
			}
		}
		return out
	}
	if got := archived(); !slices.Equal(got, []string{"https://x.com/w-price"}) {
		t.Fatalf("archived after applying: %v", got)
	}
	setID := applied["setId"].(string)
	s.call("POST", "/api/v1/keywords/"+id+"/apply-filters/nope/undo", key, nil).want(t, 404, "not_found")
	if r := dataOf(t, s.call("POST", "/api/v1/keywords/"+id+"/apply-filters/"+setID+"/undo", key, nil).want(t, 200, "")); r["restored"] != 1.0 {
		t.Fatalf("undo: %v", r)
	}
	if got := archived(); len(got) != 0 {
		t.Fatalf("archived after undoing: %v", got)
	}
	s.call("POST", "/api/v1/keywords/"+id+"/apply-filters/"+setID+"/undo", key, nil).want(t, 404, "not_found")
}

func TestDashboardWindow(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	s.ingest(s.IngestKey, "x", windowPosts()...)
	b.signIn(s.loginLink(s.OwnerID))

	// Type a phrase and filters, and preview them.
	b.open(s.URL + "/app/phrases")
	b.click("details.phrase-filters summary", `document.querySelector("details.phrase-filters").open`)
	b.do(setValue("#p-platform", "x"), setValue("#p-phrase", "acme"), setValue("#pf-exclude", "hiring"))
	b.submitAndWait(`form.add button[value="preview"]`)
	if c := b.text("#preview-count"); !strings.Contains(c, "would have matched 2 posts") {
		t.Fatalf("the preview says %q\n%s", c, b.text("main"))
	}
	if n := eval[int](b, `document.querySelectorAll("#preview .preview-post").length`); n != 2 {
		t.Fatalf("%d posts in the preview", n)
	}
	if marks := eval[string](b, `Array.from(document.querySelectorAll("#preview mark")).map(function(m){return m.textContent}).join(",")`); marks != "acme,acme" {
		t.Fatalf("marked in the preview: %q", marks)
	}
	if !strings.Contains(b.text("#preview"), "<script>alert(1)</script>") || eval[int](b, `document.querySelectorAll("#preview script").length`) != 0 {
		t.Fatalf("a stranger's markup in the preview is not plain text:\n%s", b.text("#preview"))
	}
	if v := eval[string](b, `document.querySelector("#p-phrase").value + "|" + document.querySelector("#pf-exclude").value`); v != "acme|hiring" {
		t.Fatalf("the form after the preview: %q", v)
	}
	if n := eval[int](b, `document.querySelectorAll("table.phrases tbody tr").length`); n != 0 {
		t.Fatalf("a preview added a phrase")
	}

	// Save: the inbox shows the posts the preview showed, marked as
	// found in the recent posts.
	b.submitAndWait(`form.add button[type="submit"]:not([value])`)
	if n := b.text(".notice"); !strings.HasPrefix(n, "Phrase added.") || !strings.Contains(n, "found in recent posts") {
		t.Fatalf("notice %q after adding", n)
	}
	b.openUntil(s.URL+"/app/", `document.querySelectorAll("article.match .flag.found").length === 2`, "two matches found in recent posts")
	inbox := b.text("#matches")
	if !strings.Contains(inbox, "acme price is up again") || !strings.Contains(inbox, "<script>alert(1)</script> rocks") || strings.Contains(inbox, "hiring") {
		t.Fatalf("the inbox:\n%s", inbox)
	}
	if b.dialogCount() != 0 {
		t.Fatal("a stranger's script ran")
	}

	// Change a filter: the preview says which match it drops; saved, the
	// page offers to archive it; archived, then undone.
	b.open(s.URL + "/app/phrases")
	b.click(`table.phrases tbody .filter-summary a`, `location.pathname.endsWith("/filters")`)
	b.waitFor(`document.querySelector("#pf-exclude") !== null`, "the filters page")
	b.do(setValue("#pf-exclude", "hiring\nprice"))
	b.submitAndWait(`form.phrase-filters button[value="preview"]`)
	if dropped := b.text("#preview-dropped"); !strings.Contains(dropped, "1 of this phrase's matches would not have been made") {
		t.Fatalf("the preview of the change says %q\n%s", dropped, b.text("main"))
	}
	if !strings.Contains(b.text("#preview .dropped"), "acme price is up again") {
		t.Fatalf("the dropped match is not shown:\n%s", b.text("#preview"))
	}
	b.submitAndWait(`form.phrase-filters button[type="submit"]:not([value])`)
	if n := b.text(".notice"); !strings.HasPrefix(n, "Filters saved") {
		t.Fatalf("notice %q after saving", n)
	}
	if c := b.text("#apply-count"); !strings.HasPrefix(c, "1 of this phrase's matches") {
		t.Fatalf("the offer to archive says %q", c)
	}
	filters := eval[string](b, `location.pathname`)
	b.submitAndWait(`.apply form[action$="/apply"] button`)
	if last := b.text("#apply-last"); !strings.HasPrefix(last, "1 match was archived") {
		t.Fatalf("after archiving: %q\n%s", last, b.text("main"))
	}
	b.open(s.URL + "/app/")
	if inbox := b.text("#matches"); strings.Contains(inbox, "acme price is up again") || !strings.Contains(inbox, "rocks") {
		t.Fatalf("the inbox after archiving:\n%s", inbox)
	}
	b.open(s.URL + filters)
	b.waitFor(`document.querySelector(".apply form[action$='/undo'] button") !== null`, "the undo button")
	b.submitAndWait(`.apply form[action$="/undo"] button`)
	if n := b.text(".notice"); !strings.Contains(n, "back in the inbox") {
		t.Fatalf("notice %q after undoing", n)
	}
	b.open(s.URL + "/app/")
	if inbox := b.text("#matches"); !strings.Contains(inbox, "acme price is up again") {
		t.Fatalf("the inbox after undoing:\n%s", inbox)
	}
}
