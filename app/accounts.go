package app

import (
	"context"
	"encoding/json"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// MaxCookieJar is the largest cookie jar accepted, in bytes.
const MaxCookieJar = core.MaxCookieJar

// Accounts connects owners' platform accounts and keeps their cookie jars
// sealed.
type Accounts struct {
	store  ports.AccountStore
	sealer *core.Sealer
	limits core.Limits
}

// NewAccounts returns the account service.
func NewAccounts(store ports.AccountStore, sealer *core.Sealer, limits core.Limits) *Accounts {
	return &Accounts{store: store, sealer: sealer, limits: limits}
}

// SetSession connects the owner's account on the platform (within the
// plan limit) and stores the cookie jar, sealed, in the canonical form of
// core.EncodeCookieJar whatever export it came in (see
// core.ParseCookieJar), so that GET /session hands helpers one shape. It
// returns the account and how many cookies were kept. Errors never quote a
// cookie value. KindInvalid, KindPlanLimit, KindNotFound.
func (s *Accounts) SetSession(ctx context.Context, ownerID, platform string, jar []byte) (core.Account, int, error) {
	p, err := core.ParsePlatform("platform", platform)
	if err != nil {
		return core.Account{}, 0, err
	}
	cookies, err := core.ParseCookieJar(p, jar)
	if err != nil {
		return core.Account{}, 0, err
	}
	acc, err := s.store.EnsureAccount(ctx, ownerID, p, s.limits)
	if err != nil {
		return core.Account{}, 0, err
	}
	sealed, err := s.sealer.Seal(core.EncodeCookieJar(cookies), []byte(acc.ID))
	if err != nil {
		return core.Account{}, 0, err
	}
	if err := s.store.SetSession(ctx, ownerID, acc.ID, sealed); err != nil {
		return core.Account{}, 0, err
	}
	acc.HasSession = true
	return acc, len(cookies), nil
}

// Session returns the owner's cookie jar on the platform, opened, as it
// was stored: jars stored before the canonical form are handed back
// unchanged. KindNotFound when none is stored.
func (s *Accounts) Session(ctx context.Context, ownerID, platform string) (json.RawMessage, error) {
	p, err := core.ParsePlatform("platform", platform)
	if err != nil {
		return nil, err
	}
	acc, sealed, err := s.store.Session(ctx, ownerID, p)
	if err != nil {
		return nil, err
	}
	jar, err := s.sealer.Open(sealed, []byte(acc.ID))
	if err != nil {
		return nil, core.Wrap(core.KindInternal, err, "the stored session cannot be opened")
	}
	return jar, nil
}
