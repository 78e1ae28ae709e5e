package dashboard

import (
	"html/template"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/match"
)

// TestHighlightThroughInvisibles checks that the highlight reads the
// characters a reader does not see as the matcher does, as if absent,
// and marks the span of the original text: an invisible character inside
// the phrase is inside the mark, one beside it stays outside.
func TestHighlightThroughInvisibles(t *testing.T) {
	cases := []struct {
		name   string
		text   string
		phrase string
		want   template.HTML
	}{
		{"soft hyphen inside", "ac\u00adme rocks", "acme", "<mark>ac\u00adme</mark> rocks"},
		{"direction mark before the space", "we use acme\u200e crm", "acme crm", "we use <mark>acme\u200e crm</mark>"},
		{"white space run", "new \u200b york", "new york", "<mark>new \u200b york</mark>"},
		{"outside at the edges", "\ufeffacme\u200b!", "acme", "\ufeff<mark>acme</mark>\u200b!"},
		{"phrase holding one", "ACME and ac\u200bme", "ac\u00adme", "<mark>ACME</mark> and <mark>ac\u200bme</mark>"},
		{"still a word after", "acme\u00ads", "acme", "acme\u00ads"},
		{"still a word before", "x\u200bacme", "acme", "x\u200bacme"},
		{"word joiner joins", "acme\u2060crm", "acme", "acme\u2060crm"},
		{"persian non-joiner", "من میخواهم", "می\u200cخواهم", "من <mark>میخواهم</mark>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := highlight(c.text, c.phrase, core.Search{}); got != c.want {
				t.Fatalf("highlight(%q, %q) =\n%q\nwant\n%q", c.text, c.phrase, got, c.want)
			}
		})
	}
}

// The highlight marks a phrase in a text exactly when the matcher finds
// it there, with invisible characters among the text's and the phrase's,
// and each mark starts and ends on a character a reader sees.
func TestHighlightMarksWhatTheMatcherFindsThroughInvisibles(t *testing.T) {
	alphabet := []string{"a", "b", "é", "\u0301", "_", " ", "-", "東", "ก", "\u00ad", "\u200b", "\u200c", "\u200e", "\u2060", "\ufeff"}
	rng := rand.New(rand.NewPCG(7, 8))
	random := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	found := 0
	for range 20000 {
		phrase, err := core.NormalizePhrase(random(1 + rng.IntN(4)))
		if err != nil {
			continue
		}
		text := random(rng.IntN(5)) + phrase + random(rng.IntN(5))
		if rng.IntN(3) == 0 {
			text = random(1 + rng.IntN(8))
		}
		matched := len(match.Compile([]string{phrase}).Find(text)) > 0
		if matched {
			found++
		}
		spans := phraseSpans(text, phrase)
		if marked := len(spans) > 0; marked != matched {
			t.Fatalf("phrase %q in %q: matched %v, marked %v", phrase, text, matched, marked)
		}
		for _, s := range spans {
			if s[0] == s[1] || core.Invisible([]rune(text[s[0]:s[1]])[0]) || core.Invisible([]rune(text[s[0]:s[1]])[len([]rune(text[s[0]:s[1]]))-1]) {
				t.Fatalf("phrase %q in %q: mark %q starts or ends on an invisible character", phrase, text, text[s[0]:s[1]])
			}
		}
	}
	if found < 4000 {
		t.Fatalf("only %d matches checked", found)
	}
}
