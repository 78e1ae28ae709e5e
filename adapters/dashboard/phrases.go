package dashboard

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

type phraseView struct {
	ID          string
	Phrase      string
	Platform    string
	Community   string
	Listening   bool
	Matches     int
	LastChecked string
	CheckedISO  string
	LastSource  string
	// Waiting: no helper has read this x or facebook phrase yet, so the
	// page says so rather than the check its creation stamped.
	Waiting bool
	Filters []string // what the filters skip, a short line each
}

type phrasesView struct {
	layout
	Phrases   []phraseView
	Form      phraseForm
	Platforms []option
	Errors    map[string]string // field -> message
	Waiting   bool              // a phrase waits for a helper's first read
	// FilterFields are the add form's filters; FiltersOpen shows them
	// rather than folding them away, when one is set or refused.
	FilterFields filterFieldsView
	FiltersOpen  bool
	// CanPreview offers the preview button; Preview is what it showed.
	CanPreview bool
	Preview    *previewView
}

// filterFieldsView is what the filter fields of a phrase form show.
type filterFieldsView struct {
	Form   filtersForm
	Errors map[string]string
}

// filterInput is one field of a phrase's filters: its name in the API
// (and in core's messages), in the form, its label, one line of help,
// what it holds and the refusal shown beside it.
type filterInput struct {
	Name, Field, Label, Hint, Value, Error string
}

// Lists are the filters' lists, a textarea each.
func (v filterFieldsView) Lists() []filterInput {
	return []filterInput{
		{"exclude", "exclude", "Skip posts that mention", "One word or phrase a line: any of them in the title or text skips the post (whole words, any case).", v.Form.Exclude, v.Errors["exclude"]},
		{"require", "require", "Only posts that also mention", "One a line: every one of them must be in the title or text too.", v.Form.Require, v.Errors["require"]},
		{"excludeAuthors", "exclude_authors", "Skip authors", "One a line, as u/name, @name or the name; any case.", v.Form.ExcludeAuthors, v.Errors["excludeAuthors"]},
		{"excludeCommunities", "exclude_communities", "Skip communities", "One subreddit a line (r/name): reddit posts read or sent from there are skipped.", v.Form.ExcludeCommunities, v.Errors["excludeCommunities"]},
	}
}

// Minimums are the filters' minimums, a number each.
func (v filterFieldsView) Minimums() []filterInput {
	return []filterInput{
		{"minLikes", "min_likes", "At least this many likes", "Posts with fewer likes are skipped; empty for no minimum.", v.Form.MinLikes, v.Errors["minLikes"]},
		{"minComments", "min_comments", "At least this many comments", "Posts with fewer comments are skipped; empty for no minimum.", v.Form.MinComments, v.Errors["minComments"]},
	}
}

// phraseFiltersView is the page that changes a phrase's filters.
type phraseFiltersView struct {
	layout
	Phrase     phraseView
	Fields     filterFieldsView
	CanPreview bool
	Preview    *previewView
	Apply      *applyView // nil without a window
}

type deleteView struct {
	layout
	Phrase phraseView
}

func (d *Dashboard) phraseView(p core.Phrase) phraseView {
	v := phraseView{ID: p.ID, Phrase: p.Phrase, Platform: string(p.Platform), Community: p.Community,
		Listening: p.Status == core.Listening, Matches: p.Matches, LastSource: string(p.LastSource),
		LastChecked: ago(d.cfg.Now(), p.LastCheckedAt), Filters: filterSummary(p.Filters)}
	if awaitsHelper(p) {
		v.Waiting, v.LastChecked, v.LastSource = true, "never", ""
		return v
	}
	if !p.LastCheckedAt.IsZero() {
		v.CheckedISO = p.LastCheckedAt.UTC().Format("2006-01-02T15:04:05Z")
	}
	return v
}

// awaitsHelper reports whether p is read by helpers and none has read it
// yet: a new phrase is stamped as checked at its creation, from the
// source that reads its platform (docs/decisions.md), and only a
// helper's read moves lastCheckedAt past createdAt.
func awaitsHelper(p core.Phrase) bool {
	return p.Platform != core.Reddit && !p.LastCheckedAt.After(p.CreatedAt)
}

