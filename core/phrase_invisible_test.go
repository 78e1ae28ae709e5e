package core_test

import (
	"testing"

	"github.com/earshothq/earshot/core"
)

// TestPhraseTrimsInvisibleEdges checks that the invisible characters a
// paste brings along at a phrase's edges (a byte order mark from a file,
// a zero-width space or a direction mark from a web page) are trimmed as
// white space is: left on, the phrase reads "acme" everywhere it is
// shown but never matches a post that says acme, since the matcher takes
// the invisible character for one the post must hold. A phrase of
// nothing else is empty.
func TestPhraseTrimsInvisibleEdges(t *testing.T) {
	for _, in := range []string{"\ufeffacme", "acme\u200b", " \u200e acme \u2060\n", "\u202aacme\u202c"} {
		if got, err := core.NormalizePhrase(in); err != nil || got != "acme" {
			t.Errorf("NormalizePhrase(%q) = %q, %v; want \"acme\"", in, got, err)
		}
	}
	for _, in := range []string{"\u200b", "\ufeff \u200f"} {
		if got, err := core.NormalizePhrase(in); err == nil {
			t.Errorf("NormalizePhrase(%q) = %q, want an error", in, got)
		}
	}
	// Inside a phrase they stay: a joiner belongs to an emoji sequence or
	// to a Persian word.
	for _, in := range []string{"👩\u200d💻", "می\u200cخواهم"} {
		if got, err := core.NormalizePhrase(in); err != nil || got != in {
			t.Errorf("NormalizePhrase(%q) = %q, %v; want it as it is", in, got, err)
		}
	}
	f, err := core.NewPhraseFilters(core.PhraseFilters{Exclude: []string{"hiring\ufeff", "HIRING"}})
	if err != nil || len(f.Exclude) != 1 || f.Exclude[0] != "hiring" {
		t.Errorf("NewPhraseFilters exclude = %q, %v; want [hiring]", f.Exclude, err)
	}
}

// TestPhraseTrimsJoinersAndSoftHyphensAtEdges checks the other invisible
// characters a paste leaves at a phrase's edges: a soft hyphen from a
// hyphenated web page, a zero-width joiner or non-joiner, a combining
// grapheme joiner, the Mongolian vowel separator and the invisible
// operators. At an edge none joins or shows anything, so "acme" followed
// by one reads "acme" yet is found only in posts that hold it too, and a
// phrase of nothing else reads as blank.
func TestPhraseTrimsJoinersAndSoftHyphensAtEdges(t *testing.T) {
	for _, in := range []string{"acme\u00ad", "\u200dacme", "acme\u200c", "\u034facme", "acme\u180e", "\u2061acme\u2064", "\u200d \u00adacme\u200c "} {
		if got, err := core.NormalizePhrase(in); err != nil || got != "acme" {
			t.Errorf("NormalizePhrase(%q) = %q, %v; want \"acme\"", in, got, err)
		}
	}
	for _, in := range []string{"\u200d", "\u00ad", "\u200c\u200d", "\u2062", "\u180e", "\u034f"} {
		if got, err := core.NormalizePhrase(in); err == nil {
			t.Errorf("NormalizePhrase(%q) = %q, want an error", in, got)
		}
	}
	// Inside, a soft hyphen is the word's own: kept as given.
	if got, err := core.NormalizePhrase("ac\u00adme"); err != nil || got != "ac\u00adme" {
		t.Errorf("NormalizePhrase inner soft hyphen = %q, %v", got, err)
	}
}
