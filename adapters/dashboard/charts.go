package dashboard

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// The trends page's charts are SVG drawn on the server: this file works
// out every shape and label, and the template (trends.html, "chart")
// writes them out, escaping every word for its place. A chart has a
// viewBox and no size of its own, so it takes the page's width; its
// text is sized in the stylesheet for that width (app.css, .chart), and
// the few labels on an axis are placed so that they cannot meet at a
// phone's width.

// The viewBox of every chart and the room kept for its labels: the
// value labels sit above their grid lines, inside the plot, and the day
// labels under it.
const (
	chartW      = 720
	chartH      = 280
	chartTop    = 28  // above the highest grid line: its label
	chartBottom = 32  // under the plot: the day or score labels
	maxBarW     = 60  // a bar of few days is no wider than this
	barFill     = 0.8 // the share of its slot a bar fills
)

// chart is one chart as the template draws it, with its numbers as a
// table.
type chart struct {
	ID      string // prefix of its element ids
	Title   string // its heading
	Summary string // what it shows, in a sentence: the SVG's title and label
	Empty   string // said inside the chart when it has nothing to draw
	W, H    int
	MidX    int // where the words of an empty chart go
	MidY    int
	Bars    []chartBar
	Grid    []gridLine
	Ticks   []tick
	Legend  []legendItem
	Table   chartTable
}

// chartBar is one rectangle, its numbers ready to write.
type chartBar struct {
	X, Y, W, H string
	Class      string // the series' colour (app.css, .c0 to .c7)
}

// gridLine is a horizontal line at a value, labelled with it.
type gridLine struct {
	Y, LabelY string
	Label     string
}

// tick is a label under the plot.
type tick struct {
	X      string
	Anchor string // start, middle or end
	Label  string
}

type legendItem struct {
	Class string
	Label string
	Total string
}

// chartTable is a chart's numbers: a heading per column, a row per day
// or band (its heading first), and the totals.
type chartTable struct {
	Caption string
	Head    []string
	Rows    []tableRow
	Foot    []string // the totals row, its heading first; empty for none
}

type tableRow struct {
	Head     string
	DateTime string // the row's day as YYYY-MM-DD, empty when it is no day
	Cells    []string
}

// series is one stacked series of a chart: its label, its colour's
// index and its count per day.
type series struct {
	Label  string
	Colour int
	PerDay []int64
	Total  int64
}

// stackedChart draws counts per day, one bar per day with the series
// stacked in their order, the first at the bottom. first is the first
// day; perDay holds each day's total, what the bars' heights add up to.
// scope names what is counted ("all phrases"), for the summary.
func stackedChart(id, title, scope string, first time.Time, perDay []int64, ss []series) chart {
	days := len(perDay)
	c := chart{ID: id, Title: title, W: chartW, H: chartH, MidX: chartW / 2, MidY: (chartH - chartBottom + chartTop) / 2}
	var total, busiest int64
	busiestDay := 0
	for i, n := range perDay {
		total += n
		if n > busiest {
			busiest, busiestDay = n, i
		}
	}
	top, step := scale(busiest)
	c.Grid = grid(top, step)
	plotH := float64(chartH - chartTop - chartBottom)
	base := float64(chartH - chartBottom)
	slot := float64(chartW) / float64(max(days, 1))
	barW := math.Min(slot*barFill, maxBarW)
	for i := range days {
		x := float64(i)*slot + (slot-barW)/2
		y := base
		for _, s := range ss {
			n := s.PerDay[i]
			if n <= 0 {
				continue
			}
			h := float64(n) / float64(top) * plotH
			y -= h
			c.Bars = append(c.Bars, chartBar{X: num(x), Y: num(y), W: num(barW), H: num(h), Class: "c" + strconv.Itoa(s.Colour)})
		}
	}
	for _, i := range tickDays(days) {
		t := tick{X: num(float64(i)*slot + slot/2), Anchor: "middle", Label: first.AddDate(0, 0, i).Format("2 Jan")}
		switch {
		case days == 1:
		case i == 0:
			t.X, t.Anchor = num(float64(i)*slot+(slot-barW)/2), "start"
		case i == days-1:
			t.X, t.Anchor = num(float64(i)*slot+(slot+barW)/2), "end"
		}
		c.Ticks = append(c.Ticks, t)
	}
	var parts []string
	c.Table = chartTable{Caption: title + ", " + scope, Head: []string{"Day"}}
	for _, s := range ss {
		c.Legend = append(c.Legend, legendItem{Class: "c" + strconv.Itoa(s.Colour), Label: s.Label, Total: count(s.Total)})
		c.Table.Head = append(c.Table.Head, s.Label)
		parts = append(parts, s.Label+" "+count(s.Total))
	}
	c.Table.Head = append(c.Table.Head, "All")
	for i := range days {
		d := first.AddDate(0, 0, i)
		row := tableRow{Head: d.Format("2 Jan 2006"), DateTime: d.Format(time.DateOnly)}
		for _, s := range ss {
			row.Cells = append(row.Cells, count(s.PerDay[i]))
		}
		row.Cells = append(row.Cells, count(perDay[i]))
		c.Table.Rows = append(c.Table.Rows, row)
	}
	c.Table.Foot = []string{"All days"}
	for _, s := range ss {
		c.Table.Foot = append(c.Table.Foot, count(s.Total))
	}
	c.Table.Foot = append(c.Table.Foot, count(total))
	span := spanWords(first, days)
	if total == 0 {
		c.Empty = "No scored matches in these days."
		c.Summary = title + ", " + scope + ", " + span + ": no scored matches."
		return c
	}
	c.Summary = title + ", " + scope + ", " + span + ": " + count(total) + " in all (" + strings.Join(parts, ", ") + "); the busiest day " +
		first.AddDate(0, 0, busiestDay).Format("2 Jan") + " with " + count(busiest) + "."
	return c
}