// renderPhrases shows the phrase list and the add form, with f and errs
// when a submission failed.
func (d *Dashboard) renderPhrases(w http.ResponseWriter, r *http.Request, status int, f phraseForm, errs map[string]string, notice string,
	preview *previewView) {
	ps, err := d.deps.Phrases.List(r.Context(), session(r).OwnerID, ports.PhraseFilter{})
	if err != nil {
		d.fail(w, r, err)
		return
	}
	v := phrasesView{layout: layout{Title: "Phrases", Nav: "phrases", SignedIn: true, Notice: notice}, Form: f, Errors: errs,
		FilterFields: filterFieldsView{Form: f.Filters, Errors: errs}, CanPreview: d.deps.Window != nil, Preview: preview}
	v.FiltersOpen = f.Filters.open()
	for _, name := range filterFields {
		v.FiltersOpen = v.FiltersOpen || errs[name] != ""
	}
	if len(errs) > 0 {
		v.Problem = "The phrase was not added: see below."
	}
	for _, p := range ps {
		pv := d.phraseView(p)
		v.Waiting = v.Waiting || (pv.Waiting && pv.Listening)
		v.Phrases = append(v.Phrases, pv)
	}
	if f.Platform == "" {
		f.Platform = string(core.Reddit)
	}
	for _, p := range core.Platforms {
		v.Platforms = append(v.Platforms, option{Value: string(p), Label: string(p), Selected: string(p) == f.Platform})
	}
	d.render(w, r, status, "phrases", &v)
}

func (d *Dashboard) showPhrases(w http.ResponseWriter, r *http.Request) {
	d.renderPhrases(w, r, http.StatusOK, phraseForm{}, nil, doneNotice(r, "phrases"), nil)
}

