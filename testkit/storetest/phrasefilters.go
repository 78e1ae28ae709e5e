package storetest

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// fullFilters sets every field, with text a careless store would mangle:
// quotes, backslashes, non-ASCII letters, an emoji and a long entry.
func fullFilters(t *testing.T) core.PhraseFilters {
	t.Helper()
	f, err := core.NewPhraseFilters(core.PhraseFilters{
		Exclude:            []string{"hiring", `"quoted" \ back`, "σοφία", "🚀 launch", strings.Repeat("é", core.MaxPhraseLen)},
		Require:            []string{"c++", "price"},
		ExcludeAuthors:     []string{"u/Spammer", "Jane Doe"},
		ExcludeCommunities: []string{"r/jobs"},
		MinLikes:           core.MaxFilterCount,
		MinComments:        2,
		TitleOnly:          true,
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// testPhraseFilters: a phrase's filters come back as they were stored
// through every read (one phrase, the owner's list, the listening lists
// the readers of posts take, an idempotent replay), and a phrase
// without filters reads back as the zero value.
func testPhraseFilters(t *testing.T, s Stores) {
	o := newOwner(t, s)
	want := fullFilters(t)
	p, err := core.NewPhrase(o.ID, "filtered "+unique(), "reddit", "filters")
	if err != nil {
		t.Fatal(err)
	}
	p.Filters = want
	idem := ports.Idempotency{Key: "filters-" + unique()}
	if _, err := s.Phrases.CreatePhrase(ctx, &p, roomy, idem); err != nil {
		t.Fatal(err)
	}
	plain := newPhrase(t, s, o.ID, "plain "+unique(), "reddit", "filters")

	check := func(where string, got core.Phrase) {
		t.Helper()
		switch got.ID {
		case p.ID:
			if !reflect.DeepEqual(got.Filters, want) {
				t.Errorf("%s: filters %+v, want %+v", where, got.Filters, want)
			}
		case plain.ID:
			if !reflect.DeepEqual(got.Filters, core.PhraseFilters{}) {
				t.Errorf("%s: a phrase without filters reads back %+v", where, got.Filters)
			}
		}
	}
	for _, id := range []string{p.ID, plain.ID} {
		got, err := s.Phrases.Phrase(ctx, o.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		check("Phrase", got)
	}
	lists := map[string]func() ([]core.Phrase, error){
		"Phrases":               func() ([]core.Phrase, error) { return s.Phrases.Phrases(ctx, o.ID, ports.PhraseFilter{}) },
		"OwnerListeningPhrases": func() ([]core.Phrase, error) { return s.Listening.OwnerListeningPhrases(ctx, o.ID, core.Reddit) },
		"ListeningPhrases":      func() ([]core.Phrase, error) { return s.Listening.ListeningPhrases(ctx, core.Reddit) },
	}
	for name, list := range lists {
		ps, err := list()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, x := range ps {
			if x.ID == p.ID || x.ID == plain.ID {
				n++
				check(name, x)
			}
		}
		if n != 2 {
			t.Errorf("%s listed %d of the two phrases", name, n)
		}
	}
	again, err := core.NewPhrase(o.ID, "filtered again", "reddit", "filters")
	if err != nil {
		t.Fatal(err)
	}
	if replayed, err := s.Phrases.CreatePhrase(ctx, &again, roomy, idem); err != nil || !replayed || again.ID != p.ID {
		t.Fatalf("replay: %v, %v, %s", replayed, err, again.ID)
	}
	check("a replay", again)
}

// testUpdatePhrase: the fields of the filters a change gives replace the
// stored ones and the others stay; status and filters change together;
// every change bumps the owner's phrase version, so every replica
// recompiles; clearing every filter reads back as none; another owner's
// phrase is not found.
func testUpdatePhrase(t *testing.T, s Stores) {
	o := newOwner(t, s)
	p := newPhrase(t, s, o.ID, "update "+unique(), "x", "")
	version := func() int64 {
		t.Helper()
		v, err := s.Listening.PhraseVersion(ctx, o.ID)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	v0 := version()
	ch, err := core.PhraseFiltersChange{Exclude: &[]string{"Jobs", "hiring"}, MinLikes: ptr(3)}.Check()
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Phrases.UpdatePhrase(ctx, o.ID, p.ID, ports.PhraseChange{Filters: ch})
	want := core.PhraseFilters{Exclude: []string{"Jobs", "hiring"}, MinLikes: 3}
	if err != nil || !reflect.DeepEqual(got.Filters, want) || got.Status != core.Listening || got.Phrase != p.Phrase {
		t.Fatalf("UpdatePhrase = %+v, %v; want filters %+v", got, err, want)
	}
	v1 := version()
	if v1 <= v0 {
		t.Fatalf("phrase version %d after a change of filters, was %d", v1, v0)
	}

	paused := core.Paused
	got, err = s.Phrases.UpdatePhrase(ctx, o.ID, p.ID, ports.PhraseChange{Status: &paused,
		Filters: core.PhraseFiltersChange{Require: &[]string{"price"}, Exclude: &[]string{}}})
	want = core.PhraseFilters{Require: []string{"price"}, MinLikes: 3}
	if err != nil || got.Status != core.Paused || !reflect.DeepEqual(got.Filters, want) {
		t.Fatalf("UpdatePhrase = %+v, %v; want paused with %+v", got, err, want)
	}
	if stored, _ := s.Phrases.Phrase(ctx, o.ID, p.ID); stored.Status != core.Paused || !reflect.DeepEqual(stored.Filters, want) {
		t.Fatalf("stored %+v", stored)
	}
	v2 := version()
	if v2 <= v1 {
		t.Fatalf("phrase version %d after a change, was %d", v2, v1)
	}

	// Nothing to change changes nothing, the version included.
	if got, err := s.Phrases.UpdatePhrase(ctx, o.ID, p.ID, ports.PhraseChange{}); err != nil || !reflect.DeepEqual(got.Filters, want) {
		t.Fatalf("an empty change: %+v, %v", got, err)
	}
	if v := version(); v != v2 {
		t.Fatalf("phrase version %d after an empty change, was %d", v, v2)
	}

	got, err = s.Phrases.UpdatePhrase(ctx, o.ID, p.ID, ports.PhraseChange{Filters: core.ChangeAll(core.PhraseFilters{})})
	if err != nil || !reflect.DeepEqual(got.Filters, core.PhraseFilters{}) {
		t.Fatalf("clearing the filters: %+v, %v", got, err)
	}
	if stored, _ := s.Phrases.Phrase(ctx, o.ID, p.ID); !reflect.DeepEqual(stored.Filters, core.PhraseFilters{}) {
		t.Fatalf("cleared filters read back %+v", stored.Filters)
	}

	other := newOwner(t, s)
	_, err = s.Phrases.UpdatePhrase(ctx, other.ID, p.ID, ports.PhraseChange{Status: &paused})
	wantKind(t, err, core.KindNotFound)
	_, err = s.Phrases.UpdatePhrase(ctx, o.ID, "no-such-phrase", ports.PhraseChange{Status: &paused})
	wantKind(t, err, core.KindNotFound)
}

// testUpdatePhraseConcurrent: changes of different fields of one
// phrase's filters made at once all stay.
func testUpdatePhraseConcurrent(t *testing.T, s Stores) {
	o := newOwner(t, s)
	p := newPhrase(t, s, o.ID, "concurrent "+unique(), "x", "")
	changes := []core.PhraseFiltersChange{
		{Exclude: &[]string{"jobs"}}, {Require: &[]string{"price"}}, {ExcludeAuthors: &[]string{"bot"}},
		{ExcludeCommunities: &[]string{"saas"}}, {MinLikes: ptr(1)}, {MinComments: ptr(2)}, {TitleOnly: ptr(true)},
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(changes))
	for _, ch := range changes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Phrases.UpdatePhrase(ctx, o.ID, p.ID, ports.PhraseChange{Filters: ch})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Phrases.Phrase(ctx, o.ID, p.ID)
	want := core.PhraseFilters{Exclude: []string{"jobs"}, Require: []string{"price"}, ExcludeAuthors: []string{"bot"},
		ExcludeCommunities: []string{"saas"}, MinLikes: 1, MinComments: 2, TitleOnly: true}
	if err != nil || !reflect.DeepEqual(got.Filters, want) {
		t.Fatalf("after concurrent changes: %+v, %v; want %+v", got.Filters, err, want)
	}
}
