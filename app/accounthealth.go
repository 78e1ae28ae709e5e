package app

import (
	"context"
	"fmt"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
	"github.com/earshothq/earshot/ports"
)

// AccountHealth keeps the health of owners' connected accounts: helpers
// report what a platform answered, core/health classifies it, and every
// change of the account's state or issue becomes a notification, stored
// with the change.
type AccountHealth struct {
	accounts ports.AccountStore
	store    ports.AccountHealthStore
	limits   core.Limits
	clock    ports.Clock
	notified func()
}

// AccountHealthDeps are the ports the account health service uses.
type AccountHealthDeps struct {
	Accounts ports.AccountStore
	Store    ports.AccountHealthStore
	Clock    ports.Clock // nil means the system clock
	// Notified is called after a notification that owes an email was
	// stored, so the sender goes at once rather than at its next sweep
	// (Notifications.Poke); nil does nothing.
	Notified func()
}

// NewAccountHealth returns the account health service; limits bound the
// accounts that a first report connects.
func NewAccountHealth(d AccountHealthDeps, limits core.Limits) *AccountHealth {
	if d.Notified == nil {
		d.Notified = func() {}
	}
	return &AccountHealth{accounts: d.Accounts, store: d.Store, limits: limits, clock: orSystemClock(d.Clock), notified: d.Notified}
}

// Report records what a platform answered on the owner's behalf: the
// signal is checked (KindInvalid, and nothing is stored), the owner's
// account on its platform is connected if there is none yet (within the
// plan limit, as ingest does: KindPlanLimit), and its health moves as
// health.Record.Apply says. It returns the account's status.
func (s *AccountHealth) Report(ctx context.Context, ownerID string, sig health.Signal) (health.Status, error) {
	if err := health.CheckSignal(sig); err != nil {
		return health.Status{}, err
	}
	acc, err := s.accounts.EnsureAccount(ctx, ownerID, sig.Platform, s.limits)
	if err != nil {
		return health.Status{}, err
	}
	now := s.clock.Now()
	return s.update(ctx, ownerID, acc.ID, func(cur health.Record) (health.Record, error) {
		return cur.Apply(sig, now), nil
	})
}

// Resolve clears a challenge (checkpointed, challenge_interstitial,
// captcha_html) that the owner has completed in a browser: the only way
// such an issue is cleared. The account's view becomes healthy and a
// recovery notification is made. KindConflict when the account has no
// challenge to clear (nothing changes); KindNotFound when the account is
// not the owner's.
func (s *AccountHealth) Resolve(ctx context.Context, ownerID, accountID string) (health.Status, error) {
	now := s.clock.Now()
	return s.update(ctx, ownerID, accountID, func(cur health.Record) (health.Record, error) {
		return cur.Resolved(now)
	})
}

// Accounts returns one status per platform, in the order of
// core.Platforms: the owner's account there, or not_connected.
func (s *AccountHealth) Accounts(ctx context.Context, ownerID string) ([]health.Status, error) {
	list, err := s.store.AccountHealth(ctx, ownerID)
	if err != nil {
		return nil, err
	}
	out := make([]health.Status, 0, len(core.Platforms))
	for _, p := range core.Platforms {
		st := health.StatusOf("", p, false, health.Record{})
		for _, a := range list {
			if a.Account.Platform == p {
				// The first account of a platform is the one helpers
				// report on (EnsureAccount returns it).
				st = health.StatusOf(a.Account.ID, p, true, a.Health)
				break
			}
		}
		out = append(out, st)
	}
	return out, nil
}

func (s *AccountHealth) update(ctx context.Context, ownerID, accountID string, change func(health.Record) (health.Record, error)) (health.Status, error) {
	owed := false
	ah, err := s.store.UpdateHealth(ctx, ownerID, accountID, func(cur ports.AccountHealth) (health.Record, *core.Notification, error) {
		next, err := change(cur.Health)
		if err != nil {
			return cur.Health, nil, err
		}
		note := healthNotification(cur.Account, cur.Health, next)
		owed = note != nil && note.Email
		return next, note, nil
	})
	if err != nil {
		return health.Status{}, err
	}
	if owed {
		s.notified()
	}
	return health.StatusOf(ah.Account.ID, ah.Account.Platform, true, ah.Health), nil
}

// healthNotification is the notification a change of an account's health
// deserves, or nil: core/health's Transition decides, so the same issue
// reported again, or a report that changes nothing the view shows, makes
// none. An account reported on is connected, before and after: being
// connected by its first report is not a change of health.
func healthNotification(acc core.Account, from, to health.Record) *core.Notification {
	n, ok := health.Transition(health.Evaluate(true, from.LastIssue), health.Evaluate(true, to.LastIssue))
	if !ok {
		return nil
	}
	return &core.Notification{
		Kind: core.NotifyAccountHealth, SubjectID: acc.ID, Platform: acc.Platform,
		Severity: string(n.Severity), State: string(n.To.State), Issue: string(n.To.Issue), Action: string(n.Action),
		Title: healthTitle(acc.Platform, n), Message: n.Message,
		// Those that need the owner are emailed; information and
		// recoveries are only listed.
		Email: n.Severity == health.Alert,
	}
}

func healthTitle(p core.Platform, n health.Notification) string {
	switch {
	case n.Severity == health.Recovery:
		return fmt.Sprintf("Your %s account is healthy again", p)
	case n.To.Info != nil && n.Severity == health.Alert:
		return fmt.Sprintf("Your %s account needs you: %s", p, n.To.Info.Title)
	case n.To.Info != nil:
		return fmt.Sprintf("Your %s account: %s", p, n.To.Info.Title)
	}
	return fmt.Sprintf("Your %s account is %s", p, n.To.State)
}
