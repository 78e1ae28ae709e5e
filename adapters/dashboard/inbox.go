package dashboard

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/earshothq/earshot/app/record"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

type option struct {
	Value, Label string
	Selected     bool
}

type inboxView struct {
	layout
	Filters filtersView
	Matches []matchView
	Older   string // address of the next page, empty on the last
	Newest  string // address of the first page, empty on it
	Return  string // this page, for the bulk form to come back to
	Live    string // the live stream's address
	Empty   emptyView
	// NoPhrases: the owner has no phrase and so no match; the page is
	// the first step alone, with nothing to search, filter or select.
	NoPhrases bool
	Exports   []exportLink // downloads of the view; none without an export service
}

// exportLink downloads the inbox's view in a format.
type exportLink struct{ Format, Href string }

// emptyView is what an inbox with nothing to show says, and the next
// step it points to.
type emptyView struct {
	Text      string
	AddPhrase bool   // point to adding a phrase: the owner has none
	Helper    string // the platforms a helper reads for the owner ("x and facebook"); empty when none
}

// emptyInbox says why an unfiltered inbox is empty and what to do: add a
// phrase, or run a helper for the platforms the server does not read.
func emptyInbox(phrases []core.Phrase, filtered bool) emptyView {
	switch {
	case len(phrases) == 0:
		return emptyView{Text: "No matches yet: add a phrase, and posts that mention it show up here.", AddPhrase: true}
	case filtered:
		return emptyView{Text: "No match fits these filters."}
	}
	var helped []string
	for _, p := range core.Platforms {
		if p != core.Reddit && slices.ContainsFunc(phrases, func(ph core.Phrase) bool { return ph.Platform == p }) {
			helped = append(helped, string(p))
		}
	}
	v := emptyView{Text: "No matches yet. The server reads reddit itself; new matches appear here as they arrive.", Helper: strings.Join(helped, " and ")}
	if !slices.ContainsFunc(phrases, func(ph core.Phrase) bool { return ph.Platform == core.Reddit }) {
		v.Text = "No matches yet. New ones appear here as they arrive."
	}
	return v
}

// filtersView is the inbox's filter form.
type filtersView struct {
	Q         string
	Platforms []option
	Intents   []option
	Phrases   []option
	Shows     []option
	MinScore  string
	Filtered  bool // a filter other than the default view is on
}

func options(values []string, labels []string, selected string) []option {
	out := make([]option, len(values))
	for i, v := range values {
		out[i] = option{Value: v, Label: labels[i], Selected: v == selected}
	}
	return out
}

// filters is the filter form for f with the owner's phrases in its
// menu.
func filters(f filterForm, phrases []core.Phrase, filtered bool) filtersView {
	fv := filtersView{Q: f.Q, MinScore: f.MinScore, Filtered: filtered}
	plats, platLabels := []string{""}, []string{"Any platform"}
	for _, p := range core.Platforms {
		plats, platLabels = append(plats, string(p)), append(platLabels, string(p))
	}
	fv.Platforms = options(plats, platLabels, f.Platform)
	intents, intentLabels := []string{""}, []string{"Any intent"}
	for _, i := range core.Intents {
		intents, intentLabels = append(intents, string(i)), append(intentLabels, string(i))
	}
	fv.Intents = options(intents, intentLabels, f.Intent)
	for _, s := range showValues {
		fv.Shows = append(fv.Shows, option{Value: s.value, Label: s.label, Selected: s.value == f.Show})
	}
	fv.Phrases = append(fv.Phrases, option{Value: "", Label: "Any phrase", Selected: f.Phrase == ""})
	for _, p := range phrases {
		fv.Phrases = append(fv.Phrases, option{Value: p.ID, Label: phraseLabel(p), Selected: p.ID == f.Phrase})
	}
	return fv
}

// phraseLabel names a phrase in the menu: its words, platform and
// community.
func phraseLabel(p core.Phrase) string {
	label := p.Phrase + " (" + string(p.Platform)
	if p.Community != "" {
		label += ", r/" + p.Community
	}
	return label + ")"
}

func (d *Dashboard) showInbox(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	owner := session(r).OwnerID
	f := parseFilter(r.URL.Query())
	v := inboxView{layout: layout{Title: "Inbox", Nav: "inbox", SignedIn: true, Notice: bulkNotice(r.URL.Query()),
		Problem: bulkProblem(r.URL.Query())}}
	here := f.values()
	if f.Before != "" {
		here.Set("before", f.Before)
	}
	v.Return = "/app/" + queryString(here)

	phrases, err := d.deps.Phrases.List(ctx, owner, ports.PhraseFilter{})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	filtered := len(f.values()) > 0
	v.Filters = filters(f, phrases, filtered)

	status := http.StatusOK
	q, err := f.query()
	var page ports.InboxPage
	if err == nil {
		page, err = d.deps.Inbox.List(ctx, owner, q)
	}
	if err != nil {
		if !core.IsKind(err, core.KindInvalid) {
			d.fail(w, r, err)
			return
		}
		// The first step shows no filter, so it refuses none.
		if len(phrases) > 0 {
			status, v.Problem = http.StatusBadRequest, core.Message(err)
		}
	}
	now := d.cfg.Now()
	community := make(map[string]string, len(phrases))
	for _, p := range phrases {
		community[p.ID] = p.Community
	}
	v.Matches = make([]matchView, len(page.Items))
	search := f.search()
	for i, it := range page.Items {
		v.Matches[i] = d.matchView(it, ago(now, it.Match.CreatedAt), community[it.Match.PhraseID], search)
	}
	base := f.values()
	if page.Next != nil {
		older := cloneValues(base)
		older.Set("before", strconv.FormatFloat(*page.Next, 'f', -1, 64))
		v.Older = "/app/?" + older.Encode()
	}
	if f.Before != "" {
		v.Newest = "/app/" + queryString(base)
	}
	if err == nil && f.Before == "" {
		live := cloneValues(base)
		after := float64(0)
		if len(page.Items) > 0 {
			after = core.Millis(page.Items[0].Match.CreatedAt)
		}
		live.Set("after", strconv.FormatFloat(after, 'f', -1, 64))
		live.Set("since", strconv.FormatInt(now.Add(-2*time.Second).UnixMicro(), 10))
		v.Live = "/app/events?" + live.Encode()
	}
	v.Empty = emptyInbox(phrases, filtered)
	v.NoPhrases = len(phrases) == 0 && len(page.Items) == 0
	if v.NoPhrases {
		// The first step waits for a phrase, which another tab or device
		// may add; the page then loads again as the whole inbox.
		v.Live = "/app/events?first=1"
	}
	if f.Q != "" && !v.NoPhrases {
		v.Empty.Text = "No match fits this search and these filters."
	}
	if d.deps.Exports != nil && err == nil {
		for _, l := range []struct {
			format record.Format
			label  string
		}{{record.CSV, "CSV"}, {record.JSONL, "JSON Lines"}} {
			e := cloneValues(base)
			e.Set("format", string(l.format))
			v.Exports = append(v.Exports, exportLink{Format: l.label, Href: "/app/export?" + e.Encode()})
		}
	}
	d.render(w, r, status, "inbox", &v)
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v)+1)
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}

func queryString(v url.Values) string {
	if len(v) == 0 {
		return ""
	}
	return "?" + v.Encode()
}
