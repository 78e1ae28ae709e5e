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
