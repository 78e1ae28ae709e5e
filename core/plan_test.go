package core_test

import (
	"maps"
	"reflect"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

func TestFreeLimits(t *testing.T) {
	// The spec's Free plan: one phrase and one account per platform, no
	// webhooks.
	want := core.Limits{PhrasesPerPlatform: 1, AccountsPerPlatform: 1, WebhooksPerPerson: 0}
	if core.FreeLimits != want {
		t.Errorf("FreeLimits = %+v, want %+v", core.FreeLimits, want)
	}
}

func TestFreePlan(t *testing.T) {
	l := core.Limits{PhrasesPerPlatform: 3, AccountsPerPlatform: 2, WebhooksPerPerson: 5}
	u := core.Usage{
		Phrases:  map[core.Platform]int{core.Reddit: 2},
		Accounts: map[core.Platform]int{core.X: 1},
		Webhooks: 4,
	}
	p := core.FreePlan(l, u)
	if p.ID != "free" || p.Name != "Free" {
		t.Errorf("plan id/name = %q/%q, want free/Free", p.ID, p.Name)
	}
	if p.Limits != l || !reflect.DeepEqual(p.Usage, u) {
		t.Errorf("FreePlan did not carry limits and usage: %+v", p)
	}
}

// planCase is one check of a plan limit: refused says whether the new
// thing is refused.
type planCase struct {
	name    string
	limit   int
	usage   map[core.Platform]int
	p       core.Platform
	refused bool
}

var perPlatformCases = []planCase{
	{"none yet", 1, nil, core.Reddit, false},
	{"empty usage", 1, map[core.Platform]int{}, core.X, false},
	{"at limit", 1, map[core.Platform]int{core.Reddit: 1}, core.Reddit, true},
	{"other platform unaffected", 1, map[core.Platform]int{core.Reddit: 1}, core.X, false},
	{"under a larger limit", 5, map[core.Platform]int{core.Facebook: 4}, core.Facebook, false},
	{"at a larger limit", 5, map[core.Platform]int{core.Facebook: 5}, core.Facebook, true},
	// The operator lowered the limit below what the owner has: nothing new
	// fits, and the check only refuses; it never asks to remove anything.
	{"lowered below usage", 1, map[core.Platform]int{core.X: 3}, core.X, true},
	{"limit zero", 0, nil, core.Reddit, true},
}

func runPlanCases(t *testing.T, check func(core.Limits, core.Usage, core.Platform) error, set func(*core.Limits, int), mk func(map[core.Platform]int) core.Usage) {
	for _, c := range perPlatformCases {
		t.Run(c.name, func(t *testing.T) {
			var l core.Limits
			set(&l, c.limit)
			before := maps.Clone(c.usage)
			err := check(l, mk(c.usage), c.p)
			if !c.refused {
				if err != nil {
					t.Fatalf("refused under the limit: %v", err)
				}
				return
			}
			requireKind(t, err, core.KindPlanLimit)
			msg := core.Message(err)
			if !strings.Contains(msg, string(c.p)) {
				t.Errorf("message %q does not name the platform", msg)
			}
			for _, w := range []string{"remove", "delete"} {
				if strings.Contains(strings.ToLower(msg), w) {
					t.Errorf("message %q asks to %s existing things", msg, w)
				}
			}
			if !maps.Equal(c.usage, before) {
				t.Error("the check changed the usage it was given")
			}
		})
	}
}

func TestCheckNewPhrase(t *testing.T) {
	runPlanCases(t,
		func(l core.Limits, u core.Usage, p core.Platform) error { return l.CheckNewPhrase(u, p) },
		func(l *core.Limits, n int) { l.PhrasesPerPlatform = n; l.AccountsPerPlatform = 100 },
		func(m map[core.Platform]int) core.Usage {
			return core.Usage{Phrases: m, Accounts: map[core.Platform]int{core.Reddit: 50}}
		})
}

func TestCheckNewAccount(t *testing.T) {
	runPlanCases(t,
		func(l core.Limits, u core.Usage, p core.Platform) error { return l.CheckNewAccount(u, p) },
		func(l *core.Limits, n int) { l.AccountsPerPlatform = n; l.PhrasesPerPlatform = 100 },
		func(m map[core.Platform]int) core.Usage {
			return core.Usage{Accounts: m, Phrases: map[core.Platform]int{core.Reddit: 50}}
		})
}

func TestCheckWebhooks(t *testing.T) {
	cases := []struct {
		name   string
		limit  int
		usage  int
		routes bool // CheckWebhooks passes: the webhook routes are open
		newOne bool // CheckNewWebhook passes
	}{
		{"Free: no webhooks at all", 0, 0, false, false},
		{"negative limit", -1, 0, false, false},
		{"limit zero with leftovers", 0, 2, false, false},
		{"Pro: none yet", 1, 0, true, true},
		{"Pro: at limit", 1, 1, true, false},
		{"under a larger limit", 3, 2, true, true},
		{"at a larger limit", 3, 3, true, false},
		// Lowered below usage: existing webhooks stay manageable, new ones
		// are refused.
		{"lowered below usage", 1, 4, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := core.Limits{PhrasesPerPlatform: 1, AccountsPerPlatform: 1, WebhooksPerPerson: c.limit}
			u := core.Usage{Webhooks: c.usage}
			if err := l.CheckWebhooks(core.Usage{}); c.routes {
				if err != nil {
					t.Errorf("CheckWebhooks = %v", err)
				}
			} else {
				requireKind(t, err, core.KindPlanLimit)
			}
			err := l.CheckNewWebhook(u)
			if c.newOne {
				if err != nil {
					t.Errorf("CheckNewWebhook = %v", err)
				}
				return
			}
			requireKind(t, err, core.KindPlanLimit)
			msg := strings.ToLower(core.Message(err))
			if !strings.Contains(msg, "webhook") {
				t.Errorf("message %q does not say webhooks", msg)
			}
			if strings.Contains(msg, "remove") || strings.Contains(msg, "delete") {
				t.Errorf("message %q asks to remove existing webhooks", msg)
			}
		})
	}
}
