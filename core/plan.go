package core

import "fmt"

// Limits are the plan limits of a deployment. The operator sets them for
// everyone; they refuse new things only, so lowering one never removes
// what an owner already has.
type Limits struct {
	PhrasesPerPlatform  int
	AccountsPerPlatform int
	WebhooksPerPerson   int
}

// FreeLimits are the limits of the Free plan the spec describes.
var FreeLimits = Limits{PhrasesPerPlatform: 1, AccountsPerPlatform: 1, WebhooksPerPerson: 0}

// Usage counts what an owner has now.
type Usage struct {
	Phrases  map[Platform]int
	Accounts map[Platform]int
	Webhooks int
	// Owners is how many owners the deployment has; 0 when not counted.
	// With one, that owner runs the deployment (RunByOwner).
	Owners int
}

// RunByOwner reports whether the owner is the deployment's only owner,
// and so its operator: refusals then name the setting that raises a
// limit instead of sending them to an operator who is themselves.
func (u Usage) RunByOwner() bool { return u.Owners == 1 }

// The settings that raise each plan limit for the whole deployment.
const (
	SettingPhrasesPerPlatform  = "EARSHOT_PLAN_PHRASES_PER_PLATFORM"
	SettingAccountsPerPlatform = "EARSHOT_PLAN_ACCOUNTS_PER_PLATFORM"
	SettingWebhooksPerPerson   = "EARSHOT_PLAN_WEBHOOKS_PER_PERSON"
)

// Plan is what GET /me shows: the plan, its limits and the usage.
type Plan struct {
	ID      string
	Name    string
	OwnerID string // whose plan it is
	Limits  Limits
	Usage   Usage
}

// FreePlan returns the Free plan with the deployment's limits and usage u.
func FreePlan(l Limits, u Usage) Plan {
	return Plan{ID: "free", Name: "Free", Limits: l, Usage: u}
}

// CheckNewPhrase returns a KindPlanLimit error when one more phrase on p
// would exceed the limit.
func (l Limits) CheckNewPhrase(u Usage, p Platform) error {
	if n := u.Phrases[p]; n >= l.PhrasesPerPlatform {
		return refuse(u, SettingPhrasesPerPlatform, "the plan allows %s per platform (%s has %d)",
			count(l.PhrasesPerPlatform, "phrase"), p, n)
	}
	return nil
}

// CheckNewAccount returns a KindPlanLimit error when one more account on p
// would exceed the limit.
func (l Limits) CheckNewAccount(u Usage, p Platform) error {
	if n := u.Accounts[p]; n >= l.AccountsPerPlatform {
		return refuse(u, SettingAccountsPerPlatform, "the plan allows %s per platform (%s has %d)",
			count(l.AccountsPerPlatform, "account"), p, n)
	}
	return nil
}

// CheckWebhooks returns a KindPlanLimit error when the plan has no
// webhooks at all: every webhook route is refused then. Only u.Owners is
// read, to say who raises the limit.
func (l Limits) CheckWebhooks(u Usage) error {
	if l.WebhooksPerPerson <= 0 {
		return refuse(u, SettingWebhooksPerPerson, "the plan allows no webhooks")
	}
	return nil
}

// CheckNewWebhook returns a KindPlanLimit error when one more webhook
// would exceed the limit.
func (l Limits) CheckNewWebhook(u Usage) error {
	if err := l.CheckWebhooks(u); err != nil {
		return err
	}
	if u.Webhooks >= l.WebhooksPerPerson {
		return refuse(u, SettingWebhooksPerPerson, "the plan allows %s (you have %d)", count(l.WebhooksPerPerson, "webhook"), u.Webhooks)
	}
	return nil
}

// refuse is the one wording of a plan limit's refusal, wherever it is
// shown: what the limit is and what the owner has, then who raises it.
func refuse(u Usage, setting, format string, args ...any) error {
	who := "ask the operator to raise it"
	if u.RunByOwner() {
		who = "the operator raises it with " + setting
	}
	return Errorf(KindPlanLimit, format+"; %s", append(args, who)...)
}

// count says n things, in the plural unless n is 1.
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
