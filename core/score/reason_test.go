package score_test

import (
	"strings"
	"testing"
	"unicode"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/score"
)

// TestReasonCarriesNoBidiControls checks that a reason quoting a
// stranger's post holds none of the bidirectional controls (Unicode's
// Bidi_Control): an override left open in a one-line reason turns the
// rest of the line around wherever it is shown, the text that follows
// the reason included.
func TestReasonCarriesNoBidiControls(t *testing.T) {
	for _, text := range []string{
		"acme vs \u202ehubspot? thoughts",
		"acme vs \u2067hubspot\u2069?",
		"acme vs hub\u200espot\u061c?",
	} {
		got := score.Rate("ac\u202eme", core.Post{Text: text})
		if strings.ContainsFunc(got.Reason, func(r rune) bool { return unicode.Is(unicode.Bidi_Control, r) }) {
			t.Errorf("Rate(%q).Reason = %q holds a bidirectional control", text, got.Reason)
		}
	}
}
