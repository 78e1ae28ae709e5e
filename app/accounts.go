package app

import (
	"context"
	"encoding/json"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// MaxCookieJar is the largest cookie jar accepted, in bytes.
const MaxCookieJar = 256 << 10

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
// plan limit) and stores the cookie jar, sealed. The jar must be JSON;
// errors never quote it. KindInvalid, KindPlanLimit, KindNotFound.
func (s *Accounts) SetSession(ctx context.Context, ownerID, platform string, jar []byte) (core.Account, error) {
	p, err := core.ParsePlatform("platform", platform)
	if err != nil {
		return core.Account{}, err
	}
	if len(jar) == 0 || len(jar) > MaxCookieJar || !json.Valid(jar) {
		return core.Account{}, core.Errorf(core.KindInvalid, "the cookie jar must be a JSON document of at most %d bytes", MaxCookieJar)
	}
	acc, err := s.store.EnsureAccount(ctx, ownerID, p, s.limits)
	if err != nil {
		return core.Account{}, err
	}
	sealed, err := s.sealer.Seal(jar, []byte(acc.ID))
	if err != nil {
		return core.Account{}, err
	}
	if err := s.store.SetSession(ctx, ownerID, acc.ID, sealed); err != nil {
		return core.Account{}, err
	}
	acc.HasSession = true
	return acc, nil
}

// Session returns the owner's cookie jar on the platform, opened.
// KindNotFound when none is stored.
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
