package dashboard

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Every form and query string the dashboard reads is parsed here: a
// handler reads the request's form with readForm, and a parser turns the
// values into the form's struct, checking only what the services do not
// (that a number is a number, that a choice is one of the menu's).

// readForm reads a posted form. An unreadable one (a bad escape, a body
// over the limit) is KindInvalid.
func readForm(r *http.Request) (url.Values, error) {
	if err := r.ParseForm(); err != nil {
		return nil, core.Errorf(core.KindInvalid, "the form could not be read")
	}
	return r.PostForm, nil
}

// showValues are the views of the "Show" filter, in menu order.
var showValues = []struct{ value, label string }{
	{"inbox", "Inbox"},
	{"unread", "Unread"},
	{"read", "Read"},
	{"starred", "Starred"},
	{"archived", "Archived"},
	{"all", "All"},
}

// filterForm is the inbox filter as the URL carries it, so a filtered
// view can be bookmarked.
type filterForm struct {
	Q        string // the search, as typed
	Platform string
	MinScore string
	Intent   string
	Phrase   string
	Show     string
	Before   string
}

func parseFilter(q url.Values) filterForm {
	f := filterForm{
		Q:        strings.TrimSpace(q.Get("q")),
		Platform: strings.TrimSpace(q.Get("platform")),
		MinScore: strings.TrimSpace(q.Get("min_score")),
		Intent:   strings.TrimSpace(q.Get("intent")),
		Phrase:   strings.TrimSpace(q.Get("phrase")),
		Show:     strings.TrimSpace(q.Get("show")),
		Before:   strings.TrimSpace(q.Get("before")),
	}
	if f.Show == "" {
		f.Show = "inbox"
	}
	return f
}

