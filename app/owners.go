package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Owners creates, lists and changes owners and bootstraps the first one.
type Owners struct {
	owners ports.OwnerStore
	keys   *Keys
}

// NewOwners returns the owner service.
func NewOwners(owners ports.OwnerStore, keys *Keys) *Owners {
	return &Owners{owners: owners, keys: keys}
}

// Create stores a new owner. KindInvalid for a bad email, KindConflict
// when it is taken.
func (s *Owners) Create(ctx context.Context, email, name string) (core.Owner, error) {
	o, err := core.NewOwner(email, name)
	if err != nil {
		return core.Owner{}, err
	}
	if err := s.owners.CreateOwner(ctx, &o); err != nil {
		return core.Owner{}, err
	}
	return o, nil
}

// Get returns the owner of id; KindNotFound names the owner.
func (s *Owners) Get(ctx context.Context, id string) (core.Owner, error) {
	return s.owners.Owner(ctx, id)
}

// List returns every owner, oldest first.
func (s *Owners) List(ctx context.Context) ([]core.Owner, error) {
	return s.owners.Owners(ctx)
}

// Update changes an owner's address, name or both; nil keeps one as it
// is. KindInvalid for a bad email or name, KindNotFound for an unknown
// owner, KindConflict when another owner has the email.
func (s *Owners) Update(ctx context.Context, id string, email, name *string) (core.Owner, error) {
	o, err := s.owners.Owner(ctx, id)
	if err != nil {
		return core.Owner{}, err
	}
	if o, err = o.Update(email, name); err != nil {
		return core.Owner{}, err
	}
	return o, s.owners.UpdateOwner(ctx, o)
}

// Bootstrap is what a first start creates so a new user can call the API
// at once.
type Bootstrap struct {
	Owner     core.Owner
	APIKey    string // every scope
	IngestKey string
}

// BootstrapEmail is the address of the owner a first start creates.
const BootstrapEmail = "owner@localhost"

// bootstrapKeyName names the keys a first start creates.
const bootstrapKeyName = "bootstrap"

// Bootstrap creates an owner with an API key of every scope and an ingest
// key when the database has no owner, and returns them to be printed;
// it returns nil when there is nothing to print.
//
// The owner and its keys are separate writes, so a start can stop
// between them (a write failed, the process died). Until its ingest key
// is stored, the owner counts as not bootstrapped: the next start makes
// its keys and prints them. The ingest key is the last write and is
// stored only while the owner holds none, so of several starts finishing
// one owner at once (replicas on one database), one stores it and
// prints; the others revoke the API key they made, which nobody saw.
func (s *Owners) Bootstrap(ctx context.Context) (*Bootstrap, error) {
	o, ok, err := s.unfinished(ctx)
	if err != nil || !ok {
		return nil, err
	}
	// A start that stopped after its API key left that key live, and
	// another start may be between its own two writes now. Each start
	// makes room for one more than it saw: of two that saw the same keys
	// one stores its key, and the other leaves the owner to it.
	live, err := s.liveKeys(ctx, o.ID, core.APIKey)
	if err != nil {
		return nil, err
	}
	api, apiKey, err := s.createKey(ctx, core.Key{OwnerID: o.ID, Kind: core.APIKey, Name: bootstrapKeyName, Scopes: core.AllScopes}, len(live)+1)
	if core.IsKind(err, core.KindPlanLimit) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	ingest, _, err := s.createKey(ctx, core.Key{OwnerID: o.ID, Kind: core.IngestKey, Name: bootstrapKeyName}, 1)
	if err != nil {
		// Its secret is never shown: no one could use it. A revoke that
		// fails leaves it to the start that finishes the owner.
		_ = s.keys.Revoke(ctx, o.ID, apiKey.ID)
		if core.IsKind(err, core.KindPlanLimit) {
			return nil, nil // another start stored the ingest key and prints
		}
		return nil, err
	}
	// The owner is finished: every other bootstrap API key is one a
	// start made and never printed (it stopped, or it lost the race to
	// the ingest key). Revoking them is tidying only; the keys printed
	// are good whether it succeeds or not.
	if live, err = s.liveKeys(ctx, o.ID, core.APIKey); err == nil {
		for _, k := range live {
			if k.ID != apiKey.ID && k.Name == bootstrapKeyName {
				_ = s.keys.Revoke(ctx, o.ID, k.ID)
			}
		}
	}
	return &Bootstrap{Owner: o, APIKey: api, IngestKey: ingest}, nil
}

