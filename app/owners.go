package app

import (
	"context"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Owners creates owners and bootstraps the first one.
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

// Bootstrap is what a first start creates so a new user can call the API
// at once.
type Bootstrap struct {
	Owner     core.Owner
	APIKey    string // every scope
	IngestKey string
}

// BootstrapEmail is the address of the owner a first start creates.
const BootstrapEmail = "owner@localhost"

// Bootstrap creates an owner with an API key of every scope and an ingest
// key when the database has no owner, and returns nil otherwise. Two
// processes starting at once on one empty database create one owner: the
// fixed address makes the second create a conflict, which means done.
func (s *Owners) Bootstrap(ctx context.Context) (*Bootstrap, error) {
	n, err := s.owners.CountOwners(ctx)
	if err != nil || n > 0 {
		return nil, err
	}
	o := core.Owner{Email: BootstrapEmail, Name: "First owner"}
	if err := s.owners.CreateOwner(ctx, &o); err != nil {
		if core.IsKind(err, core.KindConflict) {
			return nil, nil
		}
		return nil, err
	}
	api, _, err := s.keys.CreateAPIKey(ctx, o.ID, "bootstrap", core.AllScopes)
	if err != nil {
		return nil, err
	}
	ingest, _, err := s.keys.CreateIngestKey(ctx, o.ID, "bootstrap")
	if err != nil {
		return nil, err
	}
	return &Bootstrap{Owner: o, APIKey: api, IngestKey: ingest}, nil
}
