package dashboard

import (
	"html"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/earshothq/earshot/ports"
)

// The challenge page gives both ways, step by step: the helper's own
// browser (earshot helper --challenge) and the owner's browser with a
// cookie upload; then "Mark resolved".
func TestChallengePageSaysBothWays(t *testing.T) {
	d := newTestDashboard(t, ports.InboxItem{})
	w := httptest.NewRecorder()
	d.render(w, httptest.NewRequest("GET", "/app/accounts/a1/challenge", nil), 200, "challenge",
		&challengeView{layout: layout{Title: "Complete the x challenge"}, Account: accountView{AccountID: "a1", Platform: "x", Challenge: true}, Home: "https://x.com/"})
	page := html.UnescapeString(w.Body.String())
	for _, want := range []string{
		"earshot helper --challenge x", "Solve the challenge in the browser window that opens", "saves the refreshed session",
		"Open https://x.com/", "Replace the cookies", "Mark resolved",
	} {
		if !strings.Contains(stripTags(page), want) {
			t.Errorf("the challenge page does not say %q:\n%s", want, page)
		}
	}
	if strings.Index(page, "--challenge x") > strings.Index(page, "Replace the cookies") {
		t.Error("the helper's way should come first")
	}
}

func stripTags(s string) string {
	var b strings.Builder
	in := false
	for _, r := range s {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
		case !in:
			b.WriteRune(r)
		}
	}
	return b.String()
}