// unfinished returns the owner a first start is to finish, creating it
// on a database with no owner; ok is false when there is none: the
// database has other owners, or its one owner is not the bootstrap's or
// has had an ingest key (revoked or not: revoked keys stay listed, so
// the mark stays). Two starts creating the owner at once make one: the
// fixed address makes the second create a conflict, and both go on to
// finish that owner.
func (s *Owners) unfinished(ctx context.Context) (core.Owner, bool, error) {
	n, err := s.owners.CountOwners(ctx)
	if err != nil || n > 1 {
		return core.Owner{}, false, err
	}
	if n == 0 {
		o := core.Owner{Email: BootstrapEmail, Name: "First owner"}
		err := s.owners.CreateOwner(ctx, &o)
		if err == nil {
			return o, true, nil
		}
		if !core.IsKind(err, core.KindConflict) {
			return core.Owner{}, false, err
		}
	}
	all, err := s.owners.Owners(ctx)
	if err != nil || len(all) != 1 || all[0].Email != BootstrapEmail {
		return core.Owner{}, false, err
	}
	ingest, err := s.keys.keys.Keys(ctx, all[0].ID, core.IngestKey)
	if err != nil || len(ingest) > 0 {
		return core.Owner{}, false, err
	}
	return all[0], true, nil
}

// liveKeys returns the owner's keys of the kind that are not revoked.
func (s *Owners) liveKeys(ctx context.Context, ownerID string, kind core.KeyKind) ([]core.Key, error) {
	ks, err := s.keys.keys.Keys(ctx, ownerID, kind)
	live := ks[:0]
	for _, k := range ks {
		if !k.Revoked() {
			live = append(live, k)
		}
	}
	return live, err
}

// createKey stores k when its owner holds fewer than max live keys of
// its kind, and returns its secret. KindPlanLimit otherwise.
func (s *Owners) createKey(ctx context.Context, k core.Key, max int) (string, core.Key, error) {
	secret, hash, err := core.NewSecret(k.Kind)
	if err != nil {
		return "", core.Key{}, err
	}
	k.Hash = hash
	if err := s.keys.keys.CreateKey(ctx, &k, max); err != nil {
		return "", core.Key{}, err
	}
	return secret, k, nil
}

// AddressChangeDeps are the ports the change of an owner's own address
// uses.
type AddressChangeDeps struct {
	Owners ports.OwnerStore
	Mailer ports.Mailer
	// Limiter bounds the confirmation emails an owner may cause a
	// minute, so a signed-in owner cannot mail strangers at will; nil
	// leaves them unbounded.
	Limiter ports.RateLimiter
	Clock   ports.Clock  // nil means the system clock
	Log     *slog.Logger // nil means slog.Default
	// SiteURL returns the public address links are made under.
	SiteURL func() string
}

// AddressChanges lets a signed-in owner change their own address: a
// single-use link goes to the new address, and only opening it there
// changes the address, so a mistyped address never locks the owner out
// of their sign-in links and alerts. The old address is told, when its
// mail is taken.
type AddressChanges struct{ d AddressChangeDeps }

// NewAddressChanges returns the address change service.
func NewAddressChanges(d AddressChangeDeps) *AddressChanges {
	d.Clock, d.Log = orSystemClock(d.Clock), orDefaultLog(d.Log)
	return &AddressChanges{d: d}
}

// addressMailsPerMinute is how many confirmation emails an owner may
// cause a minute.
const addressMailsPerMinute = 3

// Owner returns the owner with id. KindNotFound.
func (s *AddressChanges) Owner(ctx context.Context, id string) (core.Owner, error) {
	return s.d.Owners.Owner(ctx, id)
}

