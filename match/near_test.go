package match

import "testing"

// TestFindScorerNearCases pins what the matcher finds in the posts of
// core/score's TestRateNearFollowsMatching, whose wants say the scorer
// counts the phrase near a cue exactly where the matcher finds it. Both
// read characters by core's rules (core.MatchFold, core.NeedsBoundary);
// this half keeps the scorer's cases true of the matcher without a test
// in core importing match. A case added there belongs here too.
func TestFindScorerNearCases(t *testing.T) {
	tests := []struct {
		name        string
		phrase      string
		title, text string
		found       bool
	}{
		{"japanese: kana after the phrase", "ソニー", "", "ソニーのヘッドホン、any alternatives?", true},
		{"japanese: latin name before kana", "acme", "", "acmeの新製品 any alternatives?", true},
		{"chinese: han after the phrase", "小米", "", "小米手机 any alternatives?", true},
		{"chinese: han before the phrase", "小米", "", "买小米 any alternatives?", true},
		{"korean: particle after the phrase", "삼성", "", "삼성은 any alternatives?", true},
		{"thai: no spaces between words", "ซัมซุง", "", "มือถือซัมซุงดีไหม any alternatives?", true},
		{"full-width text", "acme", "", "ＡＣＭＥ any alternatives?", true},
		{"full-width phrase", "ＡＣＭＥ", "", "acme: any alternatives?", true},
		{"reversed apostrophe", "joe's crm", "", "Joe\u201bs CRM: any alternatives?", true},
		{"right single quotation mark", "joe\u2019s crm", "", "joe's crm: any alternatives?", true},
		{"greek final sigma", "σοφίας", "", "ΣΟΦΊΑΣ: any alternatives?", true},
		{"modifier letter apostrophe", "acme", "", "acme\u02bcs alternatives?", false},
		{"dotted capital i", "istanbul", "", "İSTANBUL alternatives?", false},
		{"latin word still needs its boundary", "acme", "", "acmes and acmeé, any alternatives?", false},
		{"thai word glued to latin", "acme", "", "acmeไทย any alternatives?", true},
		{"phrase across title and text", "acme corp", "Thoughts on acme", "corp alternatives?", false},
		{"phrase in the title", "acme corp", "acme corp", "any alternatives?", true},
		{"soft hyphen inside the phrase's word", "acme", "", "ac\u00adme: any alternatives?", true},
		{"direction mark beside a space", "acme crm", "", "acme\u200e crm: any alternatives?", true},
		{"word joiner joins", "acme", "", "acme\u2060crm any alternatives?", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if found := len(Compile([]string{tt.phrase}).Find(tt.title, tt.text)) > 0; found != tt.found {
				t.Errorf("Find(%q) in %q, %q: found %v, want %v", tt.phrase, tt.title, tt.text, found, tt.found)
			}
		})
	}
}
