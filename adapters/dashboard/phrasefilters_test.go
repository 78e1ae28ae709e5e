package dashboard

import (
	"context"
	"io"
	"log/slog"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// filterPhrases keeps one phrase and checks filters as app.Phrases does.
type filterPhrases struct {
	fakePhrases
	p       core.Phrase
	added   int
	updated int
}

func (f *filterPhrases) AddWithFilters(_ context.Context, owner, phrase, platform, community string, fs core.PhraseFilters, _ string) (core.Phrase, bool, error) {
	p, err := core.NewPhrase(owner, phrase, platform, community)
	if err != nil {
		return core.Phrase{}, false, err
	}
	if p.Filters, err = core.NewPhraseFilters(fs); err != nil {
		return core.Phrase{}, false, err
	}
	f.added++
	p.ID = "p1"
	f.p = p
	return p, false, nil
}

func (f *filterPhrases) Update(_ context.Context, _, id string, _ *string, ch core.PhraseFiltersChange) (core.Phrase, error) {
	if id != f.p.ID {
		return core.Phrase{}, core.Errorf(core.KindNotFound, "phrase not found")
	}
	checked, err := ch.Check()
	if err != nil {
		return core.Phrase{}, err
	}
	f.updated++
	f.p.Filters = f.p.Filters.With(checked)
	return f.p, nil
}

func (f *filterPhrases) Get(_ context.Context, _, id string) (core.Phrase, error) {
	if id != f.p.ID {
		return core.Phrase{}, core.Errorf(core.KindNotFound, "phrase not found")
	}
	return f.p, nil
}

func (f *filterPhrases) List(context.Context, string, ports.PhraseFilter) ([]core.Phrase, error) {
	if f.p.ID == "" {
		return nil, nil
	}
	return []core.Phrase{f.p}, nil
}

func filtersDashboard(t *testing.T, f *filterPhrases) *Dashboard {
	t.Helper()
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps{Sessions: fakeSessions{}, Phrases: f})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestParseFilters(t *testing.T) {
	f := parseFilters(url.Values{"exclude": {" hiring\r\n\r\n free trial \n"}, "require": {"price"}, "exclude_authors": {"@bot\nu/spam"},
		"exclude_communities": {"r/jobs"}, "min_likes": {" 3 "}, "min_comments": {""}, "title_only": {"1"}})
	got, err := f.filters()
	want := core.PhraseFilters{Exclude: []string{"hiring", "free trial"}, Require: []string{"price"}, ExcludeAuthors: []string{"@bot", "u/spam"},
		ExcludeCommunities: []string{"r/jobs"}, MinLikes: 3, TitleOnly: true}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("filters() = %+v, %v; want %+v", got, err, want)
	}
	if !f.open() || (filtersForm{}).open() {
		t.Fatal("open")
	}
	for field, v := range map[string]string{"min_likes": "many", "min_comments": "1.5"} {
		_, err := parseFilters(url.Values{field: {v}}).filters()
		if name := filterField(err); !core.IsKind(err, core.KindInvalid) || name != map[string]string{"min_likes": "minLikes", "min_comments": "minComments"}[field] {
			t.Errorf("%s=%s: %v beside %q", field, v, err, name)
		}
	}
	// What the form shows of stored filters reads back as them.
	stored, _ := core.NewPhraseFilters(want)
	if back, err := filtersFormOf(stored).filters(); err != nil || !reflect.DeepEqual(back, stored) {
		t.Fatalf("round trip: %+v, %v; want %+v", back, err, stored)
	}
	if got := filtersFormOf(core.PhraseFilters{}); got != (filtersForm{}) {
		t.Fatalf("no filters show as %+v", got)
	}
}

// Each refusal of core's filter check is shown beside its own field.
func TestFilterField(t *testing.T) {
	for _, c := range []struct {
		f    core.PhraseFilters
		want string
	}{
		{core.PhraseFilters{Exclude: []string{""}}, "exclude"},
		{core.PhraseFilters{Require: make([]string, 21)}, "require"},
		{core.PhraseFilters{ExcludeAuthors: []string{"@"}}, "excludeAuthors"},
		{core.PhraseFilters{ExcludeCommunities: []string{"x"}}, "excludeCommunities"},
		{core.PhraseFilters{MinLikes: -1}, "minLikes"},
		{core.PhraseFilters{MinComments: core.MaxFilterCount + 1}, "minComments"},
	} {
		_, err := core.NewPhraseFilters(c.f)
		if got := filterField(err); got != c.want {
			t.Errorf("%v beside %q, want %q", err, got, c.want)
		}
		if got := (phraseForm{Platform: "x", Phrase: "acme"}).field(err); got != c.want {
			t.Errorf("add form: %v beside %q, want %q", err, got, c.want)
		}
	}
	if got := filterField(core.Errorf(core.KindInvalid, "phrase must not be empty")); got != "" {
		t.Fatalf("a phrase's refusal beside %q", got)
	}
}

