package dashboard

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
)

// fakes: one owner, "own", signed in with the token "tok".

var tok = strings.Repeat("a", 43)

type fakeSessions struct{}

func (fakeSessions) RequestLink(context.Context, string, string) error { return nil }
func (fakeSessions) SignIn(context.Context, string) (string, core.Session, error) {
	return "", core.Session{}, core.Errorf(core.KindNotFound, "no")
}
func (fakeSessions) Authenticate(_ context.Context, t string) (core.Session, error) {
	if t != tok {
		return core.Session{}, core.Errorf(core.KindUnauthorized, "not signed in")
	}
	return core.Session{OwnerID: "own"}, nil
}
func (fakeSessions) SignOut(context.Context, string) error                  { return nil }
func (fakeSessions) SignOutEverywhere(context.Context, string) (int, error) { return 1, nil }
func (fakeSessions) Idle() time.Duration                                    { return time.Hour }

type fakeInbox struct{ items []ports.InboxItem }

func (f fakeInbox) List(_ context.Context, owner string, q ports.InboxQuery) (ports.InboxPage, error) {
	if q.MinScore != nil && (*q.MinScore < 0 || *q.MinScore > 100) {
		return ports.InboxPage{}, core.Errorf(core.KindInvalid, "min_score must be from 0 to 100")
	}
	return ports.InboxPage{Items: f.items}, nil
}
func (f fakeInbox) Changes(context.Context, string, ports.InboxQuery, time.Time, time.Time, int) ([]ports.InboxItem, []ports.InboxItem, error) {
	return nil, nil, nil
}
func (f fakeInbox) Set(_ context.Context, owner, id string, c core.TriageChange) (core.Triage, error) {
	return c.Apply(core.Triage{}), nil
}

// SetMany counts the ids among the owner's items, as the store does.
func (f fakeInbox) SetMany(_ context.Context, owner string, ids []string, c core.TriageChange) (int, error) {
	n := 0
	for _, id := range ids {
		for _, it := range f.items {
			if it.Match.ID == id {
				n++
				break
			}
		}
	}
	return n, nil
}

type fakeMatches struct{ m core.Match }

func (f fakeMatches) Get(context.Context, string, string) (core.Match, error) { return f.m, nil }

type fakePhrases struct{}

func (fakePhrases) AddWithFilters(context.Context, string, string, string, string, core.PhraseFilters, string) (core.Phrase, bool, error) {
	return core.Phrase{}, false, nil
}
func (fakePhrases) Update(context.Context, string, string, *string, core.PhraseFiltersChange) (core.Phrase, error) {
	return core.Phrase{}, nil
}
func (fakePhrases) Get(context.Context, string, string) (core.Phrase, error) {
	return core.Phrase{}, core.Errorf(core.KindNotFound, "phrase not found")
}
func (fakePhrases) List(context.Context, string, ports.PhraseFilter) ([]core.Phrase, error) {
	return []core.Phrase{{ID: "p1", Phrase: "acme", Platform: core.X, Status: core.Listening}}, nil
}
func (fakePhrases) SetStatus(context.Context, string, string, string) (core.Phrase, error) {
	return core.Phrase{}, nil
}
func (fakePhrases) Delete(context.Context, string, string) error { return nil }
func (fakePhrases) Plan(context.Context, string) (core.Plan, error) {
	return core.FreePlan(core.FreeLimits, core.Usage{}), nil
}

func item(i int, text, author, url string) ports.InboxItem {
	return ports.InboxItem{Match: core.Match{
		ID: fmt.Sprintf("m%d", i), Phrase: "acme", Platform: core.X, CreatedAt: time.Unix(1_700_000_000+int64(i), 0),
		Score: &core.Score{Value: 80, Intent: core.IntentBuying, Reason: "asks"},
		Post:  core.Post{Author: author, Text: text, URL: url},
	}}
}

func newTestDashboard(t testing.TB, items ...ports.InboxItem) *Dashboard {
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Sessions: fakeSessions{}, Inbox: fakeInbox{items: items}, Matches: fakeMatches{m: items[0].Match}, Phrases: fakePhrases{}})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func get(d *Dashboard, path string, signedIn bool) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", path, nil)
	if signedIn {
		r.AddCookie(&http.Cookie{Name: cookieName, Value: tok})
	}
	w := httptest.NewRecorder()
	d.ServeHTTP(w, r)
	return w
}

