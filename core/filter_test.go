package core_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

func TestNewPhraseFilters(t *testing.T) {
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("word%d", i)
		}
		return out
	}
	cases := []struct {
		name string
		in   core.PhraseFilters
		want core.PhraseFilters
	}{
		{"zero", core.PhraseFilters{}, core.PhraseFilters{}},
		{"empty lists are none", core.PhraseFilters{Exclude: []string{}, Require: []string{}, ExcludeAuthors: []string{}, ExcludeCommunities: []string{}},
			core.PhraseFilters{}},
		{"words like phrases", core.PhraseFilters{Exclude: []string{"  free \t trial ", "Jobs"}, Require: []string{"c++", "#ai"}},
			core.PhraseFilters{Exclude: []string{"free trial", "Jobs"}, Require: []string{"c++", "#ai"}}},
		{"duplicates under folding dropped, first kept", core.PhraseFilters{Exclude: []string{"Free", "free", "FREE ", "σοφία", "ΣΟΦΊΑ"}},
			core.PhraseFilters{Exclude: []string{"Free", "σοφία"}}},
		{"authors without u/ or @", core.PhraseFilters{ExcludeAuthors: []string{"u/Spammer", "/u/bot_1", "@Brand", " Jane   Doe ", "U/x"}},
			core.PhraseFilters{ExcludeAuthors: []string{"Spammer", "bot_1", "Brand", "Jane Doe", "x"}}},
		{"authors compared without case", core.PhraseFilters{ExcludeAuthors: []string{"spammer", "u/SPAMMER", "@Spammer"}},
			core.PhraseFilters{ExcludeAuthors: []string{"spammer"}}},
		// Words are found as the matcher reads them, so "Joe’s" is "Joe's"
		// and "ＡＣＭＥ" is "acme"; an author is a name, compared by case
		// alone (Keep), so "ＡＣＭＥ" is another author than "acme".
		{"words duplicate as the matcher reads them", core.PhraseFilters{Exclude: []string{"Joe's", "JOE\u2019S", "acme"}, Require: []string{"ＡＣＭＥ", "Acme"}},
			core.PhraseFilters{Exclude: []string{"Joe's", "acme"}, Require: []string{"ＡＣＭＥ"}}},
		{"authors duplicate by case alone", core.PhraseFilters{ExcludeAuthors: []string{"acme", "ＡＣＭＥ", "Joe's", "joe\u2019s", "ACME"}},
			core.PhraseFilters{ExcludeAuthors: []string{"acme", "ＡＣＭＥ", "Joe's", "joe\u2019s"}}},
		{"communities like a phrase's", core.PhraseFilters{ExcludeCommunities: []string{"r/Jobs", "/r/forhire/", "SaaS", "jobs"}},
			core.PhraseFilters{ExcludeCommunities: []string{"jobs", "forhire", "saas"}}},
		{"minimums at the bounds", core.PhraseFilters{MinLikes: core.MaxFilterCount, MinComments: 0, TitleOnly: true},
			core.PhraseFilters{MinLikes: core.MaxFilterCount, TitleOnly: true}},
		{"twenty entries", core.PhraseFilters{Exclude: many(core.MaxFilterEntries)}, core.PhraseFilters{Exclude: many(core.MaxFilterEntries)}},
		{"entry as long as a phrase", core.PhraseFilters{Require: []string{strings.Repeat("é", core.MaxPhraseLen)}},
			core.PhraseFilters{Require: []string{strings.Repeat("é", core.MaxPhraseLen)}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := core.NewPhraseFilters(c.in)
			if err != nil || !reflect.DeepEqual(got, c.want) {
				t.Fatalf("NewPhraseFilters(%+v) = %+v, %v; want %+v", c.in, got, err, c.want)
			}
			// Normalised filters pass again unchanged: stored ones can be
			// checked again.
			again, err := core.NewPhraseFilters(got)
			if err != nil || !reflect.DeepEqual(again, got) {
				t.Fatalf("again: %+v, %v", again, err)
			}
			if got.IsZero() != reflect.DeepEqual(got, core.PhraseFilters{}) {
				t.Fatalf("IsZero = %v for %+v", got.IsZero(), got)
			}
		})
	}
}

