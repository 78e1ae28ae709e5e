package dashboard

import (
	"context"
	"html/template"
	"io"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

func TestMarkPhrase(t *testing.T) {
	for _, c := range []struct{ text, phrase, want string }{
		{"We use Acme CRM daily", "acme crm", "We use <mark>Acme CRM</mark> daily"},
		{"acme\n\n  crm and ACME CRM", "acme crm", "<mark>acme\n\n  crm</mark> and <mark>ACME CRM</mark>"},
		{"acmecrm, xacme crm, acme crmx", "acme crm", "acmecrm, xacme crm, acme crmx"},
		{"c++x and xc++", "c++", "<mark>c++</mark>x and xc++"},
		{"ΣΟΦΊΑ", "σοφία", "<mark>ΣΟΦΊΑ</mark>"},
		{`<script>alert("acme")</script>`, "acme", `&lt;script&gt;alert(&#34;<mark>acme</mark>&#34;)&lt;/script&gt;`},
		{"a<b>acme</b>", "<b>acme", "a<mark>&lt;b&gt;acme</mark>&lt;/b&gt;"},
		{"go go go", "go go", "<mark>go go</mark> go"},
		{"nothing", "", "nothing"},
		{"bad \xff byte acme", "acme", "bad \ufffd byte <mark>acme</mark>"},
	} {
		if got := markPhrase(c.text, c.phrase); got != template.HTML(c.want) {
			t.Errorf("markPhrase(%q, %q) = %q, want %q", c.text, c.phrase, got, c.want)
		}
	}
}

// fakeWindow answers canned previews and records what it was asked.
type fakeWindow struct {
	previewed, changed int
	applied, undone    int
	last               *core.ArchiveSet
	// older: the newest matches hold none the filters skip, older ones
	// are left unread, and an application archives none either.
	older bool
	// partial: an application reads only the newest matches and leaves
	// older ones unread.
	partial bool
}

var (
	seenAt     = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	windowHits = []core.RecentPost{{Platform: core.X, SeenAt: seenAt,
		Post: core.Post{ExternalID: "1", Author: "<i>ada</i>", Title: "", Text: "we like <b>acme</b> a lot", URL: "javascript:alert(1)"}}}
)

func (f *fakeWindow) Bounds() (int, int) { return 7, 1000 }

func (f *fakeWindow) Preview(_ context.Context, owner, phrase, platform, community string, fs core.PhraseFilters) (ports.Preview, error) {
	p, err := core.NewPhrase(owner, phrase, platform, community)
	if err != nil {
		return ports.Preview{}, err
	}
	if p.Filters, err = core.NewPhraseFilters(fs); err != nil {
		return ports.Preview{}, err
	}
	f.previewed++
	return ports.Preview{Phrase: p, Days: 7, Posts: 1000, Window: ports.Finds[core.RecentPost]{Count: 12, Read: 20000, Partial: true, First: windowHits}}, nil
}

func (f *fakeWindow) PreviewChange(_ context.Context, _, id string, ch core.PhraseFiltersChange) (ports.Preview, error) {
	if id != "p1" {
		return ports.Preview{}, core.Errorf(core.KindNotFound, "phrase not found")
	}
	checked, err := ch.Check()
	if err != nil {
		return ports.Preview{}, err
	}
	if !ch.IsZero() {
		f.changed++
	}
	p := core.Phrase{ID: "p1", Phrase: "acme", Platform: core.X}
	p.Filters = p.Filters.With(checked)
	if f.older {
		return ports.Preview{Phrase: p, Days: 7, Posts: 1000, Existing: true, Dropped: ports.Finds[core.Match]{Read: 9, Partial: true}}, nil
	}
	return ports.Preview{Phrase: p, Days: 7, Posts: 1000, Window: ports.Finds[core.RecentPost]{Count: 1, Read: 5, First: windowHits},
		Existing: true, Archivable: 3, Dropped: ports.Finds[core.Match]{Count: 4, Read: 9,
			First: []core.Match{{ID: "m1", Platform: core.X, CreatedAt: seenAt, Post: core.Post{Text: "acme is hiring"}}}}}, nil
}

func (f *fakeWindow) ApplyFilters(_ context.Context, _, id string) (ports.Applied, error) {
	f.applied++
	if f.older {
		return ports.Applied{Read: 9}, nil
	}
	f.last = &core.ArchiveSet{ID: "s1", PhraseID: id, Matches: 3, CreatedAt: seenAt}
	if f.partial {
		return ports.Applied{Set: *f.last, Read: 9, Partial: true}, nil
	}
	return ports.Applied{Set: *f.last}, nil
}

func (f *fakeWindow) LastApplied(context.Context, string, string) (core.ArchiveSet, error) {
	if f.last == nil {
		return core.ArchiveSet{}, core.Errorf(core.KindNotFound, "none")
	}
	return *f.last, nil
}

func (f *fakeWindow) UndoApply(_ context.Context, _, _, set string) (int, error) {
	if f.last == nil || set != f.last.ID {
		return 0, core.Errorf(core.KindNotFound, "archived set not found")
	}
	f.undone++
	f.last = nil
	return 3, nil
}

func windowDashboard(t *testing.T, p *filterPhrases, w *fakeWindow) *Dashboard {
	t.Helper()
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return seenAt.Add(time.Hour) }},
		Deps{Sessions: fakeSessions{}, Phrases: p, Window: w})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The add form's Preview button shows what the phrase would have
