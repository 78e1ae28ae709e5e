package dashboard

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

func TestScale(t *testing.T) {
	for _, tc := range []struct{ most, top, step int64 }{
		{0, 1, 1}, {-5, 1, 1}, {1, 1, 1}, {3, 3, 1}, {4, 4, 1}, {5, 6, 2}, {7, 8, 2}, {9, 10, 5}, {20, 20, 5},
		{21, 30, 10}, {95, 100, 50}, {101, 150, 50}, {1234, 1500, 500}, {1_000_000, 1_000_000, 500_000},
	} {
		if top, step := scale(tc.most); top != tc.top || step != tc.step {
			t.Errorf("scale(%d) = %d, %d; want %d, %d", tc.most, top, step, tc.top, tc.step)
		}
	}
	// Whatever the largest value: the top holds it, in at most four
	// steps of 1, 2 or 5 times a power of ten.
	for most := int64(1); most < 5_000_000; most = most*3 + 1 {
		top, step := scale(most)
		m := step
		for m%10 == 0 {
			m /= 10
		}
		if top < most || top%step != 0 || top/step > 4 || (m != 1 && m != 2 && m != 5) {
			t.Errorf("scale(%d) = %d, %d", most, top, step)
		}
	}
	if g := grid(1500, 500); len(g) != 4 || g[0].Label != "" || g[1].Label != "500" || g[3].Label != "1.5k" ||
		g[0].Y != num(chartH-chartBottom) || g[3].Y != num(chartTop) {
		t.Errorf("grid: %+v", g)
	}
}

func TestCountWords(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 1234567: "1,234,567", -12345: "-12,345"} {
		if got := count(n); got != want {
			t.Errorf("count(%d) = %q, want %q", n, got, want)
		}
	}
	for n, want := range map[int64]string{0: "0", 900: "900", 1000: "1k", 1500: "1.5k", 20000: "20k", 2_000_000: "2M"} {
		if got := short(n); got != want {
			t.Errorf("short(%d) = %q, want %q", n, got, want)
		}
	}
}

var first = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// trendsOf makes trends of days days whose day i has i%7 matches on x
// and one on reddit every third day.
func trendsOf(days int) core.Trends {
	var counts []core.DayCount
	now := first.AddDate(0, 0, days-1).Add(15 * time.Hour)
	for i := range days {
		day := core.DayOf(first) + int64(i)
		counts = append(counts, core.DayCount{Day: day, Platform: core.X, Intent: core.IntentBuying, Band: i % 10, N: int64(i % 7)})
		if i%3 == 0 {
			counts = append(counts, core.DayCount{Day: day, Platform: core.Reddit, Intent: core.IntentQuestion, Band: 9, N: 1})
		}
	}
	return core.BuildTrends("", days, now, counts)
}

func parse(t *testing.T, v string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("%q: %v", v, err)
	}
	return f
}

// The bars of a day stack up to its total on the chart's scale, sit in
// the day's slot and inside the plot; the day labels are the first and
// last day and two between, far enough apart at a phone's width.
func TestStackedChartGeometry(t *testing.T) {
	for _, days := range []int{1, 2, 30, 90} {
		tr := trendsOf(days)
		c := trendCharts(tr, "all phrases")[0]
		top, _ := scale(largest(tr.PerDay))
		slot := float64(chartW) / float64(days)
		plotH := float64(chartH - chartTop - chartBottom)
		heights, tops := map[int]float64{}, map[int]float64{}
		for _, b := range c.Bars {
			x, y, w, h := parse(t, b.X), parse(t, b.Y), parse(t, b.W), parse(t, b.H)
			day := int(x / slot)
			if x < float64(day)*slot || x+w > float64(day+1)*slot+0.1 || w > maxBarW || y < chartTop-0.1 || y+h > chartH-chartBottom+0.1 || h <= 0 {
				t.Fatalf("%d days: bar %+v out of its slot or the plot", days, b)
			}
			heights[day] += h
			if top, ok := tops[day]; !ok || y < top {
				tops[day] = y
			}
		}
		for i, n := range tr.PerDay {
			if want := float64(n) / float64(top) * plotH; math.Abs(heights[i]-want) > 0.5 {
				t.Fatalf("%d days: day %d is %.1f high, want %.1f (%d of %d)", days, i, heights[i], want, n, top)
			}
			// Stacked: the bars of a day reach as high as their heights add up to.
			if n > 0 && math.Abs(chartH-chartBottom-tops[i]-heights[i]) > 0.5 {
				t.Fatalf("%d days: day %d's bars overlap or part: top %.1f, heights %.1f", days, i, tops[i], heights[i])
			}
		}
		want := map[int]int{1: 1, 2: 2, 30: 4, 90: 4}[days]
		if len(c.Ticks) != want || c.Ticks[0].Label != "2 Mar" {
			t.Fatalf("%d days: ticks %+v", days, c.Ticks)
		}
		if days == 1 && (c.Ticks[0].Anchor != "middle" || c.Ticks[0].X != num(chartW/2)) {
			t.Fatalf("one day: tick %+v", c.Ticks[0])
		}
		if days == 1 && (len(c.Bars) != 1 || parse(t, c.Bars[0].W) != maxBarW) {
			t.Fatalf("one day: bars %+v", c.Bars)
		}
		// At a phone's width the labels are 26 units high and no wider
		// than 0.62 of that a character (app.css).
		const phoneFont = 26.0
		lastEnd := math.Inf(-1)
		for _, tk := range c.Ticks {
			w := float64(len(tk.Label)) * phoneFont * 0.62
			start := parse(t, tk.X)
			switch tk.Anchor {
			case "middle":
				start -= w / 2
			case "end":
				start -= w
			}
			if start < lastEnd+phoneFont/2 || start < 0 || start+w > chartW {
				t.Fatalf("%d days: tick %+v meets the one before it or the edge", days, tk)
			}
			lastEnd = start + w
		}
		if len(c.Table.Rows) != days || len(c.Table.Head) != len(core.Platforms)+2 {
			t.Fatalf("%d days: table %+v", days, c.Table)
		}
	}
}