// values returns the filter as a query string, leaving out defaults and
// the cursor.
func (f filterForm) values() url.Values {
	v := url.Values{}
	for _, kv := range [][2]string{{"q", f.Q}, {"platform", f.Platform}, {"min_score", f.MinScore}, {"intent", f.Intent}, {"phrase", f.Phrase}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	if f.Show != "inbox" {
		v.Set("show", f.Show)
	}
	return v
}

// query turns the filter into a page request. KindInvalid names the
// field; the ranges and the search itself are app's to check.
func (f filterForm) query() (ports.InboxQuery, error) {
	q := ports.InboxQuery{Platform: core.Platform(f.Platform), Intent: core.Intent(f.Intent), PhraseID: f.Phrase, Q: f.Q}
	n, err := parseMinScore(f.MinScore)
	if err != nil {
		return q, err
	}
	q.MinScore = n
	if f.Before != "" {
		b, err := strconv.ParseFloat(f.Before, 64)
		if err != nil {
			return q, core.Errorf(core.KindInvalid, "before must be the cursor of an older page")
		}
		q.Before = b
	}
	yes, no := true, false
	switch f.Show {
	case "inbox":
		q.Archived = &no
	case "unread":
		q.Archived, q.Read = &no, &no
	case "read":
		q.Read = &yes
	case "starred":
		q.Starred = &yes
	case "archived":
		q.Archived = &yes
	case "all":
	default:
		return q, core.Errorf(core.KindInvalid, "show must be one of inbox, unread, read, starred, archived, all")
	}
	return q, nil
}

// search is the filter's search as the page marks it: what app reads
// of it, nothing when it does not read (the page says why).
func (f filterForm) search() core.Search {
	s, _ := core.ParseSearch(f.Q)
	return s
}

// bulkForm is a triage action on the selected matches.
type bulkForm struct {
	IDs    []string
	Action string
	Change core.TriageChange
	Return string
}

// triageChange maps an action's name to its change.
func triageChange(action string) (core.TriageChange, bool) {
	yes, no := true, false
	switch action {
	case "read":
		return core.TriageChange{Read: &yes}, true
	case "unread":
		return core.TriageChange{Read: &no}, true
	case "star":
		return core.TriageChange{Starred: &yes}, true
	case "unstar":
		return core.TriageChange{Starred: &no}, true
	case "archive":
		return core.TriageChange{Archived: &yes}, true
	case "unarchive":
		return core.TriageChange{Archived: &no}, true
	}
	return core.TriageChange{}, false
}

func parseBulk(form url.Values) (bulkForm, error) {
	f := bulkForm{IDs: form["id"], Action: form.Get("action"), Return: returnTo(form.Get("return"), "/app/")}
	c, ok := triageChange(f.Action)
	if !ok {
		return f, core.Errorf(core.KindInvalid, "choose an action: read, unread, star, unstar, archive or unarchive")
	}
	if len(f.IDs) == 0 {
		return f, core.Errorf(core.KindInvalid, "select at least one match first")
	}
	f.Change = c
	return f, nil
}

// refererReturn is the page a match's form was on, to go back to
// without the page's script: the Referer, which the dashboard's policy
// sends within the site, kept to the dashboard and without the notice of
// an earlier bulk action.
func refererReturn(r *http.Request) string {
	u, err := url.Parse(r.Referer())
	if err != nil || u.Host != r.Host {
		return "/app/"
	}
	q := u.Query()
	q.Del("done")
	q.Del("n")
	ret := u.Path
	if len(q) > 0 {
		ret += "?" + q.Encode()
	}
	return returnTo(ret, "/app/")
}

// phraseForm is the form that adds a phrase.
type phraseForm struct {
	Platform  string
	Phrase    string
	Community string
	Filters   filtersForm
}

func parsePhrase(form url.Values) phraseForm {
	return phraseForm{
		Platform:  form.Get("platform"),
		Phrase:    form.Get("phrase"),
		Community: form.Get("community"),
		Filters:   parseFilters(form),
	}
}

// field names the form field an error of adding f is about, asking core
// for each field's rule in the order NewPhrase checks them; an error of
// the filters names its own field.
func (f phraseForm) field(err error) string {
	switch {
	case core.IsKind(err, core.KindPlanLimit):
		return "platform"
	case !core.IsKind(err, core.KindInvalid):
		return "phrase"
	}
	if name := filterField(err); name != "" {
		return name
	}
	p, perr := core.ParsePlatform("platform", f.Platform)
	if perr != nil {
		return "platform"
	}
	if _, perr := core.NormalizePhrase(f.Phrase); perr != nil {
		return "phrase"
	}
	if p == core.Reddit || strings.TrimSpace(f.Community) != "" {
		return "community"
	}
	return "phrase"
}

// filtersForm is a phrase's filters as the phrase forms carry them: each
// list one entry a line, the minimums as typed.
type filtersForm struct {
	Exclude            string
	Require            string
	ExcludeAuthors     string
	ExcludeCommunities string
	MinLikes           string
	MinComments        string
	TitleOnly          bool
}

func parseFilters(form url.Values) filtersForm {
	return filtersForm{
		Exclude:            form.Get("exclude"),
		Require:            form.Get("require"),
		ExcludeAuthors:     form.Get("exclude_authors"),
		ExcludeCommunities: form.Get("exclude_communities"),
		MinLikes:           strings.TrimSpace(form.Get("min_likes")),
		MinComments:        strings.TrimSpace(form.Get("min_comments")),
		TitleOnly:          form.Get("title_only") != "",
	}
}

// filtersFormOf is the form showing a phrase's filters.
func filtersFormOf(f core.PhraseFilters) filtersForm {
	count := func(n int) string {
		if n == 0 {
			return ""
		}
		return strconv.Itoa(n)
	}
	return filtersForm{
		Exclude: strings.Join(f.Exclude, "\n"), Require: strings.Join(f.Require, "\n"),
		ExcludeAuthors: strings.Join(f.ExcludeAuthors, "\n"), ExcludeCommunities: strings.Join(f.ExcludeCommunities, "\n"),
		MinLikes: count(f.MinLikes), MinComments: count(f.MinComments), TitleOnly: f.TitleOnly,
	}
}

// filters reads the form. Only a minimum that is not a whole number is
// refused here (KindInvalid naming it); the rest is core's to check.
func (f filtersForm) filters() (core.PhraseFilters, error) {
	out := core.PhraseFilters{Exclude: lines(f.Exclude), Require: lines(f.Require), ExcludeAuthors: lines(f.ExcludeAuthors),
		ExcludeCommunities: lines(f.ExcludeCommunities), TitleOnly: f.TitleOnly}
	for _, m := range []struct {
		name string
		in   string
		out  *int
	}{{"minLikes", f.MinLikes, &out.MinLikes}, {"minComments", f.MinComments, &out.MinComments}} {
		if m.in == "" {
			continue
		}
		n, err := strconv.Atoi(m.in)
		if err != nil {
			return out, core.Errorf(core.KindInvalid, "%s must be a whole number from 0 to %d", m.name, core.MaxFilterCount)
		}
		*m.out = n
	}
	return out, nil
}

// open reports whether the form has a filter set, so the add form shows
// its filters rather than folding them away.
func (f filtersForm) open() bool { return f != filtersForm{} }

// lines returns the lines of s that are not blank.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// filterFields are the filters' fields in the order of their messages'
// first word, longer names first where one begins another.
var filterFields = []string{"excludeAuthors", "excludeCommunities", "exclude", "require", "minLikes", "minComments"}

// filterField names the filter field a refusal of the filters is about
// (core names it first in its message), or "" for another refusal.
func filterField(err error) string {
	if !core.IsKind(err, core.KindInvalid) {
		return ""
	}
	msg := core.Message(err)
	for _, name := range filterFields {
		if strings.HasPrefix(msg, name+" ") {
			return name
		}
	}
	return ""
}

// loginForm asks for a sign-in link.
type loginForm struct{ Email string }

func parseLogin(form url.Values) loginForm {
	return loginForm{Email: strings.TrimSpace(form.Get("email"))}
}

// keyForm makes an API key (name and scopes) or an ingest key (name).
type keyForm struct {
	Name   string
	Scopes []core.Scope
}

// parseKey reads the form that makes a key of the kind. Its only error
// is an unknown scope (the name is the service's to check); an ingest key
// has no scopes, so its form's are not read.
func parseKey(form url.Values, kind core.KeyKind) (keyForm, error) {
	f := keyForm{Name: strings.TrimSpace(form.Get("name"))}
	if kind != core.APIKey {
		return f, nil
	}
	for _, v := range form["scope"] {
		sc := core.Scope(v)
		if !sc.Valid() {
			return f, core.Errorf(core.KindInvalid, "unknown scope %q: scopes are read, write:phrases, webhooks", v)
		}
		if !slices.Contains(f.Scopes, sc) {
			f.Scopes = append(f.Scopes, sc)
		}
	}
	return f, nil
}

// webhookForm makes a webhook, or changes one (then URL is unused).
type webhookForm struct {
	URL       string
	MinScore  string
	Platforms []string
}

func parseWebhook(form url.Values) webhookForm {
	return webhookForm{
		URL:       strings.TrimSpace(form.Get("url")),
		MinScore:  strings.TrimSpace(form.Get("min_score")),
		Platforms: form["platform"],
	}
}

// minScore reads the minimum score; empty means the default.
func (f webhookForm) minScore() (*int, error) { return parseMinScore(f.MinScore) }

// parseMinScore reads a minimum score of the inbox filter or a webhook
// form: nil when empty, KindInvalid unless a whole number. Its range is
// the service's to check.
func parseMinScore(s string) (*int, error) {
	if s == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return nil, core.Errorf(core.KindInvalid, "min_score must be a whole number from 0 to 100")
	}
	return &n, nil
}

