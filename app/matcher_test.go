package app

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/match"
)

// filtered returns a listening x phrase with filters f, checked as the
// services check them.
func filtered(t *testing.T, id, text string, f core.PhraseFilters) core.Phrase {
	t.Helper()
	f, err := core.NewPhraseFilters(f)
	if err != nil {
		t.Fatal(err)
	}
	return core.Phrase{ID: id, Phrase: text, Platform: core.X, Status: core.Listening, Filters: f}
}

// Each filter on its own, the words of exclude and require found on word
// boundaries like phrases, anywhere in the title or the text.
func TestMatchFilters(t *testing.T) {
	t.Parallel()
	post := func(title, text string) core.Post {
		return core.Post{Author: "Ada", Title: title, Text: text, Likes: 10, Comments: 3}
	}
	cases := []struct {
		name string
		f    core.PhraseFilters
		post core.Post
		body []string // the body parts searched; nil: the post's text
		want bool
	}{
		{"no filter", core.PhraseFilters{}, post("", "acme is hiring"), nil, true},
		{"exclude word in the text", core.PhraseFilters{Exclude: []string{"hiring"}}, post("", "acme is hiring"), nil, false},
		{"exclude word in the title", core.PhraseFilters{Exclude: []string{"hiring"}}, post("We are HIRING", "acme rocks"), nil, false},
		{"exclude word in another body part", core.PhraseFilters{Exclude: []string{"hiring"}}, post("", ""), []string{"acme rocks", "hiring now"}, false},
		{"exclude word inside a longer word", core.PhraseFilters{Exclude: []string{"hiring"}}, post("", "acme rehiring hirings"), nil, true},
		{"exclude phrase across white space and case", core.PhraseFilters{Exclude: []string{"free trial"}}, post("", "acme FREE \n Trial"), nil, false},
		{"exclude phrase split over two parts", core.PhraseFilters{Exclude: []string{"free trial"}}, post("", ""), []string{"acme free", "trial"}, true},
		{"exclude symbol edge", core.PhraseFilters{Exclude: []string{"c++"}}, post("", "acme in c++x"), nil, false},
		{"one of several exclude words", core.PhraseFilters{Exclude: []string{"jobs", "hiring", "giveaway"}}, post("", "acme giveaway!"), nil, false},
		{"every require word", core.PhraseFilters{Require: []string{"price", "crm"}}, post("CRM question", "acme price?"), nil, true},
		{"a require word missing", core.PhraseFilters{Require: []string{"price", "crm"}}, post("", "acme price?"), nil, false},
		{"require word inside a word only", core.PhraseFilters{Require: []string{"price"}}, post("", "acme priceless"), nil, false},
		{"require word repeated counts once", core.PhraseFilters{Require: []string{"price", "crm"}}, post("", "acme price price price"), nil, false},
		{"author excluded", core.PhraseFilters{ExcludeAuthors: []string{"@ADA"}}, post("", "acme"), nil, false},
		{"another author", core.PhraseFilters{ExcludeAuthors: []string{"adam"}}, post("", "acme"), nil, true},
		{"likes reach", core.PhraseFilters{MinLikes: 10}, post("", "acme"), nil, true},
		{"likes short", core.PhraseFilters{MinLikes: 11}, post("", "acme"), nil, false},
		{"comments reach", core.PhraseFilters{MinComments: 3}, post("", "acme"), nil, true},
		{"comments short", core.PhraseFilters{MinComments: 4}, post("", "acme"), nil, false},
		{"title only, in the title", core.PhraseFilters{TitleOnly: true}, post("Acme review", "nothing"), nil, true},
		{"title only, in the text only", core.PhraseFilters{TitleOnly: true}, post("a review", "acme"), nil, false},
		{"title only, no title", core.PhraseFilters{TitleOnly: true}, post("", "acme"), nil, false},
		{"title only with a require word in the text", core.PhraseFilters{TitleOnly: true, Require: []string{"price"}}, post("acme", "price"), nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Beside the filtered phrase, an unfiltered one that the
			// filter words must not disturb, and whose words overlap.
			c1 := Compile([]core.Phrase{filtered(t, "f", "acme", c.f), filtered(t, "plain", "hiring", core.PhraseFilters{})})
			body := c.body
			if body == nil {
				body = []string{c.post.Text}
			}
			got := c1.Match(c.post, "", c.post.Title, body...)
			if slices.Contains(got, "f") != c.want {
				t.Fatalf("Match = %v; want the filtered phrase: %v", got, c.want)
			}
			hiring := len(match.Compile([]string{"hiring"}).Find(append([]string{c.post.Title}, body...)...)) > 0
			if slices.Contains(got, "plain") != hiring {
				t.Fatalf("Match = %v; the unfiltered phrase found: %v", got, !hiring)
			}
		})
	}
}

// A phrase vetoes only its own matches: two phrases found in one post,
// one filtered, one not; and the filter of one phrase that another
// phrase's text is.
func TestMatchFiltersArePerPhrase(t *testing.T) {
	t.Parallel()
	c := Compile([]core.Phrase{
		filtered(t, "a", "acme", core.PhraseFilters{Exclude: []string{"widgets"}}),
		filtered(t, "w", "widgets", core.PhraseFilters{}),
		filtered(t, "b", "acme", core.PhraseFilters{Require: []string{"Widgets"}}),
	})
	got := c.Match(core.Post{}, "", "", "acme widgets")
	if want := []string{"w", "b"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("Match = %v, want %v", got, want)
	}
	if got := c.Match(core.Post{}, "", "", "acme"); !reflect.DeepEqual(got, []string{"a"}) {
		t.Fatalf("Match = %v, want [a]", got)
	}
}

