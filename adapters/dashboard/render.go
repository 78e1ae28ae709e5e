package dashboard

import (
	"bytes"
	"context"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/httpstatus"
	"github.com/earshothq/earshot/ports"
)

//go:embed templates/*.html
var templateFS embed.FS

// pages holds one template set per page, each the layout plus the page,
// and the partials the live view renders alone.
type pages struct {
	sets map[string]*template.Template
}

func loadPages() (*pages, error) {
	base, err := template.New("").ParseFS(templateFS, "templates/layout.html", "templates/partials.html")
	if err != nil {
		return nil, err
	}
	files, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	p := &pages{sets: map[string]*template.Template{"partials": base}}
	for _, f := range files {
		name := strings.TrimSuffix(strings.TrimPrefix(f, "templates/"), ".html")
		if name == "layout" || name == "partials" {
			continue
		}
		set, err := template.Must(base.Clone()).ParseFS(templateFS, f)
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", name, err)
		}
		p.sets[name] = set
	}
	return p, nil
}

// layout is what every page shows around its content.
type layout struct {
	Title    string
	Nav      string // the active section: inbox, phrases, plan
	SignedIn bool
	Notice   string // a confirmation, shown politely
	Problem  string // an error, announced at once
	Unread   int    // unread notifications, shown in the navigation
	Trends   bool   // the trends page is offered, and linked to
}

// notices word what a page says after an action sent the browser back
// to it, by page and action: "page/done".
var notices = map[string]string{
	"accounts/resolved":   "Marked resolved: the account is healthy again.",
	"keys/revoked":        "Key revoked: requests with it are refused from now on.",
	"notifications/read":  "Marked read.",
	"phrases/added":       "Phrase added.",
	"phrases/filling":     "Phrase added. The posts of the last days it matches are being added to your inbox, marked “found in recent posts”.",
	"filters/saved":       "Filters saved: they apply from the next post read.",
	"filters/applied":     "The matches these filters skip are archived. Undo below.",
	"filters/appliednone": "No match of those read is skipped by these filters: nothing was archived.",
	"filters/restored":    "The archived matches are back in the inbox.",
	"phrases/deleted":     "Phrase deleted, with its matches.",
	"phrases/paused":      "Phrase paused.",
	"phrases/resumed":     "Phrase listening again.",
	"phrases/filtered":    "Filters saved: they apply from the next post read.",
	"webhook/saved":       "Settings saved.",
	"webhook/on":          "Webhook switched on: messages queued meanwhile go out now.",
	"webhook/off":         "Webhook switched off: new matches wait in its queue.",
	"webhook/redeliver":   "Queued to be sent again.",
	"channel/saved":       "Settings saved.",
	"channel/destination": "Destination changed.",
	"channel/on":          "Channel switched on: messages queued meanwhile go out now.",
	"channel/off":         "Channel switched off: nothing goes to it until it is on again.",
	"channel/redeliver":   "Queued to be sent again.",

	// An application that read only the phrase's newest matches: older
	// ones the filters skip stay in the inbox.
	"filters/appliednewest": "The matches these filters skip, among the newest read, are archived; older ones were not read. Undo below.",
}

// countedNotices word, by the key of notices, a notice that names the
// count its action passed as ?n= (%d).
var countedNotices = map[string]string{
	"filters/appliednewest": "The matches these filters skip, among the newest %d read, are archived; older ones were not read. Undo below.",
}

// doneNotice is the notice of page after the action its address names
// (?done=): the words are the page's own, so an address cannot make a
// page say anything else. A count (?n=) is taken only as a positive
// number; without one, the notice is the words that name none.
func doneNotice(r *http.Request, page string) string {
	q := r.URL.Query()
	key := page + "/" + q.Get("done")
	if words, ok := countedNotices[key]; ok {
		if n, err := strconv.Atoi(q.Get("n")); err == nil && n > 0 {
			return fmt.Sprintf(words, n)
		}
	}
	return notices[key]
}

