package score_test

import (
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/score"
)

// TestRateReadsThroughInvisibles checks that the scorer reads a post as
// the matcher does, with the characters a reader does not see
// (core.Invisible) as if absent: the post scores as it does without
// them, its cues and the phrase near them included, and the reason
// quotes the post's own words. The posts are made up in the shapes
// these characters come in: a soft hyphen from a web page's
// hyphenation, a direction mark beside a space in a post that mixes
// Hebrew with Latin, a byte order mark from a pasted file.
func TestRateReadsThroughInvisibles(t *testing.T) {
	tests := []struct {
		phrase      string
		post, plain core.Post
	}{
		{"acme crm", core.Post{Text: "acme\u200e crm: any alter\u00adnatives?"}, core.Post{Text: "acme crm: any alternatives?"}},
		{"acme", core.Post{Text: "\ufeffac\u00adme keeps crash\u200bing, it\u2060's awful"}, core.Post{Text: "acme keeps crashing, it's awful"}},
		{"ac\u00adme", core.Post{Title: "\u202bשלום\u202c acme", Text: "Looking to buy a CRM \u200e like it"}, core.Post{Title: "שלום acme", Text: "Looking to buy a CRM like it"}},
	}
	for _, tt := range tests {
		got, want := score.Rate(tt.phrase, tt.post), score.Rate("acme", tt.plain)
		checkScore(t, got)
		if got.Value != want.Value || got.Intent != want.Intent {
			t.Errorf("Rate(%q, %+v) = %d %s (%s), without the invisible characters %d %s (%s)",
				tt.phrase, tt.post, got.Value, got.Intent, got.Reason, want.Value, want.Intent, want.Reason)
		}
	}
	got := score.Rate("acme crm", core.Post{Text: "acme\u200e crm: any alter\u00adnatives?"})
	if want := "asks for alternatives: \"alter\u00adnatives\" near \"acme crm\""; got.Reason != want {
		t.Errorf("reason %q, want %q", got.Reason, want)
	}
}
