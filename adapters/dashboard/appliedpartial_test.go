package dashboard

import (
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// An application that read only the phrase's newest matches says the
// skipped ones among those are archived, not all the filters skip; an
// address that names no count, or not a number, leaves the count out.
func TestAppliedNoticeSaysOnlyTheNewestWereRead(t *testing.T) {
	f, win := &filterPhrases{p: core.Phrase{ID: "p1", Phrase: "acme", Platform: core.X, Status: core.Listening,
		Filters: core.PhraseFilters{Exclude: []string{"hiring"}}}}, &fakeWindow{partial: true}
	d := windowDashboard(t, f, win)
	w := serve(d, formPost("/app/phrases/p1/apply", nil, "same-origin", true))
	at := w.Header().Get("Location")
	if w.Code != 303 || !strings.HasPrefix(at, "/app/phrases/p1/filters?") || win.applied != 1 {
		t.Fatalf("apply: %d %s", w.Code, at)
	}
	body := get(d, at, true).Body.String()
	if strings.Contains(body, "The matches these filters skip are archived.") ||
		!strings.Contains(body, "The matches these filters skip, among the newest 9 read, are archived; older ones were not read. Undo below.") {
		t.Fatalf("after an application that read only the newest (%s):\n%s", at, body)
	}
	for _, q := range []string{"", "&n=", "&n=-1", "&n=0", "&n=%3Cb%3E9", "&n=99999999999999999999"} {
		body := get(d, "/app/phrases/p1/filters?done=appliednewest"+q, true).Body.String()
		if !strings.Contains(body, "The matches these filters skip, among the newest read, are archived; older ones were not read. Undo below.") {
			t.Fatalf("done=appliednewest%s:\n%s", q, body)
		}
	}
}
