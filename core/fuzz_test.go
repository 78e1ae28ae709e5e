package core

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzNormalizePhrase: any input either is refused with KindInvalid or
// comes back trimmed, single-spaced, 1 to 100 characters, free of control
// characters, and unchanged by a second pass.
func FuzzNormalizePhrase(f *testing.F) {
	for _, s := range []string{"acme", "  Acme \t CRM ", "c++", "#ai", "", "\x00", "a\u00a0b", strings.Repeat("é", 101), "\xff\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := NormalizePhrase(s)
		if err != nil {
			if !IsKind(err, KindInvalid) {
				t.Fatalf("error of kind %v: %v", KindOf(err), err)
			}
			return
		}
		n := utf8.RuneCountInString(got)
		if n < 1 || n > MaxPhraseLen || got != strings.TrimSpace(got) || strings.Contains(got, "  ") {
			t.Fatalf("NormalizePhrase(%q) = %q", s, got)
		}
		for _, r := range got {
			if unicode.IsControl(r) || (unicode.IsSpace(r) && r != ' ') {
				t.Fatalf("NormalizePhrase(%q) kept %U", s, r)
			}
		}
		if again, err := NormalizePhrase(got); err != nil || again != got {
			t.Fatalf("second pass: %q, %v", again, err)
		}
		if FoldKey(FoldKey(got)) != FoldKey(got) {
			t.Fatalf("FoldKey not idempotent on %q", got)
		}
	})
}

// FuzzNormalizeCommunity: accepted names are 3 to 21 lower-case letters,
// digits or underscores.
func FuzzNormalizeCommunity(f *testing.F) {
	for _, s := range []string{"r/SaaS", "/r/golang/", "ab", "foo-bar", "R/Ünï"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := NormalizeCommunity(s)
		if err != nil {
			return
		}
		if len(got) < 3 || len(got) > 21 || strings.ToLower(got) != got {
			t.Fatalf("NormalizeCommunity(%q) = %q", s, got)
		}
		for _, c := range got {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
				t.Fatalf("NormalizeCommunity(%q) = %q", s, got)
			}
		}
	})
}