// AddressConfirmPath is where links confirming a new address point,
// under the site address.
const AddressConfirmPath = "/app/account/confirm/"

// Request emails a link that changes the owner's address to email, in
// place of any link asked for before: the owner has one pending address,
// the last asked for, so a mistyped one stops working once corrected. It
// does not say whether another owner has the address: confirming it
// does, to whoever reads that mailbox. KindInvalid for a bad address or
// the one the owner has; KindUnavailable when the server sends no email;
// KindRateLimited past the emails an owner may cause a minute.
func (s *AddressChanges) Request(ctx context.Context, ownerID, email string) error {
	o, err := s.d.Owners.Owner(ctx, ownerID)
	if err != nil {
		return err
	}
	to, err := o.Update(&email, nil)
	if err != nil {
		return err
	}
	if to.Email == o.Email {
		return core.Errorf(core.KindInvalid, "%s is your address already", o.Email)
	}
	if !ports.Delivers(s.d.Mailer) {
		return core.Errorf(core.KindUnavailable, "this server sends no email (EARSHOT_SMTP_URL is unset), so a new address cannot be confirmed; "+
			"the operator changes it with earshot admin owner update --owner %s --email ADDRESS", o.ID)
	}
	if s.d.Limiter != nil {
		q, err := s.d.Limiter.Take(ctx, "address-mail:"+o.ID, addressMailsPerMinute)
		if err != nil {
			return err
		}
		if !q.Allowed {
			return core.Errorf(core.KindRateLimited, "too many confirmation links asked for: wait a minute and try again")
		}
	}
	token, hash, err := core.NewToken()
	if err != nil {
		return err
	}
	now := s.d.Clock.Now()
	if err := s.d.Owners.CreateEmailChange(ctx, core.EmailChange{Hash: hash, OwnerID: o.ID, Email: to.Email,
		CreatedAt: now, ExpiresAt: now.Add(core.EmailChangeTTL)}); err != nil {
		return err
	}
	link := strings.TrimSuffix(s.d.SiteURL(), "/") + AddressConfirmPath + token
	return s.d.Mailer.Send(ctx, ports.Mail{
		To:      to.Email,
		Subject: "Confirm your new earshot address",
		Body: fmt.Sprintf("Open this link to make %s the address of your earshot account:\n\n%s\n\n"+
			"It works once, for %d minutes, and only until you ask for another. If you did not ask for it, ignore this email: nothing changes.\n",
			to.Email, link, int(core.EmailChangeTTL/time.Minute)),
		Secret: true,
	})
}

// Confirm applies the change of a link's token and returns the owner
// with the new address and whether the notice to the old address was
// sent. The change stands when the notice fails: told is then false, so
// whoever shows the result does not claim the old address knows. The
// owner's other address links and unused sign-in links stop working
// with it. KindNotFound when the link was used, has expired, was
// replaced or is unknown; KindConflict when another owner has the
// address.
func (s *AddressChanges) Confirm(ctx context.Context, token string) (o core.Owner, told bool, err error) {
	if !core.WellFormedToken(token) {
		return core.Owner{}, false, core.Errorf(core.KindNotFound, "this link is not valid")
	}
	o, old, err := s.d.Owners.UseEmailChange(ctx, core.HashToken(token), s.d.Clock.Now())
	if err != nil {
		return core.Owner{}, false, err
	}
	// The change is stored, so its notice goes out even when the browser
	// leaves now; the mailer's own timeout still bounds it.
	err = s.d.Mailer.Send(context.WithoutCancel(ctx), ports.Mail{
		To:      old,
		Subject: "Your earshot address changed",
		Body: fmt.Sprintf("The address of your earshot account is now %s; sign-in links and alerts go there.\n\n"+
			"If you did not make this change, tell the operator of this earshot server at once.\n", o.Email),
	})
	if err != nil {
		// The change is made; a lost notice must not undo it or say it
		// failed.
		s.d.Log.WarnContext(ctx, "address change notice not sent", "owner", o.ID, "err", err)
		return o, false, nil
	}
	return o, true, nil
}