// addPhrase goes through the same service, validation and plan limits
// as POST /keywords; a refusal is shown beside the field it is about.
func (d *Dashboard) addPhrase(w http.ResponseWriter, r *http.Request) {
	form, err := readForm(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	f := parsePhrase(form)
	if form.Get("action") == "preview" && d.deps.Window != nil {
		d.previewPhrase(w, r, f)
		return
	}
	filters, err := f.Filters.filters()
	if err == nil {
		_, _, err = d.deps.Phrases.AddWithFilters(r.Context(), session(r).OwnerID, f.Phrase, f.Platform, f.Community, filters, "")
	}
	if err != nil {
		if statusOf(err) == http.StatusInternalServerError {
			d.fail(w, r, err)
			return
		}
		d.renderPhrases(w, r, statusOf(err), f, map[string]string{f.field(err): core.Message(err)}, "", nil)
		return
	}
	done := "added"
	if d.deps.Window != nil {
		if days, _ := d.deps.Window.Bounds(); days > 0 {
			done = "filling" // the window fills it in the background
		}
	}
	http.Redirect(w, r, "/app/phrases?done="+done, http.StatusSeeOther)
}

func (d *Dashboard) pausePhrase(w http.ResponseWriter, r *http.Request) {
	d.setPhraseStatus(w, r, core.Paused, "paused")
}

func (d *Dashboard) resumePhrase(w http.ResponseWriter, r *http.Request) {
	d.setPhraseStatus(w, r, core.Listening, "resumed")
}

func (d *Dashboard) setPhraseStatus(w http.ResponseWriter, r *http.Request, s core.PhraseStatus, done string) {
	if _, err := d.deps.Phrases.SetStatus(r.Context(), session(r).OwnerID, r.PathValue("id"), string(s)); err != nil {
		d.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/app/phrases?done="+done, http.StatusSeeOther)
}

// showFilters shows the form that changes a phrase's filters.
func (d *Dashboard) showFilters(w http.ResponseWriter, r *http.Request) {
	p, err := d.deps.Phrases.Get(r.Context(), session(r).OwnerID, r.PathValue("id"))
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.renderFilters(w, r, http.StatusOK, p, filtersFormOf(p.Filters), nil, nil)
}

// renderFilters shows the filters form with f, errs when a submission
// failed, and preview when one was asked for; below it, the offer to
// archive the matches the saved filters drop.
func (d *Dashboard) renderFilters(w http.ResponseWriter, r *http.Request, status int, p core.Phrase, f filtersForm, errs map[string]string,
	preview *previewView) {
	v := phraseFiltersView{layout: layout{Title: "Filters of “" + p.Phrase + "”", Nav: "phrases", SignedIn: true,
		Notice: doneNotice(r, "filters")}, Phrase: d.phraseView(p), Fields: filterFieldsView{Form: f, Errors: errs},
		CanPreview: d.deps.Window != nil, Preview: preview}
	if len(errs) > 0 {
		v.Problem = "The filters were not saved: see below."
	}
	var err error
	if v.Apply, err = d.applyOffer(r.Context(), session(r).OwnerID, p); err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, status, "filters", &v)
}

// saveFilters replaces a phrase's filters with the form's, through the
// same service and checks as PATCH /keywords/{id}; a refusal is shown
// beside its field and changes nothing.
func (d *Dashboard) saveFilters(w http.ResponseWriter, r *http.Request) {
	form, err := readForm(r)
	if err != nil {
		d.fail(w, r, err)
		return
	}
	owner, id := session(r).OwnerID, r.PathValue("id")
	f := parseFilters(form)
	if form.Get("action") == "preview" && d.deps.Window != nil {
		d.previewFilters(w, r, f)
		return
	}
	filters, err := f.filters()
	if err == nil {
		_, err = d.deps.Phrases.Update(r.Context(), owner, id, nil, core.ChangeAll(filters))
	}
	if err != nil {
		name := filterField(err)
		if name == "" {
			d.fail(w, r, err)
			return
		}
		p, gerr := d.deps.Phrases.Get(r.Context(), owner, id)
		if gerr != nil {
			d.fail(w, r, gerr)
			return
		}
		d.renderFilters(w, r, statusOf(err), p, f, map[string]string{name: core.Message(err)}, nil)
		return
	}
	// The filters page offers, at once, to archive what they now skip.
	next := "/app/phrases?done=filtered"
	if d.deps.Window != nil {
		next = "/app/phrases/" + id + "/filters?done=saved"
	}
	http.Redirect(w, r, next, http.StatusSeeOther)
}

// filterSummary says briefly what f skips, a line each, for the phrase
// list.
func filterSummary(f core.PhraseFilters) []string {
	var out []string
	quoted := func(l []string) string {
		q := make([]string, len(l))
		for i, s := range l {
			q[i] = "“" + s + "”"
		}
		return strings.Join(q, ", ")
	}
	if len(f.Exclude) > 0 {
		out = append(out, "skips "+quoted(f.Exclude))
	}
	if len(f.Require) > 0 {
		out = append(out, "needs "+quoted(f.Require))
	}
	if len(f.ExcludeAuthors) > 0 {
		out = append(out, "skips authors "+quoted(f.ExcludeAuthors))
	}
	if len(f.ExcludeCommunities) > 0 {
		out = append(out, "skips r/"+strings.Join(f.ExcludeCommunities, ", r/"))
	}
	atLeast := func(n int, noun string) string {
		if n != 1 {
			noun += "s"
		}
		return fmt.Sprintf("at least %d %s", n, noun)
	}
	if f.MinLikes > 0 {
		out = append(out, atLeast(f.MinLikes, "like"))
	}
	if f.MinComments > 0 {
		out = append(out, atLeast(f.MinComments, "comment"))
	}
	if f.TitleOnly {
		out = append(out, "title only")
	}
	return out
}

// confirmDeletePhrase asks before deleting, saying what goes with it.
func (d *Dashboard) confirmDeletePhrase(w http.ResponseWriter, r *http.Request) {
	p, err := d.deps.Phrases.Get(r.Context(), session(r).OwnerID, r.PathValue("id"))
	if err != nil {
		d.fail(w, r, err)
		return
	}
	d.render(w, r, http.StatusOK, "delete", &deleteView{layout: layout{Title: "Delete “" + p.Phrase + "”", Nav: "phrases", SignedIn: true},
		Phrase: d.phraseView(p)})
}

func (d *Dashboard) deletePhrase(w http.ResponseWriter, r *http.Request) {
	if err := d.deps.Phrases.Delete(r.Context(), session(r).OwnerID, r.PathValue("id")); err != nil {
		d.fail(w, r, err)
		return
	}
	http.Redirect(w, r, "/app/phrases?done=deleted", http.StatusSeeOther)
}
