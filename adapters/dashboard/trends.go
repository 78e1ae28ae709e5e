package dashboard

import (
	"context"
	"net/http"
	"strconv"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// TrendService reads an owner's trends over 30 or 90 days, of all
// phrases or one. KindInvalid names days; KindNotFound for a phrase
// that is not the owner's. app.Trends is one.
type TrendService interface {
	Trends(ctx context.Context, ownerID, phraseID string, days int) (core.Trends, error)
}

type trendsView struct {
	layout
	Phrases []option
	Days    []option
	Intro   string // how many matches the charts count, of what, over which days
	Charts  []chart
}

// showTrends draws the owner's trends: matches per day by platform and
// by intent, and how their scores spread, for the phrase and the span
// the address names (all phrases and 30 days when it names none).
func (d *Dashboard) showTrends(w http.ResponseWriter, r *http.Request) {
	if d.deps.Trends == nil {
		d.notFound(w, r)
		return
	}
	ctx := r.Context()
	owner := session(r).OwnerID
	q := r.URL.Query()
	phraseID := q.Get("phrase")
	days := 0
	if s := q.Get("days"); s != "" {
		var err error
		if days, err = strconv.Atoi(s); err != nil {
			days = -1 // not a number: refused as any other span
		}
	}
	v := trendsView{layout: layout{Title: "Trends", Nav: "trends", SignedIn: true}}
	phrases, err := d.deps.Phrases.List(ctx, owner, ports.PhraseFilter{})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	status := http.StatusOK
	tr, err := d.deps.Trends.Trends(ctx, owner, phraseID, days)
	if err != nil {
		if !core.IsKind(err, core.KindInvalid) && !core.IsKind(err, core.KindNotFound) {
			d.fail(w, r, err)
			return
		}
		status, v.Problem = statusOf(err), core.Message(err)
	}
	scope := "all phrases"
	v.Phrases = []option{{Value: "", Label: "All phrases", Selected: phraseID == ""}}
	for _, p := range phrases {
		v.Phrases = append(v.Phrases, option{Value: p.ID, Label: phraseLabel(p), Selected: p.ID == phraseID})
		if p.ID == phraseID {
			scope = phraseScope(p)
		}
	}
	shown := tr.Days
	if err != nil {
		shown = core.DefaultTrendDays
	}
	for _, n := range []int{core.DefaultTrendDays, core.MaxTrendDays} {
		v.Days = append(v.Days, option{Value: strconv.Itoa(n), Label: "Last " + strconv.Itoa(n) + " days", Selected: n == shown})
	}
	if err == nil {
		v.Intro = count(tr.Total) + " scored matches of " + scope + ", " + spanWords(tr.First, tr.Days) + "."
		if tr.Total == 1 {
			v.Intro = "1 scored match of " + scope + ", " + spanWords(tr.First, tr.Days) + "."
		}
		v.Charts = trendCharts(tr, scope)
	}
	d.render(w, r, status, "trends", &v)
}

// trendCharts are the page's three charts of tr; scope names what they
// count.
func trendCharts(tr core.Trends, scope string) []chart {
	var platforms, intents []series
	for i, s := range tr.ByPlatform {
		platforms = append(platforms, series{Label: s.Key, Colour: i, PerDay: s.PerDay, Total: s.Total})
	}
	for i, s := range tr.ByIntent {
		label := s.Key
		if s.Key == string(core.IntentOther) {
			label = "other or none"
		}
		intents = append(intents, series{Label: label, Colour: i, PerDay: s.PerDay, Total: s.Total})
	}
	ranges := make([][2]int, core.ScoreBands)
	for b := range ranges {
		ranges[b][0], ranges[b][1] = core.BandRange(b)
	}
	return []chart{
		stackedChart("by-platform", "Matches per day by platform", scope, tr.First, tr.PerDay, platforms),
		stackedChart("by-intent", "Matches per day by intent", scope, tr.First, tr.PerDay, intents),
		bandChart("by-score", "How the scores spread", scope, tr.First, tr.Days, tr.Bands[:], ranges),
	}
}

// phraseScope names one phrase as what the charts count: “acme” on
// reddit in r/saas.
func phraseScope(p core.Phrase) string {
	s := "“" + p.Phrase + "” on " + string(p.Platform)
	if p.Community != "" {
		s += " in r/" + p.Community
	}
	return s
}
