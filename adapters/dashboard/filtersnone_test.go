package dashboard

import (
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// A phrase without filters has nothing they skip: its filters page
// shows no card about them, not even when it has more matches than a
// preview reads, unless an application can still be undone, which is
// then all the card offers.
func TestFiltersPageWithoutFilters(t *testing.T) {
	f := &filterPhrases{p: core.Phrase{ID: "p1", Phrase: "acme", Platform: core.X, Status: core.Listening}}
	for _, win := range []*fakeWindow{{}, {older: true}} {
		d := windowDashboard(t, f, win)
		body := get(d, "/app/phrases/p1/filters", true).Body.String()
		if strings.Contains(body, `id="apply-h"`) || strings.Contains(body, "/apply") || strings.Contains(body, "until you archive them below") {
			t.Fatalf("older %v: a card about filters the phrase lacks:\n%s", win.older, body)
		}
	}
	win := &fakeWindow{last: &core.ArchiveSet{ID: "s1", PhraseID: "p1", Matches: 3, CreatedAt: seenAt}}
	body := get(windowDashboard(t, f, win), "/app/phrases/p1/filters", true).Body.String()
	if !strings.Contains(body, `action="/app/phrases/p1/apply/s1/undo"`) || !strings.Contains(body, "3 matches were archived on applying the filters") ||
		strings.Contains(body, `id="apply-count"`) || strings.Contains(body, `action="/app/phrases/p1/apply"`) {
		t.Fatalf("the undo of filters since removed:\n%s", body)
	}
}
