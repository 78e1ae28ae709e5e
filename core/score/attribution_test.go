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
		// A word said of another product counts a third, never nothing.
		{"acme", "acme is Really great", core.IntentPraise, `praises: "great"`},
	}
	for _, tt := range tests {
		t.Run(tt.phrase+": "+tt.text, func(t *testing.T) {
			got := score.Rate(tt.phrase, core.Post{Text: tt.text})
			checkScore(t, got)
			if got.Intent != tt.intent || !strings.HasPrefix(got.Reason, tt.reason) {
				t.Errorf("got %s (%s), want %s (%s…)", got.Intent, got.Reason, tt.intent, tt.reason)
			}
		})
	}
}
