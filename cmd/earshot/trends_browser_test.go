package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// labelsApartJS returns "" when no two labels of any chart on the page
// meet and every label lies inside its chart, else what is wrong.
const labelsApartJS = `(function(){var bad=[];
Array.from(document.querySelectorAll("svg.chart")).forEach(function(svg,k){
var box=svg.getBoundingClientRect();
var rs=Array.from(svg.querySelectorAll("text")).filter(function(t){return t.textContent.trim()!==""}).map(function(t){return {s:t.textContent,r:t.getBoundingClientRect()}});
rs.forEach(function(a,i){
if(a.r.left<box.left-0.5||a.r.right>box.right+0.5||a.r.top<box.top-0.5||a.r.bottom>box.bottom+0.5)bad.push("chart "+k+": "+a.s+" leaves the chart");
if(a.r.height<10)bad.push("chart "+k+": "+a.s+" is "+a.r.height.toFixed(1)+" px high");
rs.slice(i+1).forEach(function(b){if(a.r.left<b.r.right&&b.r.left<a.r.right&&a.r.top<b.r.bottom&&b.r.top<a.r.bottom)bad.push("chart "+k+": "+a.s+" meets "+b.s)})})});
return bad.join("; ")})()`

// The trends page in the browser at a phone's width: three charts, each
// an image with a title and label, none wider than the screen, their
// labels apart and readable, each followed by a table of its numbers,
// the same numbers the API gives; choosing a phrase and 90 days shows
// theirs; a phrase whose words are markup stays words.
func TestTrendsBrowser(t *testing.T) {
	t.Parallel()
	b := newTab(t)
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000", "EARSHOT_PLAN_PHRASES_PER_PLATFORM=3")
	keyword := func(p map[string]any) string {
		return dataOf(t, s.call("POST", "/api/v1/keywords", s.APIKey, p).want(t, 201, ""))["id"].(string)
	}
	keyword(map[string]any{"phrase": "acme crm", "platform": "x"})
	invoice := keyword(map[string]any{"phrase": "invoice tool", "platform": "facebook"})
	markup := keyword(map[string]any{"phrase": `<script>alert("t")</script>`, "platform": "x"})
	for i := range 5 {
		s.ingest(s.IngestKey, "x", xPost(fmt.Sprint("t", i), "maya", fmt.Sprint("Is acme crm worth it for a team of ", i+3, "? Looking to buy.")))
	}
	for i := range 2 {
		s.ingest(s.IngestKey, "facebook", map[string]any{"externalId": fmt.Sprint("f", i), "authorName": "Bakers",
			"body": []string{"Which invoice tool do you all use?"}, "url": fmt.Sprint("https://facebook.com/groups/x/posts/", i)})
	}
	trends := func(query string) map[string]any {
		return dataOf(t, s.call("GET", "/api/v1/trends"+query, s.APIKey, nil).want(t, 200, ""))
	}
	waitUntil(t, 20*time.Second, 50*time.Millisecond, func() bool { return trends("")["total"] == 7.0 },
		func() string { return fmt.Sprintf("the seven matches were not all scored: %v", trends("")) })
	api := trends("")

	b.signIn(s.loginLink(s.OwnerID))
	atWidths(b, func(w string) {
		b.open(s.URL + "/app/trends")
		if h := b.text("main h1"); h != "Trends" {
			t.Fatalf("%s: heading %q\n%s", w, h, b.text("main"))
		}
		if n := eval[int](b, `Array.from(document.querySelectorAll('svg.chart[role="img"]')).filter(function(s){var t=s.querySelector("title");return t&&t.textContent!==""&&t.textContent===s.getAttribute("aria-label")}).length`); n != 3 {
			t.Fatalf("%s: %d charts with a title and label", w, n)
		}
		if n := eval[int](b, `Array.from(document.querySelectorAll("section.trend")).filter(function(s){return s.querySelector("svg.chart + ul.legend + .numbers table caption, svg.chart + .numbers table caption")}).length`); n != 3 {
			t.Fatalf("%s: %d charts followed by a table with a caption", w, n)
		}
		if n := eval[int](b, `document.querySelectorAll("svg.chart rect").length`); n == 0 {
			t.Fatalf("%s: no bars", w)
		}
		if wide := eval[string](b, `(function(){var w=document.documentElement.clientWidth;var c=Array.from(document.querySelectorAll("svg.chart")).map(function(s){return s.getBoundingClientRect().right});return document.documentElement.scrollWidth>w||c.some(function(r){return r>w})?"page "+document.documentElement.scrollWidth+", charts "+c.join(",")+" of "+w:""})()`); wide != "" {
			t.Fatalf("%s: wider than the screen: %s", w, wide)
		}
		if bad := eval[string](b, labelsApartJS); bad != "" {
			t.Fatalf("%s: %s", w, bad)
		}
	})
	// Phone width from here on, as atWidths leaves it.

	// The table's totals are the API's.
	foot := func(table int) []string {
		return eval[[]string](b, fmt.Sprintf(`Array.from(document.querySelectorAll(".numbers table")[%d].querySelectorAll("tfoot th, tfoot td")).map(function(c){return c.textContent})`, table))
	}
	want := []string{"All days"}
	for _, p := range api["byPlatform"].([]any) {
		want = append(want, fmt.Sprint(p.(map[string]any)["total"]))
	}
	want = append(want, "7")
	if got := foot(0); strings.Join(got, " ") != strings.Join(want, " ") || !strings.Contains(b.text("#trends-intro"), "7 scored matches of all phrases") {
		t.Fatalf("platform totals %v, the API's %v; intro %q", got, want, b.text("#trends-intro"))
	}
	if got := foot(2); strings.Join(got, " ") != "All scores 7" {
		t.Fatalf("score totals %v", got)
	}

	// One phrase, then 90 days of it.
	b.do(setValue("#t-phrase", invoice))
	b.submitAndWait(`form.filters button[type="submit"]`)
	if loc := b.location(); !strings.Contains(loc, "phrase="+invoice) || !strings.Contains(b.text("#trends-intro"), "2 scored matches of “invoice tool” on facebook") {
		t.Fatalf("after choosing the phrase: %s, %q", loc, b.text("#trends-intro"))
	}
	if got := foot(0); got[len(got)-1] != "2" || fmt.Sprint(trends("?keywordId=" + invoice)["total"]) != "2" {
		t.Fatalf("the phrase's totals %v", got)
	}
	rows := func() int {
		return eval[int](b, `document.querySelectorAll(".numbers table")[0].querySelectorAll("tbody tr").length`)
	}
	if rows() != 30 {
		t.Fatalf("%d days in the table, want 30", rows())
	}
	b.do(setValue("#t-days", "90"))
	b.submitAndWait(`form.filters button[type="submit"]`)
	if rows() != 90 || eval[string](b, `document.querySelector("#t-phrase").value`) != invoice || eval[string](b, `document.querySelector("#t-days").value`) != "90" {
		t.Fatalf("after choosing 90 days: %d rows, at %s", rows(), b.location())
	}
	if bad := eval[string](b, labelsApartJS); bad != "" {
		t.Fatalf("90 days: %s", bad)
	}

	// A phrase whose words are markup: named as words, nothing runs.
	b.do(setValue("#t-phrase", markup))
	b.submitAndWait(`form.filters button[type="submit"]`)
	if intro := b.text("#trends-intro"); !strings.Contains(intro, `“<script>alert("t")</script>” on x`) || b.dialogCount() != 0 ||
		eval[int](b, `document.querySelectorAll("main script").length`) != 0 || !strings.Contains(b.text("main"), "No scored matches in these days.") {
		t.Fatalf("the markup phrase: intro %q, %d dialogs", intro, b.dialogCount())
	}
}