// matched, the phrase marked in each post shown, a stranger's text
// escaped, the form as typed, and adds nothing; a refusal is shown beside
// its field. Adding says the phrase is being filled.
func TestPhrasePreview(t *testing.T) {
	f, win := &filterPhrases{}, &fakeWindow{}
	d := windowDashboard(t, f, win)
	if body := get(d, "/app/phrases", true).Body.String(); !strings.Contains(body, `name="action" value="preview"`) {
		t.Fatal("no preview button")
	}
	w := serve(d, formPost("/app/phrases", url.Values{"platform": {"x"}, "phrase": {"Acme"}, "exclude": {"hiring"}, "action": {"preview"}}, "same-origin", true))
	body := w.Body.String()
	if w.Code != 200 || f.added != 0 || win.previewed != 1 {
		t.Fatalf("preview: %d, added %d, previewed %d", w.Code, f.added, win.previewed)
	}
	for _, want := range []string{
		`this would have matched at least <strong>12</strong> posts: the preview read the newest 20000`,
		`we like &lt;b&gt;<mark>acme</mark>&lt;/b&gt; a lot`,
		`<span class="author">&lt;i&gt;ada&lt;/i&gt;</span>`,
		`value="Acme"`, ">hiring</textarea>",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the preview lacks %q", want)
		}
	}
	if strings.Contains(body, "javascript:alert") || strings.Contains(body, "<b>acme") {
		t.Fatalf("a stranger's markup or link got through:\n%s", body)
	}
	w = serve(d, formPost("/app/phrases", url.Values{"platform": {"x"}, "phrase": {" "}, "action": {"preview"}}, "same-origin", true))
	if w.Code != 400 || !strings.Contains(w.Body.String(), `<p class="error" id="e-phrase">`) || win.previewed != 1 {
		t.Fatalf("a refused preview: %d\n%s", w.Code, w.Body.String())
	}
	w = serve(d, formPost("/app/phrases", url.Values{"platform": {"x"}, "phrase": {"acme"}}, "same-origin", true))
	if w.Code != 303 || w.Header().Get("Location") != "/app/phrases?done=filling" || f.added != 1 {
		t.Fatalf("add: %d %s", w.Code, w.Header().Get("Location"))
	}
	if body := get(d, "/app/phrases?done=filling", true).Body.String(); !strings.Contains(body, "marked “found in recent posts”") {
		t.Fatal("no notice that the phrase is being filled")
	}
}

