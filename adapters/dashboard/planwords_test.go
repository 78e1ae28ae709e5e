package dashboard

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// oneHookOneChannel holds one webhook and one channel, which the plan
// counts as two webhooks (docs/channels.md, "Plan limit").
type oneHookOneChannel struct{ fakePhrases }

func (oneHookOneChannel) Plan(context.Context, string) (core.Plan, error) {
	return core.FreePlan(core.Limits{PhrasesPerPlatform: 1, AccountsPerPlatform: 1, WebhooksPerPerson: 3},
		core.Usage{Phrases: map[core.Platform]int{}, Accounts: map[core.Platform]int{}, Webhooks: 2, Owners: 1}), nil
}

// The Plan page's count of webhooks counts channels too, and says so:
// an owner with one webhook and one channel must not read "2 webhooks"
// and look for a second.
func TestPlanCountsChannelsWithWebhooks(t *testing.T) {
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps{Sessions: fakeSessions{}, Phrases: oneHookOneChannel{}})
	if err != nil {
		t.Fatal(err)
	}
	w := get(d, "/app/plan", true)
	body := w.Body.String()
	if w.Code != 200 || !strings.Contains(body, `<h2 id="wh-h">Webhooks and channels</h2>`) || !strings.Contains(body, "2 of 3") {
		t.Fatalf("plan page (%d):\n%s", w.Code, body)
	}
}
