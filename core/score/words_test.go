package score

import (
	"testing"
	"unicode"

	"github.com/earshothq/earshot/match"
)

// TestCharacterRulesAreTheMatchers checks the copy in words.go against
// package match over every rune. Only this test imports match: core
// itself does not reach it (architecture_test.go).
func TestCharacterRulesAreTheMatchers(t *testing.T) {
	bad := 0
	for r := rune(0); r <= unicode.MaxRune && bad < 10; r++ {
		if got, want := foldRune(r), match.Fold(r); got != want {
			t.Errorf("foldRune(%U) = %U, match.Fold %U", r, got, want)
			bad++
		}
		if got, want := needsBoundary(r), match.NeedsBoundary(r); got != want {
			t.Errorf("needsBoundary(%U) = %v, match.NeedsBoundary %v", r, got, want)
			bad++
		}
	}
}
