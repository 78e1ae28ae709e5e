package score_test

import (
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/score"
)

// BenchmarkRate rates every post of the labelled sets once per
// iteration: short posts of the shapes the pipeline scores, so the
// figure moves with the cost of the cues on real text.
func BenchmarkRate(b *testing.B) {
	var set []labelled
	for _, path := range []string{"testdata/labelled.json", "testdata/holdout.json"} {
		set = append(set, readLabelled(b, path)...)
	}
	b.ResetTimer()
	for b.Loop() {
		for _, l := range set {
			score.Rate(l.Phrase, core.Post{Title: l.Title, Text: l.Text})
		}
	}
}

// BenchmarkRateLong rates one post of core.MaxPostText bytes of chatter
// dense in the words cues and their negations look for.
func BenchmarkRateLong(b *testing.B) {
	unit := "Not great, not terrible: support isn't bad and the app never crashes, but is it worth it? "
	text := strings.Repeat(unit, core.MaxPostText/len(unit))
	for b.Loop() {
		score.Rate("acme", core.Post{Text: text})
	}
}
