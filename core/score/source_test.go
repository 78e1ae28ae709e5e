package score

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzSource checks that source finds, for every span of normalise(s),
// the part of s that normalises to it, so that the reason quotes the
// words the cues read.
func FuzzSource(f *testing.F) {
	for _, s := range []string{
		"Not  Great",
		"  ＡＣＭＥ\t\nDoesn’t Work  ",
		"İSTANBUL ΣΟΦΊΑΣ ẞ \u212a",
		"a\xffb \xc3 c",
		"acme\u202e is \u2028 great",
		"\ufeffAc\u00adme\u200e \u200b Crm\u00ad",
		"",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 64 {
			s = s[:64]
		}
		norm := normalise(s)
		for a := 0; a <= len(norm); a++ {
			if a < len(norm) && !utf8.RuneStart(norm[a]) {
				continue
			}
			for b := a; b <= len(norm); b++ {
				if b < len(norm) && !utf8.RuneStart(norm[b]) {
					continue
				}
				got := normalise(source(s, a, b))
				if want := strings.Trim(norm[a:b], " "); got != want {
					t.Fatalf("source(%q, %d, %d) = %q, normalised %q, want %q", s, a, b, source(s, a, b), got, want)
				}
			}
		}
	})
}
