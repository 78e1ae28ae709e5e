package score_test

import (
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/score"
)

// TestRateAttributesToProduct checks that a word of praise or complaint
// counts less where its clause names another product, nearer to it than
// the phrase: a competitor's faults in a post about the phrase are not
// the phrase's. The same post read for the competitor keeps them.
func TestRateAttributesToProduct(t *testing.T) {
	moved := "Moved our sales team from Salesforce to Pipedrive last year. Salesforce was a nightmare for a team our size; Pipedrive is great."
	tests := []struct {
		phrase string
		text   string
		intent core.Intent
		reason string // the reason starts with it
	}{
		{"pipedrive", moved, core.IntentPraise, `praises: "great"`},
		{"salesforce", moved, core.IntentComplaint, `complains: "nightmare"`},
		{"fastmail", "moved off gmail to fastmail this weekend. gmail's spam filter was garbage, fastmail has been solid so far", core.IntentPraise, `praises: "solid"`},
		{"zoho crm", "tried zoho crm after hubspot's price hike. not bad for the price", core.IntentPraise, `praises: "not bad"`},
		// A possessive of a common noun names no product.
		{"acme", "Tried acme last month. the app's sync is terrible", core.IntentComplaint, `complains: "terrible"`},
		// Nor does an indefinite pronoun's, nor the phrase's own part.
		{"acme", "I love acme, but everything's terrible since the update", core.IntentComplaint, `complains: "terrible"`},
		{"acme", "acme support's been terrible, the app is great", core.IntentComplaint, `complains: "terrible"`},
		{"acme", "the acme team's reply was awesome, the app is bad", core.IntentPraise, `praises: "awesome"`},
		// A word said of another product counts a third, never nothing.
		{"acme", "acme is Really great", core.IntentPraise, `praises: "great"`},
	}
	for _, tt := range tests {
		rateReads(t, tt.phrase, tt.text, tt.intent, tt.reason)
	}
}

// TestRateCapitalsThatNameNothing checks that a capital that names no
// product leaves the verdict as it is with the capital lowered: a word
// after a line break, an emoji, a dash, an opening bracket or quote
// starts a sentence as much as one after a full stop does, and days,
// months and the pronoun "I" typed without its apostrophe are no
// products.
func TestRateCapitalsThatNameNothing(t *testing.T) {
	for _, text := range []string{
		"acme is great\nSetup was terrible",
		"love acme 😍 Setup was terrible though",
		"acme is fine — Setup was terrible",
		"acme is fine (Setup was terrible)",
		`my take on acme "Setup was terrible"`,
		"Love acme, but since Monday sync is terrible",
		"Tried acme in January and it was terrible",
		"Ive been on acme a year and Im sick of it",
	} {
		got := score.Rate("acme", core.Post{Text: text})
		checkScore(t, got)
		if want := score.Rate("acme", core.Post{Text: strings.ToLower(text)}); got != want {
			t.Errorf("%q: %s %d (%s), lower-cased %s %d (%s)", text, got.Intent, got.Value, got.Reason, want.Intent, want.Value, want.Reason)
		}
	}
}

// TestRatePeopleAndTitleCaseNameNothing checks that a capital that
// marks a person or emphasis, not another product, leaves the verdict as
// it is with the capital lowered: someone asked, told or thanked ("I
// asked Sarah"), someone who says or asks ("Sarah said", "Sarah from
// support"), and words written in title case ("This Is The Best") or
// stressed with a capital ("is Really great").
func TestRatePeopleAndTitleCaseNameNothing(t *testing.T) {
	for _, text := range []string{
		"Setup was terrible until I asked Sarah about acme",
		"the onboarding call was awesome thanks Priya, acme itself is slow",
		"acme is fine, but the sync Sarah said was broken is terrible",
		"acme is ok but the rep Sarah from support was awesome",
		"acme is fine but Setup Is Really Terrible",
		"honestly This Is Awesome, acme support is slow",
		"acme is slow but the dashboard Is Awesome",
		"the acme app is Really terrible, i love the price",
	} {
		got := score.Rate("acme", core.Post{Text: text})
		checkScore(t, got)
		want := score.Rate("acme", core.Post{Text: strings.ToLower(text)})
		if got.Intent != want.Intent || got.Value != want.Value {
			t.Errorf("%q: %s %d (%s), lower-cased %s %d (%s)", text, got.Intent, got.Value, got.Reason, want.Intent, want.Value, want.Reason)
		}
	}
	// A product's name stays one beside those words.
	rateReads(t, "pipedrive", "I told everyone Pipedrive is great and Salesforce was a nightmare", core.IntentPraise, `praises`)
	rateReads(t, "acme", "acme is great and Salesforce is terrible", core.IntentPraise, `praises`)
}

// A post of capitalised words each behind a mark the run of capitals
// does not look through ("*Xaa *Xab …", emphasis as markdown writes
// it) makes every word a name to weigh. Whether each opens title case
// was read again to the end of its line, so a post twice as long cost
// four times as much; the work now grows with the post. Counted in
// allocations, which do not vary from run to run as time does.
func TestRateNamesCostGrowsWithThePost(t *testing.T) {
	post := func(n int) core.Post {
		var b strings.Builder
		b.WriteString("acme is great ")
		for i := range n {
			b.WriteString("*X" + string(rune('a'+i/26%26)) + string(rune('a'+i%26)) + " ")
		}
		return core.Post{Text: b.String()}
	}
	allocs := func(n int) float64 {
		p := post(n)
		return testing.AllocsPerRun(5, func() { score.Rate("acme", p) })
	}
	short, long := allocs(300), allocs(600)
	if long > 2.5*short {
		t.Errorf("rating a post of 600 such words allocates %.0f times, of 300 %.0f: more than twice", long, short)
	}
}
