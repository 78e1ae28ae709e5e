package dashboard

import (
	"context"
	"encoding/csv"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// searchInbox is an inbox that checks q as app does and records the
// query it was asked; its export yields its items in pages of two,
// waiting on hold (when set) before the first, and fails after them
// with fail (when set).
type searchInbox struct {
	fakeInbox
	got  *ports.InboxQuery
	hold chan struct{}
	fail error
}

func (f searchInbox) List(ctx context.Context, owner string, q ports.InboxQuery) (ports.InboxPage, error) {
	*f.got = q
	if _, err := core.ParseSearch(q.Q); err != nil {
		return ports.InboxPage{}, err
	}
	return f.fakeInbox.List(ctx, owner, q)
}

func (f searchInbox) Export(_ context.Context, _ string, q ports.InboxQuery) (iter.Seq2[[]ports.InboxItem, error], error) {
	*f.got = q
	if _, err := core.ParseSearch(q.Q); err != nil {
		return nil, err
	}
	return func(yield func([]ports.InboxItem, error) bool) {
		if f.hold != nil {
			<-f.hold
		}
		for i := 0; i < len(f.items); i += 2 {
			if !yield(f.items[i:min(i+2, len(f.items))], nil) {
				return
			}
		}
		if f.fail != nil {
			yield(nil, f.fail)
		}
	}, nil
}

func searchDashboard(t *testing.T, inbox searchInbox, exports bool) *Dashboard {
	t.Helper()
	deps := Deps{Sessions: fakeSessions{}, Inbox: inbox, Matches: fakeMatches{}, Phrases: fakePhrases{}}
	if exports {
		deps.Exports = inbox
	}
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now: func() time.Time { return time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC) }}, deps)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The inbox's search box sends q with the other filters; the page keeps
// it in the box, in the pager's and the live view's addresses and in the
// download links, and marks the phrase and the search's words in each
// post, a stranger's markup staying text.
func TestInboxSearch(t *testing.T) {
	var got ports.InboxQuery
	items := []ports.InboxItem{
		item(1, `Is Acme worth it? <script>alert("pricing")</script> pricing`, "ada", "https://x.com/1"),
		item(2, "acme pricing, again", "bob", "https://x.com/2"),
	}
	items[0].Match.Post.Title = "<b>Acme</b> pricing"
	d := searchDashboard(t, searchInbox{fakeInbox: fakeInbox{items: items}, got: &got}, true)
	w := get(d, `/app/?q=pricing+-spam+%22%3Cx%3E%22&platform=x`, true)
	body := w.Body.String()
	if w.Code != 200 {
		t.Fatalf("status %d\n%s", w.Code, body)
	}
	if got.Q != `pricing -spam "<x>"` || got.Platform != core.X {
		t.Fatalf("the inbox was asked %+v", got)
	}
	for _, want := range []string{
		`<input id="f-q" name="q" type="search" maxlength="200" value="pricing -spam &#34;&lt;x&gt;&#34;"`,
		`<h2>&lt;b&gt;<mark>Acme</mark>&lt;/b&gt; <mark>pricing</mark></h2>`,
		`Is <mark>Acme</mark> worth it? &lt;script&gt;alert(&#34;<mark>pricing</mark>&#34;)&lt;/script&gt; <mark>pricing</mark>`,
		`<mark>acme</mark> <mark>pricing</mark>, again`,
		`href="/app/export?format=csv&amp;platform=x&amp;q=pricing&#43;-spam&#43;%22%3Cx%3E%22"`,
		`href="/app/export?format=jsonl&amp;platform=x&amp;q=pricing&#43;-spam&#43;%22%3Cx%3E%22"`,
		`data-live="/app/events?after=`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	if strings.Contains(body, "<script>alert") || strings.Contains(body, "<b>Acme") {
		t.Fatal("a stranger's markup is markup on the page")
	}

	// A search the inbox refuses is said on the page, with the box kept.
	w = get(d, "/app/?q=-spam", true)
	if w.Code != 400 || !strings.Contains(w.Body.String(), "q must hold a word to find") || !strings.Contains(w.Body.String(), `value="-spam"`) {
		t.Fatalf("a refused search: %d\n%s", w.Code, w.Body.String())
	}
	// Without an export service the page offers no download.
	d = searchDashboard(t, searchInbox{fakeInbox: fakeInbox{items: items}, got: &got}, false)
	if body := get(d, "/app/", true).Body.String(); strings.Contains(body, "/app/export") {
		t.Fatal("download links without an export service")
	}
	if w := get(d, "/app/export?format=csv", true); w.Code != 404 {
		t.Fatalf("export without a service: %d", w.Code)
	}
}

// The download is the view's matches, in CSV with formula cells made
// text, as a dated attachment; a bad format or filter is an error page.
func TestInboxExport(t *testing.T) {
	var got ports.InboxQuery
	items := []ports.InboxItem{item(1, "=HYPERLINK(\"http://evil\")", "ada", "https://x.com/1"), item(2, "plain", "bob", ""), item(3, "third", "cy", "")}
	d := searchDashboard(t, searchInbox{fakeInbox: fakeInbox{items: items}, got: &got}, true)
	w := get(d, "/app/export?format=csv&q=acme&show=starred&intent=buying", true)
	if w.Code != 200 {
		t.Fatalf("status %d\n%s", w.Code, w.Body.String())
	}
	if got.Q != "acme" || got.Starred == nil || !*got.Starred || got.Intent != core.IntentBuying {
		t.Fatalf("the export was asked %+v", got)
	}
	if cd := w.Header().Get("Content-Disposition"); cd != `attachment; filename="earshot-matches-2026-03-04.csv"` {
		t.Errorf("Content-Disposition %q", cd)
	}
	if ct := w.Header().Get("Content-Type"); ct != "text/csv; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	rows, err := csv.NewReader(w.Body).ReadAll()
	if err != nil || len(rows) != 4 || rows[1][0] != "m1" || rows[1][9] != `'=HYPERLINK("http://evil")` || rows[3][0] != "m3" {
		t.Fatalf("%v\n%q", err, rows)
	}
	for path, want := range map[string]int{
		"/app/export":                      400,
		"/app/export?format=xlsx":          400,
		"/app/export?format=csv&q=-x":      400,
		"/app/export?format=csv&show=nope": 400,
	} {
		if w := get(d, path, true); w.Code != want {
			t.Errorf("%s: %d, want %d", path, w.Code, want)
		}
	}
	if w := get(d, "/app/export?format=csv", false); w.Code != http.StatusSeeOther {
		t.Errorf("signed out: %d", w.Code)
	}
}

// An owner runs one export at a time: a second while the first is being
// written is refused, and one after it has ended is served.
func TestInboxExportOneAtATime(t *testing.T) {
	var got ports.InboxQuery
	hold := make(chan struct{})
	d := searchDashboard(t, searchInbox{fakeInbox: fakeInbox{items: []ports.InboxItem{item(1, "a", "ada", "")}}, got: &got, hold: hold}, true)
	srv := httptest.NewServer(d)
	defer srv.Close()
	fetch := func() *http.Response {
		req, _ := http.NewRequest("GET", srv.URL+"/app/export?format=jsonl", nil)
		req.AddCookie(&http.Cookie{Name: cookieName, Value: tok})
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	// The first export's headers are out while its pages wait on hold.
	first := fetch()
	if first.StatusCode != 200 {
		t.Fatalf("first export: %d", first.StatusCode)
	}
	second := fetch()
	body, _ := io.ReadAll(second.Body)
	second.Body.Close()
	if second.StatusCode != http.StatusTooManyRequests || second.Header.Get("Retry-After") == "" || !strings.Contains(string(body), "still being written") {
		t.Fatalf("second export while the first runs: %d %s", second.StatusCode, body)
	}
	close(hold)
	b, _ := io.ReadAll(first.Body)
	first.Body.Close()
	if !strings.Contains(string(b), `"id":"m1"`) {
		t.Fatalf("first export: %s", b)
	}
	third := fetch()
	b, _ = io.ReadAll(third.Body)
	third.Body.Close()
	if third.StatusCode != 200 || !strings.Contains(string(b), `"id":"m1"`) {
		t.Fatalf("an export after the first: %d %s", third.StatusCode, b)
	}
}

// A page that fails once the download has begun cuts it off.
func TestInboxExportFailureBreaksTheDownload(t *testing.T) {
	var got ports.InboxQuery
	items := []ports.InboxItem{item(1, "a", "ada", ""), item(2, "b", "bob", ""), item(3, "c", "cy", "")}
	d := searchDashboard(t, searchInbox{fakeInbox: fakeInbox{items: items}, got: &got, fail: core.Errorf(core.KindInternal, "gone")}, true)
	srv := httptest.NewServer(d)
	defer srv.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/app/export?format=csv", nil)
	req.AddCookie(&http.Cookie{Name: cookieName, Value: tok})
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if b, err := io.ReadAll(resp.Body); err == nil {
		t.Fatalf("the download ended cleanly: %q", b)
	}
}