// The community of a post: a phrase is found only among its own
// community's phrases, and a community a phrase excludes vetoes it.
func TestMatchCommunities(t *testing.T) {
	t.Parallel()
	in := func(id, comm string, f core.PhraseFilters) core.Phrase {
		p := filtered(t, id, "acme", f)
		p.Platform, p.Community = core.Reddit, comm
		return p
	}
	c := Compile([]core.Phrase{
		in("saas", "saas", core.PhraseFilters{}),
		in("jobs", "jobs", core.PhraseFilters{ExcludeCommunities: []string{"r/Jobs"}}),
		in("startups", "startups", core.PhraseFilters{ExcludeCommunities: []string{"saas"}}),
	})
	for comm, want := range map[string][]string{"saas": {"saas"}, "jobs": {}, "startups": {"startups"}, "other": {}} {
		if got := c.Match(core.Post{}, comm, "", "acme"); len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
			t.Errorf("in %s: %v, want %v", comm, got, want)
		}
	}
}

// Phrases without filters match exactly as the matcher alone finds them,
// whether or not other phrases of the list have filters: random phrases
// from a small vocabulary over random posts, against match.Set.Find.
func TestMatchUnfilteredAsBefore(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 8))
	vocab := strings.Fields("acme crm price hiring jobs free trial c++ go é Ünïcode best tool new york city")
	words := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[rng.IntN(len(vocab))]
			if rng.IntN(4) == 0 {
				w[i] = strings.ToUpper(w[i])
			}
		}
		return strings.Join(w, []string{" ", "  ", ", ", "\n"}[rng.IntN(4)])
	}
	for round := range 200 {
		var plain, mixed []core.Phrase
		for i := range 1 + rng.IntN(12) {
			p := core.Phrase{ID: fmt.Sprint("p", i), Phrase: words(1 + rng.IntN(2)), Platform: core.X, Status: core.Listening}
			plain = append(plain, p)
			mixed = append(mixed, p)
			if rng.IntN(2) == 0 {
				mixed = append(mixed, filtered(t, fmt.Sprint("f", i), words(1), core.PhraseFilters{
					Exclude: []string{words(1)}, Require: []string{words(1)}, TitleOnly: rng.IntN(3) == 0, MinLikes: rng.IntN(3)}))
			}
		}
		texts := make([]string, len(plain))
		for i, p := range plain {
			texts[i] = p.Phrase
		}
		set := match.Compile(texts)
		cPlain, cMixed := Compile(plain), Compile(mixed)
		for range 20 {
			post := core.Post{Title: words(rng.IntN(4)), Likes: rng.IntN(3)}
			body := []string{words(rng.IntN(8)), words(rng.IntN(3))}
			var want []string
			for _, i := range set.Find(append([]string{post.Title}, body...)...) {
				want = append(want, plain[i].ID)
			}
			if got := cPlain.Match(post, "", post.Title, body...); !slices.Equal(got, want) {
				t.Fatalf("round %d: unfiltered list found %v in %q %q, want %v", round, got, post.Title, body, want)
			}
			var got []string
			for _, id := range cMixed.Match(post, "", post.Title, body...) {
				if strings.HasPrefix(id, "p") {
					got = append(got, id)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("round %d: beside filtered phrases found %v in %q %q, want %v", round, got, post.Title, body, want)
			}
		}
	}
}

// A list without filters compiles the phrases alone: filter words cost
// nothing until a phrase has some, and then each distinct word once.
func TestCompileFilterWords(t *testing.T) {
	t.Parallel()
	plain := Compile([]core.Phrase{{ID: "a", Phrase: "acme"}, {ID: "b", Phrase: "crm"}})
	if plain.set.Len() != 2 {
		t.Fatalf("unfiltered list compiled %d texts, want 2", plain.set.Len())
	}
	c := Compile([]core.Phrase{
		filtered(t, "a", "acme", core.PhraseFilters{Exclude: []string{"jobs", "Hiring"}, MinLikes: 3}),
		filtered(t, "b", "crm", core.PhraseFilters{Exclude: []string{"JOBS"}, Require: []string{"hiring", "price"}}),
		filtered(t, "c", "tool", core.PhraseFilters{ExcludeAuthors: []string{"bot"}}),
	})
	if c.set.Len() != 3+3 {
		t.Fatalf("compiled %d texts, want 3 phrases and 3 distinct words", c.set.Len())
	}
}

// Past the words whose bits fit on the stack, the words found are
// searched instead, with the same answers: 300 phrases of 20 exclude
// words each, 6,000 distinct words.
func TestMatchManyFilterWords(t *testing.T) {
	t.Parallel()
	var ps []core.Phrase
	for i := range 300 {
		var f core.PhraseFilters
		for j := range core.MaxFilterEntries {
			f.Exclude = append(f.Exclude, fmt.Sprintf("w%d_%d", i, j))
		}
		if i%3 == 0 {
			f.Require = []string{fmt.Sprintf("r%d", i)}
		}
		ps = append(ps, filtered(t, fmt.Sprint(i), "acme", f))
	}
	c := Compile(ps)
	if c.nwords != 6100 || c.nwords <= 64*64 {
		t.Fatalf("%d distinct words", c.nwords)
	}
	got := c.Match(core.Post{}, "", "", "acme w7_19 w8_0 r9 r12 w12_3")
	var want []string
	for i := range 300 {
		if i != 7 && i != 8 && i != 12 && (i%3 != 0 || i == 9) {
			want = append(want, fmt.Sprint(i))
		}
	}
	if !slices.Equal(got, want) {
		t.Fatalf("Match = %v\nwant %v", got, want)
	}
}
