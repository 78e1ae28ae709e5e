package dashboard

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
)

// The challenge page of an account with no challenge to complete (one
// resolved since the tab was opened, or never asked for) says so, and
// does not walk the owner through solving one.
func TestChallengePageWithoutAChallenge(t *testing.T) {
	st := health.StatusOf("a-x", core.X, true, health.Record{LastCheckedAt: clock0.Add(-time.Hour)})
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return clock0 }},
		Deps{Sessions: fakeSessions{}, Inbox: fakeInbox{}, Phrases: fakePhrases{}, Accounts: fixedAccounts{[]health.Status{st}}})
	if err != nil {
		t.Fatal(err)
	}
	w := get(d, "/app/accounts/a-x/challenge", true)
	body := w.Body.String()
	if w.Code != 200 || strings.Contains(body, "Solve it in one of two ways") || strings.Contains(body, `id="challenge-done"`) ||
		!strings.Contains(body, "No challenge to complete on x now") {
		t.Fatalf("%d\n%s", w.Code, body)
	}
}