// The filters page previews a change, with what it drops; once saved,
// it offers to archive the matches the filters skip, and to undo that.
func TestFiltersPreviewAndApply(t *testing.T) {
	f, win := &filterPhrases{p: core.Phrase{ID: "p1", Phrase: "acme", Platform: core.X, Status: core.Listening}}, &fakeWindow{}
	d := windowDashboard(t, f, win)
	w := serve(d, formPost("/app/phrases/p1/filters", url.Values{"exclude": {"hiring"}, "action": {"preview"}}, "same-origin", true))
	body := w.Body.String()
	if w.Code != 200 || f.updated != 0 || win.changed != 1 || !strings.Contains(body, `<strong>4</strong> of this phrase's matches would not have been made, 3 of them in your inbox`) ||
		!strings.Contains(body, "<mark>acme</mark> is hiring") || !strings.Contains(body, ">hiring</textarea>") {
		t.Fatalf("filters preview: %d, updated %d\n%s", w.Code, f.updated, body)
	}
	w = serve(d, formPost("/app/phrases/p1/filters", url.Values{"exclude": {"hiring"}}, "same-origin", true))
	if w.Code != 303 || w.Header().Get("Location") != "/app/phrases/p1/filters?done=saved" || f.updated != 1 {
		t.Fatalf("save: %d %s", w.Code, w.Header().Get("Location"))
	}
	body = get(d, "/app/phrases/p1/filters?done=saved", true).Body.String()
	if !strings.Contains(body, "Filters saved") || !strings.Contains(body, `<form method="post" action="/app/phrases/p1/apply"><button type="submit">Archive 3 matches</button></form>`) ||
		strings.Contains(body, "Undo") {
		t.Fatalf("the offer to archive:\n%s", body)
	}
	if w := serve(d, formPost("/app/phrases/p1/apply", nil, "cross-site", true)); w.Code != 403 || win.applied != 0 {
		t.Fatalf("a cross-site apply: %d", w.Code)
	}
	w = serve(d, formPost("/app/phrases/p1/apply", nil, "same-origin", true))
	if w.Code != 303 || w.Header().Get("Location") != "/app/phrases/p1/filters?done=applied" || win.applied != 1 {
		t.Fatalf("apply: %d %s", w.Code, w.Header().Get("Location"))
	}
	body = get(d, "/app/phrases/p1/filters?done=applied", true).Body.String()
	if !strings.Contains(body, "3 matches were archived on applying the filters") ||
		!strings.Contains(body, `action="/app/phrases/p1/apply/s1/undo"`) || !strings.Contains(body, "Undo below") {
		t.Fatalf("after applying:\n%s", body)
	}
	if w := serve(d, formPost("/app/phrases/p1/apply/s9/undo", nil, "same-origin", true)); w.Code != 404 || win.undone != 0 {
		t.Fatalf("undoing another set: %d", w.Code)
	}
	w = serve(d, formPost("/app/phrases/p1/apply/s1/undo", nil, "same-origin", true))
	if w.Code != 303 || w.Header().Get("Location") != "/app/phrases/p1/filters?done=restored" || win.undone != 1 {
		t.Fatalf("undo: %d %s", w.Code, w.Header().Get("Location"))
	}
}

// Once the newest matches hold none the filters skip while older ones
// were left unread (an application archived the newest), the page still
// offers to look further back, and says so when nothing more is skipped.
func TestFiltersOfferOlderMatches(t *testing.T) {
	f, win := &filterPhrases{p: core.Phrase{ID: "p1", Phrase: "acme", Platform: core.X, Status: core.Listening,
		Filters: core.PhraseFilters{Exclude: []string{"hiring"}}}}, &fakeWindow{older: true}
	d := windowDashboard(t, f, win)
	body := get(d, "/app/phrases/p1/filters", true).Body.String()
	if !strings.Contains(body, "it has older ones, which they may skip") ||
		!strings.Contains(body, `<form method="post" action="/app/phrases/p1/apply"><button type="submit">Archive older matches they skip</button></form>`) {
		t.Fatalf("no offer to look further back:\n%s", body)
	}
	w := serve(d, formPost("/app/phrases/p1/apply", nil, "same-origin", true))
	if at := w.Header().Get("Location"); w.Code != 303 || at != "/app/phrases/p1/filters?done=appliednone" || win.applied != 1 {
		t.Fatalf("apply: %d %s", w.Code, at)
	}
	if body := get(d, "/app/phrases/p1/filters?done=appliednone", true).Body.String(); !strings.Contains(body, "nothing was archived") {
		t.Fatalf("after an application that archived none:\n%s", body)
	}
}

// Without a window the dashboard offers no preview nor archive.
func TestNoWindowNoPreview(t *testing.T) {
	f := &filterPhrases{p: core.Phrase{ID: "p1", Phrase: "acme", Platform: core.X}}
	d := filtersDashboard(t, f)
	for _, path := range []string{"/app/phrases", "/app/phrases/p1/filters"} {
		if body := get(d, path, true).Body.String(); strings.Contains(body, `value="preview"`) || strings.Contains(body, "/apply") {
			t.Errorf("%s offers what it cannot do", path)
		}
	}
	if w := serve(d, formPost("/app/phrases/p1/apply", nil, "same-origin", true)); w.Code != 404 {
		t.Fatalf("apply without a window: %d", w.Code)
	}
}
