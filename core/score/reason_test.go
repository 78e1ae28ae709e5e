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

// TestReasonQuotesThePost checks that the reason quotes the post's own
// words, capitals, full-width forms and curly apostrophes as written,
// not the lower-cased copy the cues read; white space in the quote is
// one space, and the title and the text are quoted from where they are.
func TestReasonQuotesThePost(t *testing.T) {
	tests := []struct {
		phrase string
		post   core.Post
		want   string
	}{
		{"acme", core.Post{Text: "Support took three days. Not Great."}, `complains: "Not Great"`},
		{"mailchimp", core.Post{Text: "ANY ALTERNATIVES TO MAILCHIMP?"}, `asks for alternatives: "ALTERNATIVES" near "mailchimp"`},
		{"notion", core.Post{Text: "Notion Doesn’t Work offline"}, `reports it broken: "Doesn’t Work" near "notion"`},
		{"acme", core.Post{Text: "ＡＣＭＥ　ＡＬＴＥＲＮＡＴＩＶＥＳ"}, `asks for alternatives: "ＡＬＴＥＲＮＡＴＩＶＥＳ" near "acme"`},
		{"acme", core.Post{Text: "acme is\n\n NOT \t great"}, `complains: "NOT great" near "acme"`},
		{"acme", core.Post{Title: "  Thoughts on ACME  ", Text: "  Any Alternatives?"}, `asks for alternatives: "Alternatives" near "acme"`},
		{"acme", core.Post{Title: "ACME: Not", Text: "Great, honestly"}, `complains: "Not Great" near "acme"`},
		{"acme", core.Post{Title: "Acme Review", Text: ""}, `mentions "acme" with no buying, support or sales cue`},
		{"acme", core.Post{Text: "acme \xff Alternatives\xfe?"}, `asks for alternatives: "Alternatives" near "acme"`},
	}
	for _, tt := range tests {
		got := score.Rate(tt.phrase, tt.post)
		checkScore(t, got)
		if got.Reason != tt.want {
			t.Errorf("Rate(%q, %+v).Reason = %q, want %q", tt.phrase, tt.post, got.Reason, tt.want)
		}
	}
}