func TestNewPhraseFiltersRefuses(t *testing.T) {
	cases := []struct {
		name string
		in   core.PhraseFilters
		want string // the message
	}{
		{"too many excludes", core.PhraseFilters{Exclude: make([]string, 21)}, "exclude holds at most 20 entries, got 21"},
		{"too many requires", core.PhraseFilters{Require: make([]string, 100)}, "require holds at most 20 entries, got 100"},
		{"too many authors", core.PhraseFilters{ExcludeAuthors: make([]string, 21)}, "excludeAuthors holds at most 20 entries, got 21"},
		{"too many communities", core.PhraseFilters{ExcludeCommunities: make([]string, 21)}, "excludeCommunities holds at most 20 entries, got 21"},
		{"empty word", core.PhraseFilters{Exclude: []string{"ok", " \t"}}, "exclude entry 2 must not be empty"},
		{"long word", core.PhraseFilters{Require: []string{strings.Repeat("a", 101)}}, "require entry 1 must be at most 100 characters"},
		{"control character", core.PhraseFilters{Exclude: []string{"a\x00b"}}, "exclude entry 1 must not contain control characters"},
		{"not UTF-8", core.PhraseFilters{Require: []string{"a\xffb"}}, "require entry 1 must be valid UTF-8"},
		{"empty author", core.PhraseFilters{ExcludeAuthors: []string{"u/"}}, "excludeAuthors entry 1 must not be empty"},
		{"bare at sign", core.PhraseFilters{ExcludeAuthors: []string{"@"}}, "excludeAuthors entry 1 must not be empty"},
		{"long author", core.PhraseFilters{ExcludeAuthors: []string{strings.Repeat("b", 101)}}, "excludeAuthors entry 1 must be at most 100 characters"},
		{"author with a control", core.PhraseFilters{ExcludeAuthors: []string{"bo\x1bb"}}, "excludeAuthors entry 1 must not contain control characters"},
		{"bad community", core.PhraseFilters{ExcludeCommunities: []string{"jobs", "no spaces"}},
			"excludeCommunities entry 2 must be a subreddit name of 3 to 21 letters, digits or underscores"},
		{"short community", core.PhraseFilters{ExcludeCommunities: []string{"r/ab"}},
			"excludeCommunities entry 1 must be a subreddit name of 3 to 21 letters, digits or underscores"},
		{"negative likes", core.PhraseFilters{MinLikes: -1}, "minLikes must be a whole number from 0 to 1000000"},
		{"too many likes", core.PhraseFilters{MinLikes: core.MaxFilterCount + 1}, "minLikes must be a whole number from 0 to 1000000"},
		{"negative comments", core.PhraseFilters{MinComments: -5}, "minComments must be a whole number from 0 to 1000000"},
		{"too many comments", core.PhraseFilters{MinComments: 1 << 40}, "minComments must be a whole number from 0 to 1000000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := core.NewPhraseFilters(c.in)
			requireKind(t, err, core.KindInvalid)
			if core.Message(err) != c.want {
				t.Fatalf("message %q, want %q", core.Message(err), c.want)
			}
		})
	}
}

