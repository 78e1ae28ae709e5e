package core_test

import (
	"testing"

	"github.com/earshothq/earshot/core"
)

// A refusal says what the limit is and what the owner has, and who
// raises it: on a deployment with one owner that owner runs it, so it
// names the setting; with more owners it sends them to the operator.
func TestPlanLimitRefusalNamesTheSetting(t *testing.T) {
	l := core.FreeLimits
	full := func(owners int) core.Usage {
		return core.Usage{Phrases: map[core.Platform]int{core.Reddit: 1}, Accounts: map[core.Platform]int{core.X: 1}, Owners: owners}
	}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"phrase, alone", l.CheckNewPhrase(full(1), core.Reddit),
			"the plan allows 1 phrase per platform (reddit has 1); the operator raises it with EARSHOT_PLAN_PHRASES_PER_PLATFORM"},
		{"phrase, shared", l.CheckNewPhrase(full(2), core.Reddit),
			"the plan allows 1 phrase per platform (reddit has 1); ask the operator to raise it"},
		{"account, alone", core.Limits{AccountsPerPlatform: 2}.CheckNewAccount(core.Usage{Accounts: map[core.Platform]int{core.X: 2}, Owners: 1}, core.X),
			"the plan allows 2 accounts per platform (x has 2); the operator raises it with EARSHOT_PLAN_ACCOUNTS_PER_PLATFORM"},
		{"no webhooks, alone", l.CheckWebhooks(full(1)),
			"the plan allows no webhooks; the operator raises it with EARSHOT_PLAN_WEBHOOKS_PER_PERSON"},
		{"no webhooks, unknown", l.CheckWebhooks(core.Usage{}),
			"the plan allows no webhooks; ask the operator to raise it"},
		{"webhooks full, shared", core.Limits{WebhooksPerPerson: 3}.CheckNewWebhook(core.Usage{Webhooks: 3, Owners: 5}),
			"the plan allows 3 webhooks (you have 3); ask the operator to raise it"},
	}
	for _, c := range cases {
		if !core.IsKind(c.err, core.KindPlanLimit) || core.Message(c.err) != c.want {
			t.Errorf("%s: %v\nwant %q", c.name, c.err, c.want)
		}
	}
}
