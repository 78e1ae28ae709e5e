package core

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
}

// Plan is what GET /me shows: the plan, its limits and the usage.
type Plan struct {
	ID     string
	Name   string
	Limits Limits
	Usage  Usage
}

// FreePlan returns the Free plan with the deployment's limits and usage u.
func FreePlan(l Limits, u Usage) Plan {
	return Plan{ID: "free", Name: "Free", Limits: l, Usage: u}
}

// CheckNewPhrase returns a KindPlanLimit error when one more phrase on p
// would exceed the limit.
func (l Limits) CheckNewPhrase(u Usage, p Platform) error {
	if u.Phrases[p] >= l.PhrasesPerPlatform {
		return Errorf(KindPlanLimit, "the plan allows %d %s phrase(s)", l.PhrasesPerPlatform, p)
	}
	return nil
}

// CheckNewAccount returns a KindPlanLimit error when one more account on p
// would exceed the limit.
func (l Limits) CheckNewAccount(u Usage, p Platform) error {
	if u.Accounts[p] >= l.AccountsPerPlatform {
		return Errorf(KindPlanLimit, "the plan allows %d %s account(s)", l.AccountsPerPlatform, p)
	}
	return nil
}

// CheckWebhooks returns a KindPlanLimit error when the plan has no
// webhooks at all: every webhook route is refused then.
func (l Limits) CheckWebhooks() error {
	if l.WebhooksPerPerson <= 0 {
		return Errorf(KindPlanLimit, "webhooks are not part of the plan")
	}
	return nil
}

// CheckNewWebhook returns a KindPlanLimit error when one more webhook
// would exceed the limit.
func (l Limits) CheckNewWebhook(u Usage) error {
	if err := l.CheckWebhooks(); err != nil {
		return err
	}
	if u.Webhooks >= l.WebhooksPerPerson {
		return Errorf(KindPlanLimit, "the plan allows %d webhook(s)", l.WebhooksPerPerson)
	}
	return nil
}
