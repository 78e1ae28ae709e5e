package app

import (
	"context"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// A post its phrase's filters veto makes no match through ingest; the
// others do. A change of the filters is matched from the next batch on,
// with no restart: the phrase version moved.
func TestIngestFilters(t *testing.T) {
	t.Parallel()
	databases(t, testIngestFilters)
}

func testIngestFilters(t *testing.T, w world) {
	ctx := context.Background()
	o := w.owner(t, "filters@example.com")
	phrases := NewPhrases(w.phrases, core.Limits{PhrasesPerPlatform: 10}, ports.SystemClock{})
	p, _, err := phrases.AddWithFilters(ctx, o.ID, "acme", "x", "", core.PhraseFilters{
		Exclude: []string{"hiring"}, Require: []string{"price"}, ExcludeAuthors: []string{"@Spam_Bot"}, MinLikes: 2}, "")
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := phrases.Add(ctx, o.ID, "widgets", "x", "", "")
	if err != nil {
		t.Fatal(err)
	}
	ingest := NewIngest(IngestDeps{Matches: w.matches, Accounts: gormstore.NewAccountStore(w.db), Matchers: NewMatchers(w.phrases), Log: quiet},
		core.Limits{AccountsPerPlatform: 1})
	post := func(id, author string, likes int, body ...string) core.IngestPost {
		return core.IngestPost{ExternalID: id, AuthorName: author, Body: body, URL: "https://x.com/" + id, Likes: likes}
	}
	_, ingested, skipped, err := ingest.Ingest(ctx, o.ID, "x", []core.IngestPost{
		post("kept", "ada", 5, "acme price went up", "and widgets too"),
		post("excluded", "ada", 5, "acme price", "we are HIRING widgets people"),
		post("no-price", "ada", 5, "acme is fine, widgets too"),
		post("spam", "spam_bot", 5, "acme price widgets"),
		post("few-likes", "ada", 1, "acme price"),
		post("rehiring", "ada", 2, "acme price after rehiring"),
	})
	if err != nil || ingested != 6 || skipped != 0 {
		t.Fatalf("Ingest = %d, %d, %v", ingested, skipped, err)
	}
	want := map[string][]string{
		"kept": {p.ID, plain.ID}, "excluded": {plain.ID}, "no-price": {plain.ID}, "spam": {plain.ID}, "rehiring": {p.ID},
	}
	if got := matchesByPost(t, w, o.ID); !reflect.DeepEqual(got, want) {
		t.Fatalf("matches by post: %v\nwant %v", got, want)
	}

	// Dropping the exclude word and the minimum: the next batch sees it.
	none, zero := []string{}, 0
	if _, err := phrases.Update(ctx, o.ID, p.ID, nil, core.PhraseFiltersChange{Exclude: &none, MinLikes: &zero}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := ingest.Ingest(ctx, o.ID, "x", []core.IngestPost{
		post("hiring-now", "ada", 0, "acme price, hiring"),
		post("spam-again", "@SPAM_BOT", 9, "acme price"),
	}); err != nil {
		t.Fatal(err)
	}
	got := matchesByPost(t, w, o.ID)
	if !slices.Equal(got["hiring-now"], []string{p.ID}) || got["spam-again"] != nil {
		t.Fatalf("after the change: hiring-now %v, spam-again %v", got["hiring-now"], got["spam-again"])
	}
}

// matchesByPost returns the phrase ids matched in each post of the
// owner, sorted, by external id.
func matchesByPost(t *testing.T, w world, owner string) map[string][]string {
	t.Helper()
	ms, _, err := w.matches.Matches(context.Background(), owner, ports.MatchFilter{MinScore: -1, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, m := range ms {
		out[m.Post.ExternalID] = append(out[m.Post.ExternalID], m.PhraseID)
	}
	for k := range out {
		slices.Sort(out[k])
	}
	return out
}

// The reddit reader applies each phrase's filters to the posts it reads,
// communities read together included: a vetoed post makes no match of
// that phrase, while the same post still matches another owner's phrase
// without filters.
func TestRedditFilters(t *testing.T) {
	t.Parallel()
	w, c, o := newRedditWorld(t)
	ctx := context.Background()
	other := w.owner(t, "b@example.com")
	phrases := NewPhrases(w.phrases, core.Limits{PhrasesPerPlatform: 10}, ports.SystemClock{})
	add := func(owner, text, community string, f core.PhraseFilters) core.Phrase {
		t.Helper()
		p, _, err := phrases.AddWithFilters(ctx, owner, text, "reddit", community, f, "")
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	saas := add(o.ID, "acme", "saas", core.PhraseFilters{Exclude: []string{"hiring"}})
	startups := add(o.ID, "acme", "startups", core.PhraseFilters{Require: []string{"price"}})
	everyone := add(other.ID, "acme", "saas", core.PhraseFilters{})
	author := add(other.ID, "acme", "startups", core.PhraseFilters{ExcludeAuthors: []string{"u/someone"}}) // the fake's every author

	f := newFakeReddit(t, c)
	made := c.Now().Add(time.Second)
	ids := map[string]string{
		"saas-hiring":     f.add("saas", ports.RedditPosts, "acme is hiring", made, made, time.Time{}),
		"saas-kept":       f.add("saas", ports.RedditPosts, "acme rocks", made, made, time.Time{}),
		"startups-price":  f.add("startups", ports.RedditPosts, "acme price?", made, made, time.Time{}),
		"startups-vetoed": f.add("startups", ports.RedditComments, "acme is nice", made, made, time.Time{}),
	}
	c.Advance(2 * time.Second)
	if _, err := w.poller(f.source(t, false, time.Minute, false), c, "r1", nil).Cycle(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	byExternal := map[string]string{}
	for name, id := range ids {
		byExternal[id] = name
	}
	named := func(owner string) map[string][]string {
		out := map[string][]string{}
		for post, pids := range matchesByPost(t, w, owner) {
			name := byExternal[post]
			if name == "" {
				name = post
			}
			out[name] = pids
		}
		return out
	}
	if got, want := named(o.ID), map[string][]string{"saas-kept": {saas.ID}, "startups-price": {startups.ID}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("owner a: %v\nwant %v", got, want)
	}
	if got, want := named(other.ID), map[string][]string{"saas-hiring": {everyone.ID}, "saas-kept": {everyone.ID}}; !reflect.DeepEqual(got, want) {
		t.Fatalf("owner b: %v\nwant %v (phrase %s vetoes every post of u/someone)", got, want, author.ID)
	}
}

// Update checks everything before it changes anything: a bad filter with
// a good status changes neither, and nothing to change is refused.
func TestPhraseUpdateRefusesWhole(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ctx := context.Background()
	o := w.owner(t, "update@example.com")
	phrases := NewPhrases(w.phrases, core.Limits{PhrasesPerPlatform: 10}, ports.SystemClock{})
	p, _, err := phrases.AddWithFilters(ctx, o.ID, "acme", "x", "", core.PhraseFilters{MinLikes: 3}, "")
	if err != nil {
		t.Fatal(err)
	}
	paused, bad := "paused", -1
	_, err = phrases.Update(ctx, o.ID, p.ID, &paused, core.PhraseFiltersChange{MinComments: &bad})
	if !core.IsKind(err, core.KindInvalid) || core.Message(err) != "minComments must be a whole number from 0 to 1000000" {
		t.Fatalf("Update with a bad filter: %v", err)
	}
	wrong := "asleep"
	if _, err := phrases.Update(ctx, o.ID, p.ID, &wrong, core.PhraseFiltersChange{MinLikes: &bad}); !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("Update with a bad status: %v", err)
	}
	if _, err := phrases.Update(ctx, o.ID, p.ID, nil, core.PhraseFiltersChange{}); !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("Update of nothing: %v", err)
	}
	if _, _, err := phrases.AddWithFilters(ctx, o.ID, "widgets", "x", "", core.PhraseFilters{Exclude: make([]string, 21)}, ""); !core.IsKind(err, core.KindInvalid) {
		t.Fatalf("AddWithFilters with 21 exclude words: %v", err)
	}
	got, err := phrases.Get(ctx, o.ID, p.ID)
	if err != nil || got.Status != core.Listening || !reflect.DeepEqual(got.Filters, core.PhraseFilters{MinLikes: 3}) {
		t.Fatalf("after refusals: %+v, %v", got, err)
	}
	if list, _ := phrases.List(ctx, o.ID, ports.PhraseFilter{}); len(list) != 1 {
		t.Fatalf("%d phrases after a refused add", len(list))
	}
}
