package core_test

import (
	"testing"
	"unicode"

	"github.com/earshothq/earshot/core"
)

// TestInvisible checks, over every code point, that Invisible holds
// exactly the format characters it names; that each is a format
// character (Cf), neither a word character nor white space, so reading
// it as absent changes no other rule; that a phrase never starts or ends
// with one (NormalizePhrase trims them), so a phrase's edges are the
// same with them or without; and that FoldKey keeps them, so no phrase's
// key changes.
func TestInvisible(t *testing.T) {
	want := func(r rune) bool {
		switch {
		case r == 0x00ad, r == 0x061c, r == 0xfeff,
			0x200b <= r && r <= 0x200f, 0x202a <= r && r <= 0x202e,
			0x2060 <= r && r <= 0x2064, 0x2066 <= r && r <= 0x2069:
			return true
		}
		return false
	}
	n := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if got := core.Invisible(r); got != want(r) {
			t.Fatalf("Invisible(%U) = %v", r, got)
		}
		if !want(r) {
			continue
		}
		n++
		if !unicode.Is(unicode.Cf, r) || core.IsWordRune(r) || unicode.IsSpace(r) {
			t.Errorf("%U: Cf %v, word %v, space %v", r, unicode.Is(unicode.Cf, r), core.IsWordRune(r), unicode.IsSpace(r))
		}
		if got, err := core.NormalizePhrase(string(r) + "acme" + string(r)); err != nil || got != "acme" {
			t.Errorf("NormalizePhrase with %U at the edges = %q, %v", r, got, err)
		}
		if got := core.FoldKey("AC" + string(r) + "ME"); got != "ac"+string(r)+"me" {
			t.Errorf("FoldKey with %U = %q", r, got)
		}
	}
	if n != 22 {
		t.Errorf("%d invisible characters, want 22", n)
	}
}