// platforms is the list the form ticked: an empty list is an error the
// service names, never "unchanged".
func (f webhookForm) platforms() []string {
	if f.Platforms == nil {
		return []string{}
	}
	return f.Platforms
}

// field names the form field an error of saving f is about, asking core
// for each field's rule in the order the service checks them: the
// address, the score, the platforms. An address refused only for where
// it points (a private address) passes the syntax check here and is
// named last.
func (f webhookForm) field(err error, withURL bool) string {
	switch {
	case core.IsKind(err, core.KindConflict):
		return "url"
	case !core.IsKind(err, core.KindInvalid):
		return ""
	}
	if withURL {
		if _, uerr := core.CheckWebhookURL(f.URL, true); uerr != nil {
			return "url"
		}
	}
	if n, serr := f.minScore(); serr != nil || (n != nil && core.CheckWebhookMinScore(*n) != nil) {
		return "min_score"
	}
	if len(f.Platforms) == 0 {
		return "platforms"
	}
	for _, p := range f.Platforms {
		if _, perr := core.ParsePlatform("platforms", p); perr != nil {
			return "platforms"
		}
	}
	if withURL {
		return "url"
	}
	return "min_score"
}

// parseActive reads the form that switches a webhook on or off.
func parseActive(form url.Values) (bool, error) {
	switch form.Get("active") {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, core.Errorf(core.KindInvalid, "active must be true or false")
}

// parseOverlap reads the rotation's choice of overlap, in seconds: nil
// when none was sent (the service's default), KindInvalid unless a whole
// number. Its bounds are the service's to check.
func parseOverlap(form url.Values) (*time.Duration, error) {
	v := strings.TrimSpace(form.Get("overlap"))
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return nil, core.Errorf(core.KindInvalid, "overlap must be a whole number of seconds")
	}
	// Bounded before the conversion, so that a huge number stays past the
	// service's bound rather than wrap round into it.
	d := time.Duration(max(min(n, int64(core.MaxSecretOverlap/time.Second)+1), -1)) * time.Second
	return &d, nil
}

// replayForm is the range of a replay as the form's datetime-local
// fields give it, in UTC.
type replayForm struct {
	From string
	To   string
}

// replayLayouts are the forms a datetime-local field sends: minutes, or
// seconds when the browser's step allows them.
var replayLayouts = []string{"2006-01-02T15:04", "2006-01-02T15:04:05"}

func parseReplay(form url.Values) replayForm {
	return replayForm{From: strings.TrimSpace(form.Get("from")), To: strings.TrimSpace(form.Get("to"))}
}

// times reads the range: to may be left empty (the zero time: now).
// KindInvalid names the field whose value is not a time; whether the
// range is one is the service's to check.
func (f replayForm) times() (from, to time.Time, err error) {
	read := func(name, v string) (time.Time, error) {
		for _, layout := range replayLayouts {
			if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
				return t, nil
			}
		}
		return time.Time{}, core.Errorf(core.KindInvalid, "%s must be a date and time in UTC, such as 2026-11-26T10:00", name)
	}
	if from, err = read("from", f.From); err != nil {
		return
	}
	if f.To != "" {
		to, err = read("to", f.To)
	}
	return
}

// field names the form field an error of the replay is about.
func (f replayForm) field(err error) string {
	if !core.IsKind(err, core.KindInvalid) {
		return ""
	}
	if strings.HasPrefix(core.Message(err), "to ") {
		return "to"
	}
	return "from"
}
