package dashboard

import (
	"net/url"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// A preview that read only a phrase's newest matches and found none the
// filters drop does not say none of its matches would be dropped: the
// older ones were not read.
func TestFiltersPreviewOfNewestMatchesOnly(t *testing.T) {
	f := &filterPhrases{p: core.Phrase{ID: "p1", Phrase: "acme", Platform: core.X, Status: core.Listening}}
	d := windowDashboard(t, f, &fakeWindow{older: true})
	w := serve(d, formPost("/app/phrases/p1/filters", url.Values{"exclude": {"hiring"}, "action": {"preview"}}, "same-origin", true))
	body := w.Body.String()
	if w.Code != 200 || strings.Contains(body, "None of this phrase's matches would be dropped") ||
		!strings.Contains(body, "None of this phrase's newest 9 matches would be dropped; older ones were not read.") {
		t.Fatalf("preview of the newest matches: %d\n%s", w.Code, body)
	}
}
