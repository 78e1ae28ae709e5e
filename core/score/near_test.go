package score_test

import (
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/score"
)

// TestRateNearFollowsMatching checks that the phrase counts as near a cue
// exactly where the matcher (package match) would find it there: no
// boundary is asked for beside a character of a script written without
// spaces, letters compare as the matcher folds them (typographic
// apostrophes and full-width forms included), and title and text are
// searched apart. The posts are made up, each around the one rule it
// shows, and short enough that every occurrence is near the cue. The
// scorer reads characters by the matcher's rules in core (core.MatchFold,
// core.NeedsBoundary); each case's want is checked against the matcher
// itself in package match (TestFindScorerNearCases), so no test in core
// imports match.
func TestRateNearFollowsMatching(t *testing.T) {
	tests := []struct {
		name   string
		phrase string
		post   core.Post
		near   bool
	}{
		{"japanese: kana after the phrase", "ソニー", core.Post{Text: "ソニーのヘッドホン、any alternatives?"}, true},
		{"japanese: latin name before kana", "acme", core.Post{Text: "acmeの新製品 any alternatives?"}, true},
		{"chinese: han after the phrase", "小米", core.Post{Text: "小米手机 any alternatives?"}, true},
		{"chinese: han before the phrase", "小米", core.Post{Text: "买小米 any alternatives?"}, true},
		{"korean: particle after the phrase", "삼성", core.Post{Text: "삼성은 any alternatives?"}, true},
		{"thai: no spaces between words", "ซัมซุง", core.Post{Text: "มือถือซัมซุงดีไหม any alternatives?"}, true},
		{"full-width text", "acme", core.Post{Text: "ＡＣＭＥ any alternatives?"}, true},
		{"full-width phrase", "ＡＣＭＥ", core.Post{Text: "acme: any alternatives?"}, true},
		{"reversed apostrophe", "joe's crm", core.Post{Text: "Joe\u201bs CRM: any alternatives?"}, true},
		{"right single quotation mark", "joe\u2019s crm", core.Post{Text: "joe's crm: any alternatives?"}, true},
		{"greek final sigma", "σοφίας", core.Post{Text: "ΣΟΦΊΑΣ: any alternatives?"}, true},
		// U+02BC is a letter to the matcher, not an apostrophe: "acme" is
		// not found in "acmeʼs".
		{"modifier letter apostrophe", "acme", core.Post{Text: "acme\u02bcs alternatives?"}, false},
		// "İ" folds to neither "i" nor "ı" under simple folding.
		{"dotted capital i", "istanbul", core.Post{Text: "İSTANBUL alternatives?"}, false},
		{"latin word still needs its boundary", "acme", core.Post{Text: "acmes and acmeé, any alternatives?"}, false},
		{"thai word glued to latin", "acme", core.Post{Text: "acmeไทย any alternatives?"}, true},
		// The matcher searches the title and the text apart, so a phrase
		// never spans the two.
		{"phrase across title and text", "acme corp", core.Post{Title: "Thoughts on acme", Text: "corp alternatives?"}, false},
		{"phrase in the title", "acme corp", core.Post{Title: "acme corp", Text: "any alternatives?"}, true},
		// A character a reader does not see is read as if absent.
		{"soft hyphen inside the phrase's word", "acme", core.Post{Text: "ac\u00adme: any alternatives?"}, true},
		{"direction mark beside a space", "acme crm", core.Post{Text: "acme\u200e crm: any alternatives?"}, true},
		{"word joiner joins", "acme", core.Post{Text: "acme\u2060crm any alternatives?"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := score.Rate(tt.phrase, tt.post)
			checkScore(t, got)
			if got.Intent != core.IntentRecommendation {
				t.Fatalf("intent %s, want %s (%s)", got.Intent, core.IntentRecommendation, got.Reason)
			}
			if near := strings.Contains(got.Reason, " near "); near != tt.near {
				t.Errorf("near %v, want %v (%d, %s)", near, tt.near, got.Value, got.Reason)
			}
		})
	}
}

// TestRateCuesReadTypedVariants checks that the cues read what the
// matcher reads as the same text: full-width forms as ASCII, and the
// modifier letter apostrophe, which the text keeps as the matcher does,
// as an apostrophe.
func TestRateCuesReadTypedVariants(t *testing.T) {
	tests := []struct {
		name   string
		post   core.Post
		intent core.Intent
	}{
		{"full-width", core.Post{Text: "ＡＮＹ ＡＬＴＥＲＮＡＴＩＶＥＳ？"}, core.IntentRecommendation},
		{"modifier letter apostrophe", core.Post{Text: "Notion doesnʼt work offline at all"}, core.IntentComplaint},
		{"right single quotation mark", core.Post{Text: "Notion doesn’t work offline at all"}, core.IntentComplaint},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := score.Rate("notion", tt.post)
			checkScore(t, got)
			if got.Intent != tt.intent {
				t.Errorf("intent %s, want %s (%s)", got.Intent, tt.intent, got.Reason)
			}
		})
	}
}