// The add form takes filters; a refused one is shown beside its field,
// with the form's values kept and its filters unfolded, and nothing
// added. The filters page shows a phrase's filters and saves new ones;
// the phrase list says what they skip, escaped. Writes from another
// site are refused.
func TestPhraseFilterForms(t *testing.T) {
	f := &filterPhrases{}
	d := filtersDashboard(t, f)

	w := serve(d, formPost("/app/phrases", url.Values{"platform": {"x"}, "phrase": {"acme"}, "exclude": {"jobs\n\n"}, "min_likes": {"-2"}}, "same-origin", true))
	body := w.Body.String()
	if w.Code != 400 || f.added != 0 || !strings.Contains(body, `<p class="error" id="pe-minLikes">minLikes must be a whole number from 0 to 1000000</p>`) ||
		!strings.Contains(body, `id="pf-minLikes" name="min_likes" type="number" min="0" max="1000000" inputmode="numeric" value="-2" aria-describedby="ph-minLikes pe-minLikes" aria-invalid="true"`) ||
		!strings.Contains(body, "<details class=\"phrase-filters\" open>") || !strings.Contains(body, ">jobs\n\n</textarea>") {
		t.Fatalf("a refused filter on add: %d\n%s", w.Code, body)
	}
	if w := get(d, "/app/phrases", true); strings.Contains(w.Body.String(), "<details class=\"phrase-filters\" open>") {
		t.Fatal("the add form's filters are unfolded with nothing in them")
	}

	w = serve(d, formPost("/app/phrases", url.Values{"platform": {"x"}, "phrase": {"acme"}, "exclude": {"<b>jobs</b>\nhiring"}, "title_only": {"1"}}, "same-origin", true))
	if w.Code != 303 || f.added != 1 || !reflect.DeepEqual(f.p.Filters, core.PhraseFilters{Exclude: []string{"<b>jobs</b>", "hiring"}, TitleOnly: true}) {
		t.Fatalf("add with filters: %d %+v", w.Code, f.p)
	}
	body = get(d, "/app/phrases", true).Body.String()
	if !strings.Contains(body, "<li>skips “&lt;b&gt;jobs&lt;/b&gt;”, “hiring”</li><li>title only</li>") || strings.Contains(body, "<b>jobs") ||
		!strings.Contains(body, `href="/app/phrases/p1/filters">Change<span class="sr"> filters of “acme”</span>`) {
		t.Fatalf("the phrase list does not say what the filters skip:\n%s", body)
	}

	w = get(d, "/app/phrases/p1/filters", true)
	body = w.Body.String()
	if w.Code != 200 || !strings.Contains(body, ">&lt;b&gt;jobs&lt;/b&gt;\nhiring</textarea>") || !strings.Contains(body, `name="title_only" type="checkbox" value="1" aria-describedby="ph-titleOnly" checked`) {
		t.Fatalf("the filters page: %d\n%s", w.Code, body)
	}
	for _, name := range []string{"exclude", "require", "excludeAuthors", "excludeCommunities", "minLikes", "minComments", "titleOnly"} {
		if !strings.Contains(body, `<p class="hint" id="ph-`+name+`">`) {
			t.Errorf("%s has no line of help", name)
		}
	}

	before := f.p
	w = serve(d, formPost("/app/phrases/p1/filters", url.Values{"exclude": {"hiring"}, "exclude_communities": {"r/jobs\nno spaces"}}, "same-origin", true))
	body = w.Body.String()
	if w.Code != 400 || !reflect.DeepEqual(f.p, before) ||
		!strings.Contains(body, `<p class="error" id="pe-excludeCommunities">excludeCommunities entry 2 must be a subreddit name of 3 to 21 letters, digits or underscores</p>`) ||
		!strings.Contains(body, ">r/jobs\nno spaces</textarea>") || !strings.Contains(body, "The filters were not saved") {
		t.Fatalf("a refused save: %d\n%s", w.Code, body)
	}

	w = serve(d, formPost("/app/phrases/p1/filters", url.Values{"require": {"price"}, "exclude_authors": {"@Bot"}, "min_comments": {"2"}}, "same-origin", true))
	want := core.PhraseFilters{Require: []string{"price"}, ExcludeAuthors: []string{"Bot"}, MinComments: 2}
	if w.Code != 303 || w.Header().Get("Location") != "/app/phrases?done=filtered" || !reflect.DeepEqual(f.p.Filters, want) {
		t.Fatalf("save: %d %s %+v", w.Code, w.Header().Get("Location"), f.p.Filters)
	}
	if body := get(d, "/app/phrases?done=filtered", true).Body.String(); !strings.Contains(body, "Filters saved") {
		t.Fatal("no notice after saving")
	}

	if w := serve(d, formPost("/app/phrases/p1/filters", url.Values{"exclude": {"x"}}, "cross-site", true)); w.Code != 403 || !reflect.DeepEqual(f.p.Filters, want) {
		t.Fatalf("cross-site save: %d %+v", w.Code, f.p.Filters)
	}
	if w := get(d, "/app/phrases/nope/filters", true); w.Code != 404 {
		t.Fatalf("another phrase's filters: %d", w.Code)
	}
	if w := serve(d, formPost("/app/phrases/nope/filters", url.Values{"exclude": {"x"}}, "same-origin", true)); w.Code != 404 {
		t.Fatalf("saving another phrase's filters: %d", w.Code)
	}
}
