package dashboard

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Every form and query string the dashboard reads is parsed here.

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
	Platform string
	MinScore string
	Intent   string
	Phrase   string
	Show     string
	Before   string
}

func parseFilter(q url.Values) filterForm {
	f := filterForm{
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
	for _, kv := range [][2]string{{"platform", f.Platform}, {"min_score", f.MinScore}, {"intent", f.Intent}, {"phrase", f.Phrase}} {
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
// field; the ranges themselves are app's to check.
func (f filterForm) query() (ports.InboxQuery, error) {
	q := ports.InboxQuery{Platform: core.Platform(f.Platform), Intent: core.Intent(f.Intent), PhraseID: f.Phrase}
	if f.MinScore != "" {
		n, err := strconv.Atoi(f.MinScore)
		if err != nil {
			return q, core.Errorf(core.KindInvalid, "min_score must be a whole number from 0 to 100")
		}
		q.MinScore = &n
	}
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

// bulkForm is a triage action on the selected matches.
type bulkForm struct {
	IDs    []string
	Change core.TriageChange
	Return string
}

// triageActions maps an action's name to its change.
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

func parseBulk(r *http.Request) (bulkForm, error) {
	if err := r.ParseForm(); err != nil {
		return bulkForm{}, core.Errorf(core.KindInvalid, "the form could not be read")
	}
	f := bulkForm{IDs: r.PostForm["id"], Return: returnTo(r.PostForm.Get("return"), "/app/")}
	c, ok := triageChange(r.PostForm.Get("action"))
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
}

func parsePhrase(r *http.Request) (phraseForm, error) {
	if err := r.ParseForm(); err != nil {
		return phraseForm{}, core.Errorf(core.KindInvalid, "the form could not be read")
	}
	return phraseForm{
		Platform:  r.PostForm.Get("platform"),
		Phrase:    r.PostForm.Get("phrase"),
		Community: r.PostForm.Get("community"),
	}, nil
}

// field names the form field an error of adding f is about, asking core
// for each field's rule in the order NewPhrase checks them.
func (f phraseForm) field(err error) string {
	switch {
	case core.IsKind(err, core.KindPlanLimit):
		return "platform"
	case !core.IsKind(err, core.KindInvalid):
		return "phrase"
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

// loginForm asks for a sign-in link.
type loginForm struct{ Email string }

func parseLogin(r *http.Request) (loginForm, error) {
	if err := r.ParseForm(); err != nil {
		return loginForm{}, core.Errorf(core.KindInvalid, "the form could not be read")
	}
	return loginForm{Email: strings.TrimSpace(r.PostForm.Get("email"))}, nil
}

// keyForm makes an API key (name and scopes) or an ingest key (name).
type keyForm struct {
	Name   string
	Scopes []core.Scope
}

func parseKey(r *http.Request) (keyForm, error) {
	if err := r.ParseForm(); err != nil {
		return keyForm{}, core.Errorf(core.KindInvalid, "the form could not be read")
	}
	f := keyForm{Name: strings.TrimSpace(r.PostForm.Get("name"))}
	for _, v := range r.PostForm["scope"] {
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

func parseWebhook(r *http.Request) (webhookForm, error) {
	if err := r.ParseForm(); err != nil {
		return webhookForm{}, core.Errorf(core.KindInvalid, "the form could not be read")
	}
	return webhookForm{
		URL:       strings.TrimSpace(r.PostForm.Get("url")),
		MinScore:  strings.TrimSpace(r.PostForm.Get("min_score")),
		Platforms: r.PostForm["platform"],
	}, nil
}

// minScore reads the minimum score; empty means the default.
func (f webhookForm) minScore() (*int, error) {
	if f.MinScore == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(f.MinScore)
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

// activeForm switches a webhook on or off.
func parseActive(r *http.Request) (bool, error) {
	if err := r.ParseForm(); err != nil {
		return false, core.Errorf(core.KindInvalid, "the form could not be read")
	}
	switch r.PostForm.Get("active") {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, core.Errorf(core.KindInvalid, "active must be true or false")
}