func largest(xs []int64) int64 {
	var m int64
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// With nothing counted a chart draws no bar, says so inside itself and
// in its summary, and still tables every day.
func TestChartsOfNothing(t *testing.T) {
	tr := core.BuildTrends("", 30, first.AddDate(0, 0, 29), nil)
	for _, c := range trendCharts(tr, "all phrases") {
		if len(c.Bars) != 0 || c.Empty == "" || !strings.HasSuffix(c.Summary, ": no scored matches.") || len(c.Grid) != 2 {
			t.Fatalf("empty chart %s: %+v", c.ID, c)
		}
	}
	if c := trendCharts(tr, "all phrases")[0]; len(c.Table.Rows) != 30 || c.Table.Foot[len(c.Table.Foot)-1] != "0" {
		t.Fatalf("empty table: %+v", c.Table)
	}
}

func TestChartSummaries(t *testing.T) {
	tr := trendsOf(30)
	cs := trendCharts(tr, "all phrases")
	if got := cs[0].Summary; got != "Matches per day by platform, all phrases, 2 Mar to 31 Mar 2026 (UTC): 95 in all (reddit 10, x 85, facebook 0); the busiest day 8 Mar with 7." {
		t.Errorf("platform summary %q", got)
	}
	if got := cs[2].Summary; got != "How the scores spread, all phrases, 2 Mar to 31 Mar 2026 (UTC): 95 in all; "+
		"0–9 9, 10–19 5, 20–29 8, 30–39 11, 40–49 7, 50–59 10, 60–69 13, 70–79 9, 80–89 5, 90–100 18." {
		t.Errorf("score summary %q", got)
	}
	if cs[2].Table.Rows[9].Head != "90–100" || cs[2].Table.Rows[0].Head != "0–9" || len(cs[2].Ticks) != 10 {
		t.Errorf("score bands: %+v", cs[2].Table.Rows)
	}
}

// renderChart writes c as the page does.
func renderChart(t *testing.T, c chart) string {
	t.Helper()
	p, err := loadPages()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := p.sets["trends"].ExecuteTemplate(&b, "chart", c); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// wellFormed parses s as XML and returns the names of its elements and
// the SVGs' role, label and title.
func wellFormed(t *testing.T, s string) (names map[string]int, svgs [][3]string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader("<root>" + s + "</root>"))
	dec.Strict = true
	names = map[string]int{}
	inTitle := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return names, svgs
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, s)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			names[e.Name.Local]++
			if e.Name.Local == "svg" {
				var role, label string
				for _, a := range e.Attr {
					switch a.Name.Local {
					case "role":
						role = a.Value
					case "aria-label":
						label = a.Value
					}
				}
				svgs = append(svgs, [3]string{role, label, ""})
			}
			inTitle = e.Name.Local == "title"
		case xml.CharData:
			if inTitle && len(svgs) > 0 {
				svgs[len(svgs)-1][2] += string(e)
			}
		case xml.EndElement:
			inTitle = false
		}
	}
}

// Every chart is well-formed SVG with a role, a label and a title that
// say what it shows, and a table of its numbers with a caption.
func TestChartsAreWellFormed(t *testing.T) {
	for _, days := range []int{1, 30, 90} {
		for _, empty := range []bool{false, true} {
			tr := trendsOf(days)
			if empty {
				tr = core.BuildTrends("", days, first.AddDate(0, 0, days-1), nil)
			}
			for _, c := range trendCharts(tr, "all phrases") {
				out := renderChart(t, c)
				names, svgs := wellFormed(t, out)
				if len(svgs) != 1 || svgs[0][0] != "img" || svgs[0][1] != c.Summary || svgs[0][2] != c.Summary || c.Summary == "" {
					t.Fatalf("%d days, %s: svg %+v", days, c.ID, svgs)
				}
				if names["table"] != 1 || names["caption"] != 1 || names["rect"] != len(c.Bars) || names["tr"] != len(c.Table.Rows)+2 {
					t.Fatalf("%d days, %s: elements %v", days, c.ID, names)
				}
			}
		}
	}
}

