package score_test

import (
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/score"
)

func FuzzRate(f *testing.F) {
	f.Add("notion", "", "any alternatives to notion?")
	f.Add("crm", "We're hiring", "apply at careers.example.com")
	f.Add("", "", "")
	f.Fuzz(func(t *testing.T, phrase, title, text string) {
		got := score.Rate(phrase, core.Post{Title: title, Text: text})
		checkScore(t, got)
	})
}