// base lets render reach the layout of any page view passed by pointer.
func (l *layout) base() *layout { return l }

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// render writes the page in one write with its length, or a plain error
// if the template fails before anything is sent. A signed-in page's
// layout shows the owner's unread notifications.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, status int, page string, v any) {
	set, ok := d.pages.sets[page]
	if !ok {
		http.Error(w, "no such page", http.StatusInternalServerError)
		return
	}
	if lv, ok := v.(interface{ base() *layout }); ok && lv.base().SignedIn {
		lv.base().Unread = d.unread(r)
		lv.base().Trends = d.deps.Trends != nil
	}
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	if err := set.ExecuteTemplate(buf, "layout", v); err != nil {
		d.cfg.Logger.ErrorContext(r.Context(), "rendering a page failed", "page", page, "err", err)
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// matchHTML returns the markup of one of owner's matches shown at now,
// for the pieces of a page that the script swaps in (a triaged match, a
// live one), with what search finds marked. The template escapes every
// field for its place (and highlight the marked ones): this is safe
// markup.
func (d *Dashboard) matchHTML(ctx context.Context, owner string, it ports.InboxItem, now time.Time, search core.Search) (template.HTML, error) {
	community := ""
	if it.Match.Platform == core.Reddit {
		// A reddit match's community is its phrase's: ingest and the
		// reader match a post only against its own community's phrases.
		if p, err := d.deps.Phrases.Get(ctx, owner, it.Match.PhraseID); err == nil {
			community = p.Community
		}
	}
	var b bytes.Buffer
	err := d.partial(&b, "match", d.matchView(it, ago(now, it.Match.CreatedAt), community, search))
	return template.HTML(b.String()), err
}

// partial renders one named partial into b.
func (d *Dashboard) partial(b *bytes.Buffer, name string, v any) error {
	return d.pages.sets["partials"].ExecuteTemplate(b, name, v)
}

// statusOf is the status of the page that shows err, from the table
// every HTTP edge shares.
func statusOf(err error) int { return httpstatus.Of(err) }

// statusLogged is the status of the page that shows err, having logged
// err when it is internal: a page says only "internal error", so the log
// is where the reason is.
func (d *Dashboard) statusLogged(r *http.Request, err error) int {
	status := statusOf(err)
	if status == http.StatusInternalServerError {
		d.cfg.Logger.ErrorContext(r.Context(), "dashboard request failed", "path", loggedPath(r.URL.Path), "err", err)
	}
	return status
}

// loggedPath is path as the log may show it: a segment of a token's
// form (a sign-in link's, an address confirmation's) is written as
// {token}, since whoever reads the log could use the link. It is the
// server's request log rule (httpapi's loggedPath), over the same
// core.WellFormedToken; an adapter may not import another adapter.
func loggedPath(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		if core.WellFormedToken(s) {
			segs[i] = "{token}"
		}
	}
	return strings.Join(segs, "/")
}

type errorView struct {
	layout
	Message string
}

// fail shows an error page; internal errors are logged and never shown.
func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := d.statusLogged(r, err)
	_, signedIn := r.Context().Value(sessionKey{}).(core.Session)
	d.render(w, r, status, "error", &errorView{layout: layout{Title: http.StatusText(status), SignedIn: signedIn}, Message: core.Message(err)})
}

// matchView is a match as a page shows it. Every field is plain text,
// which the template escapes for its place, but TitleHTML and TextHTML:
// the title and text escaped by highlight, with the phrase and the
// search marked.
type matchView struct {
	ID       string
	Phrase   string
	Platform string
	Scored   bool
	Score    int
	Band     string // high, mid, low: the score's colour
	Intent   string
	Reason   string
	Author   string
	// Community is the group the post was read in (the subreddit), empty
	// where the platform has none.
	Community string
	Title     string
	Text      string
	TitleHTML template.HTML
	TextHTML  template.HTML
	URL       string // empty unless http or https
	When      string
	WhenISO   string
	// Posted and PostedISO are when the post was made, empty when the
	// platform did not say.
	Posted    string
	PostedISO string
	Created   string // the cursor of the match
	Read      bool
	Starred   bool
	Archived  bool
	// Backfilled marks a match found in the recent posts when its phrase
	// was added.
	Backfilled bool
}

// matchView is the view of a match shown when, as ago words it, read
// in community (empty where there is none), with its phrase and what
// search finds marked in its title and text.
func (d *Dashboard) matchView(it ports.InboxItem, when, community string, search core.Search) matchView {
	m := it.Match
	v := matchView{
		ID: m.ID, Phrase: m.Phrase, Platform: string(m.Platform), Author: m.Post.Author, Title: m.Post.Title, Community: community,
		Text: m.Post.Text, TitleHTML: highlight(m.Post.Title, m.Phrase, search), TextHTML: highlight(m.Post.Text, m.Phrase, search),
		URL: safeURL(m.Post.URL), When: when, WhenISO: m.CreatedAt.Format(time.RFC3339),
		Created: strconv.FormatFloat(core.Millis(m.CreatedAt), 'f', -1, 64),
		Read:    it.Triage.Read, Starred: it.Triage.Starred, Archived: it.Triage.Archived, Backfilled: m.Backfilled,
	}
	if !m.Post.PostedAt.IsZero() {
		v.Posted, v.PostedISO = ago(d.cfg.Now(), m.Post.PostedAt), m.Post.PostedAt.UTC().Format(time.RFC3339)
	}
	if m.Score != nil {
		v.Scored, v.Score, v.Intent, v.Reason = true, m.Score.Value, string(m.Score.Intent), m.Score.Reason
		switch {
		case v.Score >= 70:
			v.Band = "high"
		case v.Score >= 40:
			v.Band = "mid"
		default:
			v.Band = "low"
		}
	}
	return v
}

// safeURL keeps a post's address only when it is http or https: a link
// the dashboard shows never runs script.
func safeURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ""
	}
	return u.String()
}

// ago says how long before now t was, as a person would.
func ago(now, t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min ago"
	case d < 24*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + " h ago"
	case d < 7*24*time.Hour:
		return strconv.Itoa(int(d/(24*time.Hour))) + " d ago"
	case t.Year() == now.Year():
		return t.Format("2 Jan")
	default:
		return t.Format("2 Jan 2006")
	}
}