func TestPhraseFiltersChange(t *testing.T) {
	cur := core.PhraseFilters{Exclude: []string{"jobs"}, Require: []string{"price"}, MinLikes: 5, TitleOnly: true}
	none := []string{}
	ch, err := core.PhraseFiltersChange{Exclude: &[]string{"Hiring", "hiring", " free  trial"}, Require: &none, MinComments: ptr(3)}.Check()
	if err != nil {
		t.Fatal(err)
	}
	got := cur.With(ch)
	want := core.PhraseFilters{Exclude: []string{"Hiring", "free trial"}, MinLikes: 5, MinComments: 3, TitleOnly: true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("With = %+v, want %+v", got, want)
	}
	if !(core.PhraseFiltersChange{}).IsZero() || ch.IsZero() {
		t.Fatal("IsZero")
	}
	// Fields not sent stay; a change of every field replaces them all.
	all := core.PhraseFilters{ExcludeAuthors: []string{"bot"}, ExcludeCommunities: []string{"jobs"}, MinLikes: 1, MinComments: 2}
	if got := cur.With(core.ChangeAll(all)); !reflect.DeepEqual(got, all) {
		t.Fatalf("With(ChangeAll) = %+v, want %+v", got, all)
	}
	for _, bad := range []core.PhraseFiltersChange{
		{Exclude: &[]string{""}}, {ExcludeAuthors: &[]string{"@"}}, {ExcludeCommunities: &[]string{"x"}},
		{MinLikes: ptr(-1)}, {MinComments: ptr(core.MaxFilterCount + 1)}, {Require: ptr(make([]string, 21))},
	} {
		if _, err := bad.Check(); !core.IsKind(err, core.KindInvalid) {
			t.Errorf("Check(%+v) = %v, want KindInvalid", bad, err)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestPhraseFiltersKeep(t *testing.T) {
	post := core.FilterPostOf(core.Post{Author: "u/Jane  Doe", Likes: 10, Comments: 2}, "saas")
	if post.Author != "Jane Doe" || post.Community != "saas" || post.Likes != 10 || post.Comments != 2 {
		t.Fatalf("FilterPostOf = %+v", post)
	}
	plain := core.FilterHits{}
	cases := []struct {
		name string
		f    core.PhraseFilters
		hits core.FilterHits
		want bool
	}{
		{"no filter", core.PhraseFilters{}, plain, true},
		{"an exclude word appears", core.PhraseFilters{Exclude: []string{"jobs", "hiring"}}, core.FilterHits{Excluded: 1}, false},
		{"no exclude word appears", core.PhraseFilters{Exclude: []string{"jobs"}}, plain, true},
		{"every require word appears", core.PhraseFilters{Require: []string{"price", "crm"}}, core.FilterHits{Required: 2}, true},
		{"one require word missing", core.PhraseFilters{Require: []string{"price", "crm"}}, core.FilterHits{Required: 1}, false},
		{"require and exclude", core.PhraseFilters{Require: []string{"price"}, Exclude: []string{"jobs"}}, core.FilterHits{Required: 1, Excluded: 1}, false},
		{"author excluded, any case and prefix", core.PhraseFilters{ExcludeAuthors: []string{"bot", "jane doe"}}, plain, false},
		{"another author", core.PhraseFilters{ExcludeAuthors: []string{"jane"}}, plain, true},
		{"community excluded", core.PhraseFilters{ExcludeCommunities: []string{"jobs", "saas"}}, plain, false},
		{"another community", core.PhraseFilters{ExcludeCommunities: []string{"jobs"}}, plain, true},
		{"likes reach the minimum", core.PhraseFilters{MinLikes: 10}, plain, true},
		{"likes short of it", core.PhraseFilters{MinLikes: 11}, plain, false},
		{"comments reach the minimum", core.PhraseFilters{MinComments: 2}, plain, true},
		{"comments short of it", core.PhraseFilters{MinComments: 3}, plain, false},
		{"title only, in the title", core.PhraseFilters{TitleOnly: true}, core.FilterHits{InTitle: true}, true},
		{"title only, in the text only", core.PhraseFilters{TitleOnly: true}, plain, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.f.Keep(post, c.hits); got != c.want {
				t.Fatalf("Keep = %v, want %v", got, c.want)
			}
		})
	}
	// A post without an author is no excluded author's.
	if !(core.PhraseFilters{ExcludeAuthors: []string{"x"}}).Keep(core.FilterPostOf(core.Post{}, ""), plain) {
		t.Fatal("a post without an author was vetoed")
	}
}

func TestAuthorName(t *testing.T) {
	for in, want := range map[string]string{
		"u/Bob": "Bob", "/u/bob": "bob", "U/bob": "bob", "@bob": "bob", " bob ": "bob", "Jane\t Doe": "Jane Doe",
		"ub": "ub", "u": "u", "user/x": "user/x", "@@bob": "@bob", "": "",
	} {
		if got := core.AuthorName(in); got != want {
			t.Errorf("AuthorName(%q) = %q, want %q", in, got, want)
		}
	}
}
