package dashboard

import (
	"bytes"
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
}

// notices word what a page says after an action sent the browser back
// to it, by page and action: "page/done".
var notices = map[string]string{
	"accounts/resolved":  "Marked resolved: the account is healthy again.",
	"keys/revoked":       "Key revoked: requests with it are refused from now on.",
	"notifications/read": "Marked read.",
	"phrases/added":      "Phrase added.",
	"phrases/deleted":    "Phrase deleted, with its matches.",
	"phrases/paused":     "Phrase paused.",
	"phrases/resumed":    "Phrase listening again.",
	"webhook/saved":      "Settings saved.",
	"webhook/on":         "Webhook switched on: messages queued meanwhile go out now.",
	"webhook/off":        "Webhook switched off: new matches wait in its queue.",
	"webhook/redeliver":  "Queued to be sent again.",
}

// doneNotice is the notice of page after the action its address names
// (?done=): the words are the page's own, so an address cannot make a
// page say anything else.
func doneNotice(r *http.Request, page string) string {
	return notices[page+"/"+r.URL.Query().Get("done")]
}

// base lets render reach the layout of any page view passed by pointer.
func (l *layout) base() *layout { return l }

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// render writes the page in one write with its length, or a plain error
// if the template fails before anything is sent.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, status int, page string, v any) {
	set, ok := d.pages.sets[page]
	if !ok {
		http.Error(w, "no such page", http.StatusInternalServerError)
		return
	}
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	var err error
	if lv, ok := v.(interface{ base() *layout }); ok {
		err = d.renderInLayout(buf, set, lv.base(), v, r)
	} else {
		err = set.ExecuteTemplate(buf, "layout", v)
	}
	if err != nil {
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

// renderInLayout writes the page's content between the layout's head
// and foot, which come from the fragment cache: the head is the same
// for every page of a section with the same unread count, and
// html/template evaluates its navigation by reflection on every page.
func (d *Dashboard) renderInLayout(buf *bytes.Buffer, set *template.Template, l *layout, v any, r *http.Request) error {
	if l.SignedIn {
		l.Unread = d.unread(r)
	}
	var head template.HTML
	var err error
	if l.Problem == "" {
		head, err = d.cachedPartial("head", *l, func() any { return l })
	} else {
		// A problem's words vary; they are not kept.
		var b bytes.Buffer
		err = d.partial(&b, "head", l)
		head = template.HTML(b.String())
	}
	if err != nil {
		return err
	}
	buf.WriteString(string(head))
	buf.WriteByte('\n')
	if err := set.ExecuteTemplate(buf, "content", v); err != nil {
		return err
	}
	buf.WriteByte('\n')
	foot, err := d.cachedPartial("foot", nil, func() any { return nil })
	buf.WriteString(string(foot))
	return err
}

// fragments caches the markup of matches by everything a match shows,
// so a match unchanged since it was last shown costs a lookup: an
// owner's inbox shows the same matches again and again (reloads, pages,
// filters), and html/template, reflective, was most of a page's time.
// It holds at most Config.Fragments entries and starts afresh when full.
type fragments struct {
	mu sync.Mutex
	m  map[fragmentKey]template.HTML
}

// fragmentKey names a rendered partial by the partial and everything
// its markup depends on.
type fragmentKey struct {
	name string
	key  any // comparable
}

// matchKey is what a match's markup can change by. The rest of a match
// (its post, phrase, platform and time) never changes after it is made,
// and its score is set once, so the id stands for all of that.
type matchKey struct {
	ID                      string
	Read, Starred, Archived bool
	Scored                  bool
	When                    string
}

// matchHTML returns the markup of one match, from the cache or rendered
// by the "match" template. The key is read off the item and the view
// built only on a miss: a page of cached matches parses no address and
// formats no time.
func (d *Dashboard) matchHTML(it ports.InboxItem, now time.Time) (template.HTML, error) {
	m, t := it.Match, it.Triage
	k := matchKey{m.ID, t.Read, t.Starred, t.Archived, m.Score != nil, ago(now, m.CreatedAt)}
	return d.cachedPartial("match", k, func() any { return d.matchView(it, k.When) })
}

// cachedPartial returns the partial name rendered with the view that
// view returns, from the cache when key, which must determine the view,
// was rendered before.
func (d *Dashboard) cachedPartial(name string, key any, view func() any) (template.HTML, error) {
	k := fragmentKey{name, key}
	if d.cfg.Fragments < 0 {
		var b bytes.Buffer
		err := d.partial(&b, name, view())
		return template.HTML(b.String()), err
	}
	d.frags.mu.Lock()
	h, ok := d.frags.m[k]
	d.frags.mu.Unlock()
	if ok {
		return h, nil
	}
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	if err := d.partial(buf, name, view()); err != nil {
		return "", err
	}
	// The template escaped every field for its place: this is safe markup.
	h = template.HTML(buf.String())
	d.frags.mu.Lock()
	if len(d.frags.m) >= d.cfg.Fragments {
		clear(d.frags.m)
	}
	d.frags.m[k] = h
	d.frags.mu.Unlock()
	return h, nil
}

// partial renders one named partial into b.
func (d *Dashboard) partial(b *bytes.Buffer, name string, v any) error {
	return d.pages.sets["partials"].ExecuteTemplate(b, name, v)
}

// statuses maps error kinds to the status of the page that shows them.
var statuses = map[core.Kind]int{
	core.KindInvalid:        http.StatusBadRequest,
	core.KindInvalidRequest: http.StatusBadRequest,
	core.KindUnauthorized:   http.StatusUnauthorized,
	core.KindForbidden:      http.StatusForbidden,
	core.KindPlanLimit:      http.StatusForbidden,
	core.KindNotFound:       http.StatusNotFound,
	core.KindConflict:       http.StatusConflict,
	core.KindRateLimited:    http.StatusTooManyRequests,
	core.KindUnavailable:    http.StatusServiceUnavailable,
}

func statusOf(err error) int {
	if s, ok := statuses[core.KindOf(err)]; ok {
		return s
	}
	return http.StatusInternalServerError
}

type errorView struct {
	layout
	Message string
}

// fail shows an error page; internal errors are logged and never shown.
func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	if status == http.StatusInternalServerError {
		d.cfg.Logger.ErrorContext(r.Context(), "dashboard request failed", "path", r.URL.Path, "err", err)
	}
	_, signedIn := r.Context().Value(sessionKey{}).(core.Session)
	d.render(w, r, status, "error", &errorView{layout: layout{Title: http.StatusText(status), SignedIn: signedIn}, Message: core.Message(err)})
}

// matchView is a match as a page shows it. Every field is plain text;
// the template escapes it for its place.
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
	Title    string
	Text     string
	URL      string // empty unless http or https
	When     string
	WhenISO  string
	Created  string // the cursor of the match
	Read     bool
	Starred  bool
	Archived bool
}

// matchView is the view of a match shown when, as ago words it.
func (d *Dashboard) matchView(it ports.InboxItem, when string) matchView {
	m := it.Match
	v := matchView{
		ID: m.ID, Phrase: m.Phrase, Platform: string(m.Platform), Author: m.Post.Author, Title: m.Post.Title,
		Text: m.Post.Text, URL: safeURL(m.Post.URL), When: when, WhenISO: m.CreatedAt.Format(time.RFC3339),
		Created: strconv.FormatFloat(core.Millis(m.CreatedAt), 'f', -1, 64),
		Read:    it.Triage.Read, Starred: it.Triage.Starred, Archived: it.Triage.Archived,
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