func TestPagesEscapeStrangersText(t *testing.T) {
	d := newTestDashboard(t,
		item(1, `<script>alert(1)</script>`, `"><img src=x onerror=alert(2)>`, "javascript:alert(3)"),
		item(2, "plain", "ada", "https://x.com/2"))
	w := get(d, "/app/", true)
	body := w.Body.String()
	if w.Code != 200 {
		t.Fatalf("status %d", w.Code)
	}
	for _, bad := range []string{"<script>alert", "<img src=x", `href="javascript:`} {
		if strings.Contains(body, bad) {
			t.Fatalf("the page carries %q", bad)
		}
	}
	for _, good := range []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&#34;&gt;&lt;img src=x onerror=alert(2)&gt;", `href="https://x.com/2"`} {
		if !strings.Contains(body, good) {
			t.Fatalf("the page lacks %q", good)
		}
	}
	if strings.Count(body, `class="open"`) != 1 {
		t.Fatal("a post with a javascript: address got a link")
	}
}

func TestSecurityHeadersAndSignIn(t *testing.T) {
	d := newTestDashboard(t, item(1, "t", "a", "https://x.com/1"))
	for _, path := range []string{"/app/", "/app/login", "/app/static/app.css", "/app/nope", "/"} {
		w := get(d, path, false)
		h := w.Header()
		if !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'") || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%s: headers %v", path, h)
		}
	}
	if w := get(d, "/app/phrases", false); w.Code != 303 || w.Header().Get("Location") != "/app/login" {
		t.Fatalf("signed out: %d %s", w.Code, w.Header().Get("Location"))
	}
	if w := get(d, "/", false); w.Code != 303 || w.Header().Get("Location") != "/app/" {
		t.Fatalf("GET /: %d %s", w.Code, w.Header().Get("Location"))
	}
	if w := get(d, "/app/static/app.js", false); w.Header().Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Fatalf("script type %q", w.Header().Get("Content-Type"))
	}
	// Cross-origin writes are refused before any handler runs.
	r := httptest.NewRequest("POST", "/app/matches/m1", strings.NewReader("action=archive"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "cross-site")
	r.AddCookie(&http.Cookie{Name: cookieName, Value: tok})
	w := httptest.NewRecorder()
	d.ServeHTTP(w, r)
	if w.Code != 403 {
		t.Fatalf("cross-site POST: %d", w.Code)
	}
}

