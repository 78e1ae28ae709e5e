package main

// Filters on a phrase end to end, against the real binary: through the
// API (create, read, change a field at a time, refusals that change
// nothing, ingest vetoed and allowed), and in a real browser (the add
// form, the filters page, the inbox after posts arrive).

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// externalIDs returns the externalId of each match the key sees.
func (s *instance) externalIDs(key string) []string {
	s.t.Helper()
	var out []string
	for _, m := range s.call("GET", "/api/v1/matches", key, nil).want(s.t, 200, "").JSON(s.t)["data"].([]any) {
		out = append(out, m.(map[string]any)["post"].(map[string]any)["url"].(string))
	}
	slices.Sort(out)
	return out
}

func TestAPIPhraseFilters(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	key := s.APIKey

	p := dataOf(t, s.call("POST", "/api/v1/keywords", key, map[string]any{"phrase": "acme", "platform": "x",
		"exclude": []string{"Hiring", "free  trial"}, "excludeAuthors": []string{"@spam_bot"}, "minLikes": 2}).want(t, 201, ""))
	id := p["id"].(string)
	// A filter field is there only while it filters something.
	want := map[string]any{"exclude": []any{"Hiring", "free trial"}, "require": nil, "excludeAuthors": []any{"spam_bot"},
		"excludeCommunities": nil, "minLikes": 2.0, "minComments": nil, "titleOnly": nil}
	check := func(what string, got map[string]any) {
		t.Helper()
		for k, v := range want {
			if g, there := got[k]; v == nil && there || v != nil && !reflect.DeepEqual(g, v) {
				t.Fatalf("%s: %s = %v, want %v (%v)", what, k, got[k], v, got)
			}
		}
		if got["phrase"] != "acme" || got["platform"] != "x" || got["community"] != nil || got["status"] != "listening" {
			t.Fatalf("%s: the spec's fields: %v", what, got)
		}
	}
	check("create", p)
	check("GET", dataOf(t, s.call("GET", "/api/v1/keywords/"+id, key, nil).want(t, 200, "")))

	// Refusals answer in the documented body and change nothing.
	for _, body := range []any{
		map[string]any{"exclude": []string{""}}, map[string]any{"minComments": -1}, map[string]any{"status": "paused", "require": make([]string, 21)},
		`{"titleOnly":"yes"}`, `{"exclude":[1]}`, `{}`,
	} {
		s.call("PATCH", "/api/v1/keywords/"+id, key, body).want(t, 400, "invalid_parameter")
	}
	check("after refusals", dataOf(t, s.call("GET", "/api/v1/keywords/"+id, key, nil).want(t, 200, "")))

	post := func(id, author string, likes int, body ...string) map[string]any {
		return map[string]any{"externalId": id, "authorName": author, "body": body, "url": "https://x.com/" + id, "likes": likes, "comments": 0}
	}
	s.ingest(s.IngestKey, "x",
		post("kept", "ada", 5, "acme is great"),
		post("hiring", "ada", 5, "acme is HIRING"),
		post("trial", "ada", 5, "acme", "free trial inside"),
		post("spam", "Spam_Bot", 5, "acme deals"),
		post("quiet", "ada", 1, "acme whispers"),
	)
	if got := s.externalIDs(key); !slices.Equal(got, []string{"https://x.com/kept"}) {
		t.Fatalf("matches after the first batch: %v", got)
	}

	// One field changed; the others stay; the next batch is matched by
	// the new filters.
	r := dataOf(t, s.call("PATCH", "/api/v1/keywords/"+id, key, map[string]any{"minLikes": 0}).want(t, 200, ""))
	want["minLikes"] = nil
	check("PATCH minLikes", r)
	s.ingest(s.IngestKey, "x", post("quiet-again", "ada", 0, "acme whispers again"), post("hiring-again", "ada", 9, "acme hiring"))
	if got := s.externalIDs(key); !slices.Equal(got, []string{"https://x.com/kept", "https://x.com/quiet-again"}) {
		t.Fatalf("matches after the change: %v", got)
	}
	// The status as the spec has it still works alone.
	if r := dataOf(t, s.call("PATCH", "/api/v1/keywords/"+id, key, map[string]any{"status": "paused"}).want(t, 200, "")); r["status"] != "paused" {
		t.Fatalf("pause: %v", r)
	}
}

