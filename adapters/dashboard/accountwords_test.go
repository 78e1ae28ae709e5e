package dashboard

import (
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
)

// The accounts page words each card's state and action for the owner
// ("action required", "Open the challenge"), keeping the view's codes in
// its attributes; the reddit card of an owner with no reddit account
// says the server reads reddit, not "not_connected".
func TestAccountsPageWordsStateAndAction(t *testing.T) {
	acc := []health.Status{
		health.StatusOf("", core.Reddit, false, health.Record{}),
		health.StatusOf("a-fb", core.Facebook, true, health.Record{LastIssue: health.Checkpointed, LastCheckedAt: clock0.Add(-time.Minute)}),
	}
	s := accountSections(t, page(t, nextDashboard(t, []core.Phrase{unread("p1", "acme", core.Reddit)}, acc, nil), "/app/accounts"))
	for _, want := range []string{`class="state action_required">action required</span>`, `data-action="open_challenge">Open the challenge`} {
		if !strings.Contains(s["facebook"], want) {
			t.Fatalf("the facebook card lacks %q:\n%s", want, s["facebook"])
		}
	}
	if !strings.Contains(s["reddit"], ">read by the server</span>") || strings.Contains(s["reddit"], ">not_connected<") {
		t.Fatalf("the reddit card:\n%s", s["reddit"])
	}
}
