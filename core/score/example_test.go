package score_test

import (
	"context"
	"fmt"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/score"
)

// Rate scores a post that matched a phrase: a value from 0 to 100, an
// intent and a one-line reason naming the cue that decided it.
func ExampleRate() {
	post := core.Post{
		Author: "jane",
		Title:  "Looking for an alternative to Acme CRM",
		Text:   "Our team of 12 is outgrowing it. Budget is about $50 a seat. Any recommendations?",
	}
	s := score.Rate("acme crm", post)
	fmt.Println(s.Value, s.Intent)
	fmt.Println(s.Reason)

	s = score.Rate("acme crm", core.Post{Text: "We're hiring a senior engineer to work on Acme CRM integrations. Apply now!"})
	fmt.Println(s.Value, s.Intent)
	// Output:
	// 90 recommendation
	// asks for alternatives: "alternative" near "acme crm"
	// 5 promotion
}

// Rules is the scorer behind the ports.Scorer interface; it never fails,
// so it also serves as the fallback of a scorer that can.
func ExampleRules_Score() {
	m := core.Match{Phrase: "acme crm", Platform: core.Reddit, Post: core.Post{Text: "Acme CRM keeps crashing and support never answers. So frustrated."}}
	s, err := score.Rules{}.Score(context.Background(), m)
	fmt.Println(s.Value, s.Intent, err)
	// Output:
	// 74 complaint <nil>
}