// bandChart draws how many matches fell in each score band, one bar a
// band, labelled with its lowest score.
func bandChart(id, title, scope string, first time.Time, days int, bands []int64, ranges [][2]int) chart {
	c := chart{ID: id, Title: title, W: chartW, H: chartH, MidX: chartW / 2, MidY: (chartH - chartBottom + chartTop) / 2}
	var total, most int64
	for _, n := range bands {
		total += n
		most = max(most, n)
	}
	top, step := scale(most)
	c.Grid = grid(top, step)
	plotH := float64(chartH - chartTop - chartBottom)
	base := float64(chartH - chartBottom)
	slot := float64(chartW) / float64(len(bands))
	barW := slot * barFill
	c.Table = chartTable{Caption: title + ", " + scope, Head: []string{"Score", "Matches"}}
	var parts []string
	for i, n := range bands {
		x := float64(i)*slot + (slot-barW)/2
		if n > 0 {
			h := float64(n) / float64(top) * plotH
			c.Bars = append(c.Bars, chartBar{X: num(x), Y: num(base - h), W: num(barW), H: num(h), Class: "band"})
		}
		c.Ticks = append(c.Ticks, tick{X: num(float64(i)*slot + slot/2), Anchor: "middle", Label: strconv.Itoa(ranges[i][0])})
		name := strconv.Itoa(ranges[i][0]) + "–" + strconv.Itoa(ranges[i][1])
		c.Table.Rows = append(c.Table.Rows, tableRow{Head: name, Cells: []string{count(n)}})
		if n > 0 {
			parts = append(parts, name+" "+count(n))
		}
	}
	c.Table.Foot = []string{"All scores", count(total)}
	span := spanWords(first, days)
	if total == 0 {
		c.Empty = "No scored matches in these days."
		c.Summary = title + ", " + scope + ", " + span + ": no scored matches."
		return c
	}
	c.Summary = title + ", " + scope + ", " + span + ": " + count(total) + " in all; " + strings.Join(parts, ", ") + "."
	return c
}

// scale returns the top of a chart's value axis and the step of its
// grid lines for a largest value of most: a step of 1, 2 or 5 times a
// power of ten, and at most four steps up to a top at or above most.
func scale(most int64) (top, step int64) {
	if most <= 0 {
		return 1, 1
	}
	step = 1
	for mag := int64(1); ; mag *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if step = m * mag; step*4 >= most {
				return (most + step - 1) / step * step, step
			}
		}
	}
}

// grid returns a line at zero and at each step up to top, each but the
// zero line labelled with its value: a label on the zero line would sit
// on the first day's.
func grid(top, step int64) []gridLine {
	plotH := float64(chartH - chartTop - chartBottom)
	base := float64(chartH - chartBottom)
	out := []gridLine{{Y: num(base)}}
	for v := step; v <= top; v += step {
		y := base - float64(v)/float64(top)*plotH
		out = append(out, gridLine{Y: num(y), LabelY: num(y - 5), Label: short(v)})
	}
	return out
}

// tickDays are the days labelled under a chart of days days: the first,
// the last and two between, a third of the way apart, so that labels
// never meet however narrow the chart.
func tickDays(days int) []int {
	var out []int
	for _, i := range []int{0, (days + 1) / 3, (2*days + 1) / 3, days - 1} {
		if i >= 0 && i < days && (len(out) == 0 || out[len(out)-1] < i) {
			out = append(out, i)
		}
	}
	return out
}

// spanWords names the days of a chart: "2 Mar to 31 Mar 2026 (UTC)".
func spanWords(first time.Time, days int) string {
	last := first.AddDate(0, 0, days-1)
	if days <= 1 {
		return last.Format("2 Jan 2006") + " (UTC)"
	}
	return first.Format("2 Jan") + " to " + last.Format("2 Jan 2006") + " (UTC)"
}

// num writes a coordinate to a tenth of a unit.
func num(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

// count writes a count with thousands separated: 12,345.
func count(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

// short writes an axis value in few characters: 900, 1.5k, 20k, 2M.
func short(n int64) string {
	switch {
	case n >= 1_000_000:
		return strconv.FormatFloat(float64(n)/1e6, 'f', -1, 64) + "M"
	case n >= 1000:
		return strconv.FormatFloat(float64(n)/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatInt(n, 10)
}