type fakeTrends struct{ tr core.Trends }

func (f fakeTrends) Trends(_ context.Context, owner, phraseID string, days int) (core.Trends, error) {
	d, err := core.CheckTrendDays(days)
	if err != nil {
		return core.Trends{}, err
	}
	if phraseID != "" && phraseID != "p1" {
		return core.Trends{}, core.Errorf(core.KindNotFound, "phrase not found")
	}
	tr := f.tr
	tr.PhraseID, tr.Days = phraseID, d
	return tr, nil
}

// scriptPhrases has one phrase whose words are markup.
type scriptPhrases struct{ fakePhrases }

func (scriptPhrases) List(context.Context, string, ports.PhraseFilter) ([]core.Phrase, error) {
	return []core.Phrase{{ID: "p1", Phrase: `<script>alert(1)</script>`, Platform: core.Reddit, Community: `"><b>x`, Status: core.Listening}}, nil
}

func newTrendsDashboard(t *testing.T, tr TrendService) *Dashboard {
	t.Helper()
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Sessions: fakeSessions{}, Inbox: fakeInbox{}, Phrases: scriptPhrases{}, Trends: tr})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The page names a phrase whose words are markup as text, in the menu,
// the intro, each chart's title and label, and each table's caption.
func TestTrendsPageKeepsAPhraseInert(t *testing.T) {
	d := newTrendsDashboard(t, fakeTrends{tr: trendsOf(30)})
	w := get(d, "/app/trends?phrase=p1&days=30", true)
	body := w.Body.String()
	if w.Code != 200 {
		t.Fatalf("status %d\n%s", w.Code, body)
	}
	for _, bad := range []string{"<script>alert", "<b>x"} {
		if strings.Contains(body, bad) {
			t.Fatalf("the page carries %q", bad)
		}
	}
	if n := strings.Count(body, "&lt;script&gt;alert(1)&lt;/script&gt;"); n < 1+1+3*3 {
		t.Fatalf("the phrase is shown escaped %d times", n)
	}
	main := body[strings.Index(body, "<main"):strings.Index(body, "</main>")]
	main = main[strings.Index(main, "<section"):]
	names, svgs := wellFormed(t, main)
	if names["script"] != 0 || names["b"] != 0 || len(svgs) != 3 {
		t.Fatalf("elements %v, svgs %d", names, len(svgs))
	}
	for _, s := range svgs {
		if !strings.Contains(s[1], `“<script>alert(1)</script>” on reddit in r/"><b>x`) || s[1] != s[2] {
			t.Fatalf("svg label %q, title %q", s[1], s[2])
		}
	}
}

// The page: linked from the navigation, all phrases and 30 days unless
// the address says otherwise, a span other than 30 or 90 days or
// another owner's phrase refused with the service's words; without a
// trend service, neither page nor link.
func TestTrendsPage(t *testing.T) {
	d := newTrendsDashboard(t, fakeTrends{tr: trendsOf(30)})
	w := get(d, "/app/trends", true)
	body := w.Body.String()
	if w.Code != 200 || !strings.Contains(body, `<a href="/app/trends" aria-current="page">Trends</a>`) ||
		!strings.Contains(body, `<option value="" selected>All phrases</option>`) || !strings.Contains(body, `<option value="30" selected>Last 30 days</option>`) ||
		!strings.Contains(body, "95 scored matches of all phrases, 2 Mar to 31 Mar 2026 (UTC).") || strings.Count(body, "<svg") != 3 {
		t.Fatalf("status %d\n%s", w.Code, body)
	}
	w = get(d, "/app/trends?days=90", true)
	if w.Code != 200 || !strings.Contains(w.Body.String(), `<option value="90" selected>Last 90 days</option>`) {
		t.Fatalf("90 days: %d", w.Code)
	}
	for path, want := range map[string]int{"/app/trends?days=45": 400, "/app/trends?days=x": 400, "/app/trends?phrase=theirs": 404} {
		w := get(d, path, true)
		if w.Code != want || strings.Contains(w.Body.String(), "<svg") || !strings.Contains(w.Body.String(), `role="alert"`) {
			t.Errorf("%s: status %d, want %d\n%s", path, w.Code, want, w.Body.String())
		}
	}
	if w := get(d, "/app/trends", false); w.Code != 303 {
		t.Errorf("signed out: %d", w.Code)
	}
	if w := get(d, "/app/", true); !strings.Contains(w.Body.String(), `<a href="/app/trends">Trends</a>`) {
		t.Error("the inbox does not link to the trends")
	}
	without := newTrendsDashboard(t, nil)
	if w := get(without, "/app/trends", true); w.Code != 404 {
		t.Errorf("without a trend service: %d", w.Code)
	}
	if w := get(without, "/app/", true); strings.Contains(w.Body.String(), "/app/trends") {
		t.Error("without a trend service the navigation links to trends")
	}
}