// A bulk action says how many of the owner's matches it reached, not
// how many ids the form named: another owner's id reaches none.
func TestBulkCountsWhatChanged(t *testing.T) {
	d := newTestDashboard(t, item(1, "t", "a", "https://x.com/1"))
	own := d.deps.Inbox.(fakeInbox).items[0].Match.ID
	for _, tc := range []struct {
		ids  []string
		want string
	}{{[]string{own, "someone-elses"}, "1"}, {[]string{"someone-elses"}, "0"}} {
		form := url.Values{"action": {"star"}, "id": tc.ids}
		r := httptest.NewRequest("POST", "/app/matches/bulk", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.AddCookie(&http.Cookie{Name: cookieName, Value: tok})
		w := httptest.NewRecorder()
		d.ServeHTTP(w, r)
		loc, err := url.Parse(w.Header().Get("Location"))
		if w.Code != 303 || err != nil || loc.Query().Get("n") != tc.want {
			t.Fatalf("ids %v: %d %q, want n=%s", tc.ids, w.Code, w.Header().Get("Location"), tc.want)
		}
	}
}

func TestReturnTo(t *testing.T) {
	for in, want := range map[string]string{
		"/app/?show=unread": "/app/?show=unread", "/app/phrases": "/app/phrases", "": "/app/",
		"//evil.example/app/": "/app/", "https://evil.example/app/": "/app/", "/app\\..": "/app/",
		"/apx/": "/app/", "/app/\n": "/app/", "javascript:alert(1)": "/app/",
	} {
		if got := returnTo(in, "/app/"); got != want {
			t.Errorf("returnTo(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBulkNotice(t *testing.T) {
	if got := bulkNotice(url.Values{"done": {"archive"}, "n": {"2"}}); got != "2 matches archived." {
		t.Fatalf("%q", got)
	}
	if got := bulkNotice(url.Values{"done": {"star"}, "n": {"0"}}); got != "0 matches starred." {
		t.Fatalf("%q", got)
	}
	for _, q := range []url.Values{{"done": {"<b>hi</b>"}, "n": {"1"}}, {"done": {"read"}, "n": {"-1"}}, {"done": {"read"}, "n": {"x"}}} {
		if got := bulkNotice(q); got != "" {
			t.Fatalf("bulkNotice(%v) = %q", q, got)
		}
	}
}

// BenchmarkInboxRender renders the inbox page of 25 matches from fakes,
// and reports its allocations and the process's peak heap while it
// renders (peak-heap-MB).
func BenchmarkInboxRender(b *testing.B) {
	items := make([]ports.InboxItem, 25)
	for i := range items {
		items[i] = item(i, "We have used acme for two years and the pricing keeps going up. Any alternatives that handle invoices?", "author", "https://x.com/1")
	}
	d := newTestDashboard(b, items...)
	b.ReportAllocs()
	stop := peakmem.MeasureHeap(b)
	b.ResetTimer() // the collection MeasureHeap starts with is not a page's
	for range b.N {
		get(d, "/app/", true)
	}
	stop()
}

// fakeNotifications has a count of unread notifications a test sets.
type fakeNotifications struct{ unread *int }

func (f fakeNotifications) List(context.Context, string, int) ([]core.Notification, int, error) {
	return nil, *f.unread, nil
}
func (f fakeNotifications) Unread(context.Context, string) (int, error)    { return *f.unread, nil }
func (f fakeNotifications) MarkRead(context.Context, string, string) error { return nil }
func (f fakeNotifications) MarkAllRead(context.Context, string) (int, error) {
	return 0, nil
}

// The layout's head follows the unread count and the section, and shows
// a problem.
func TestLayoutHead(t *testing.T) {
	unread := 2
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Sessions: fakeSessions{}, Inbox: fakeInbox{items: []ports.InboxItem{item(1, "t", "a", "https://x.com/1")}},
			Phrases: fakePhrases{}, Notifications: fakeNotifications{&unread}})
	if err != nil {
		t.Fatal(err)
	}
	badge := `<span class="badge" id="unread-count">`
	inbox := `<a href="/app/" aria-current="page">Inbox</a>`
	phrases := `<a href="/app/phrases" aria-current="page">Phrases</a>`
	for _, c := range []struct {
		path, want, not string
		unread          int
	}{
		{"/app/", badge + "2<", phrases, 2},
		{"/app/", inbox, badge, 0},
		{"/app/", badge + "3<", "", 3},
		{"/app/phrases", phrases, inbox, 3},
		{"/app/?min_score=200", `<p class="problem" role="alert">min_score must be from 0 to 100</p>`, "", 3},
		{"/app/", inbox, "problem", 3},
	} {
		unread = c.unread
		body := get(d, c.path, true).Body.String()
		if !strings.Contains(body, c.want) || (c.not != "" && strings.Contains(body, c.not)) {
			t.Fatalf("%s with %d unread: want %q without %q in\n%s", c.path, c.unread, c.want, c.not, body)
		}
	}
}

// After "Mark all read" the page says how many were marked, a count
// the redirect carries; an address with anything but a count there
// makes the page say nothing, as a bulk action's notice does.
func TestNotificationsReadAllNotice(t *testing.T) {
	unread := 0
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		Deps{Sessions: fakeSessions{}, Inbox: fakeInbox{}, Phrases: fakePhrases{}, Notifications: fakeNotifications{&unread}})
	if err != nil {
		t.Fatal(err)
	}
	notice := `<p class="notice" role="status">`
	if body := get(d, "/app/notifications?done=all&n=3", true).Body.String(); !strings.Contains(body, notice+"3 marked read.</p>") {
		t.Fatalf("after marking 3 read:\n%s", body)
	}
	for _, q := range []string{"done=all&n=-40", "done=all&n=lots", "done=all"} {
		if body := get(d, "/app/notifications?"+q, true).Body.String(); strings.Contains(body, notice) {
			t.Fatalf("?%s makes the page say:\n%s", q, body)
		}
	}
}