func TestDashboardPhraseFilters(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	b.signIn(s.loginLink(s.OwnerID))

	// Add a phrase with filters; a refused minimum is shown beside its
	// field first, with what was typed kept.
	b.open(s.URL + "/app/phrases")
	b.click("details.phrase-filters summary", `document.querySelector("details.phrase-filters").open`)
	b.do(setValue("#p-platform", "x"), setValue("#p-phrase", "acme"), setValue("#pf-exclude", "hiring\nfree trial"),
		setValue("#pf-excludeAuthors", "@spam_bot"), setValue("#pf-minLikes", "-1"))
	b.submitAndWait(`form.add button[type="submit"]`)
	if e := b.text("#pe-minLikes"); e != "minLikes must be a whole number from 0 to 1000000" {
		t.Fatalf("error beside the minimum of likes: %q\n%s", e, b.text("main"))
	}
	if v := eval[string](b, `document.querySelector("#pf-exclude").value`); v != "hiring\nfree trial" {
		t.Fatalf("the form lost the words typed: %q", v)
	}
	if n := eval[int](b, `document.querySelectorAll("table.phrases tbody tr").length`); n != 0 {
		t.Fatalf("%d phrases after a refusal", n)
	}
	b.do(setValue("#pf-minLikes", "2"))
	b.submitAndWait(`form.add button[type="submit"]`)
	if n := b.text(".notice"); !strings.HasPrefix(n, "Phrase added.") {
		t.Fatalf("notice %q after adding\n%s", n, b.text("main"))
	}
	summary := b.text("table.phrases tbody .filter-summary")
	for _, want := range []string{"skips “hiring”, “free trial”", "skips authors “spam_bot”", "at least 2 likes"} {
		if !strings.Contains(summary, want) {
			t.Fatalf("the phrase list says %q, without %q", summary, want)
		}
	}

	// The filters page shows them and changes them.
	b.click(`table.phrases tbody .filter-summary a`, `location.pathname.endsWith("/filters")`)
	b.waitFor(`document.querySelector("#pf-exclude") !== null`, "the filters page")
	if v := eval[string](b, `document.querySelector("#pf-exclude").value + "|" + document.querySelector("#pf-minLikes").value`); v != "hiring\nfree trial|2" {
		t.Fatalf("the filters page shows %q", v)
	}
	b.do(setValue("#pf-excludeCommunities", "no spaces"))
	b.submitAndWait(`form.phrase-filters button[type="submit"]`)
	if e := b.text("#pe-excludeCommunities"); !strings.HasPrefix(e, "excludeCommunities entry 1 must be a subreddit name") {
		t.Fatalf("error beside the communities: %q\n%s", e, b.text("main"))
	}
	// chromedp's SetValue refuses an empty value: clear the fields by script.
	b.do(js(`document.querySelector("#pf-excludeCommunities").value = ""; document.querySelector("#pf-minLikes").value = ""`),
		setValue("#pf-require", "price"))
	b.submitAndWait(`form.phrase-filters button[type="submit"]`)
	if n := b.text(".notice"); !strings.HasPrefix(n, "Filters saved") {
		t.Fatalf("notice %q after saving\n%s", n, b.text("main"))
	}
	// Saving stays on the filters page, which offers to archive what they
	// skip (window_test.go); the list says what they are.
	b.open(s.URL + "/app/phrases")
	if summary := b.text("table.phrases tbody .filter-summary"); !strings.Contains(summary, "needs “price”") || strings.Contains(summary, "likes") {
		t.Fatalf("the phrase list says %q after the change", summary)
	}

	// Posts arrive: the ones a filter vetoes are not in the inbox, the
	// allowed one is.
	s.ingest(s.IngestKey, "x",
		xPost("vetoed-word", "ada", "acme price, and we are hiring"),
		xPost("vetoed-author", "spam_bot", "acme price drop"),
		xPost("vetoed-require", "ada", "acme is fine"),
		xPost("allowed", "ada", "acme price went up, worth it?"),
	)
	b.open(s.URL + "/app/")
	b.waitFor(`document.querySelectorAll("article.match").length >= 1`, "the allowed match")
	inbox := b.text("#matches")
	if !strings.Contains(inbox, "acme price went up, worth it?") {
		t.Fatalf("the allowed post is not in the inbox:\n%s", inbox)
	}
	for _, vetoed := range []string{"we are hiring", "acme price drop", "acme is fine"} {
		if strings.Contains(inbox, vetoed) {
			t.Fatalf("a vetoed post (%q) is in the inbox:\n%s", vetoed, inbox)
		}
	}
	if n := eval[int](b, `document.querySelectorAll("article.match").length`); n != 1 {
		t.Fatalf("%d matches in the inbox, want 1", n)
	}

	// The filters form refuses a write from another site, and the
	// filters stay as they were.
	list := s.call("GET", "/api/v1/keywords", s.APIKey, nil).want(t, 200, "").JSON(t)["data"].([]any)
	phrase := list[0].(map[string]any)
	c := newBrowserless(t, s)
	c.signIn(s.loginLink(s.OwnerID))
	code, _, _ := c.post("/app/phrases/"+phrase["id"].(string)+"/filters", map[string][]string{"exclude": {"x"}},
		"Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
	after := dataOf(t, s.call("GET", "/api/v1/keywords/"+phrase["id"].(string), s.APIKey, nil).want(t, 200, ""))
	if code != 403 || !reflect.DeepEqual(after["exclude"], []any{"hiring", "free trial"}) || !reflect.DeepEqual(after["require"], []any{"price"}) {
		t.Fatalf("a cross-site save of filters answered %d; filters now %v, %v", code, after["exclude"], after["require"])
	}
}
