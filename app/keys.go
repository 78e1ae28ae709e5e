package app

import (
	"context"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Keys creates, lists, revokes and checks API and ingest keys.
type Keys struct {
	keys   ports.KeyStore
	owners ports.OwnerStore
	clock  ports.Clock
}

// NewKeys returns the key service.
func NewKeys(keys ports.KeyStore, owners ports.OwnerStore, clock ports.Clock) *Keys {
	return &Keys{keys: keys, owners: owners, clock: clock}
}

// CreateAPIKey makes an API key for the owner and returns its secret,
// which is never available again. KindNotFound for an unknown owner,
// KindPlanLimit past core.MaxAPIKeys live API keys, KindInvalid for a
// bad name.
func (s *Keys) CreateAPIKey(ctx context.Context, ownerID, name string, scopes []core.Scope) (string, core.Key, error) {
	return s.create(ctx, core.Key{OwnerID: ownerID, Kind: core.APIKey, Name: name, Scopes: scopes})
}

// CreateIngestKey makes an ingest key for the owner's helpers and returns
// its secret. KindNotFound for an unknown owner, KindPlanLimit past
// core.MaxIngestKeys live ingest keys, KindInvalid for a bad name (an
// ingest key may have none).
func (s *Keys) CreateIngestKey(ctx context.Context, ownerID, name string) (string, core.Key, error) {
	return s.create(ctx, core.Key{OwnerID: ownerID, Kind: core.IngestKey, Name: name})
}

// create checks the name before anything reaches the store, so both
// databases refuse the same names with the same words.
func (s *Keys) create(ctx context.Context, k core.Key) (string, core.Key, error) {
	var err error
	if k.Name, err = core.NormalizeKeyName(k.Kind, k.Name); err != nil {
		return "", core.Key{}, err
	}
	if _, err := s.owners.Owner(ctx, k.OwnerID); err != nil {
		return "", core.Key{}, err
	}
	secret, hash, err := core.NewSecret(k.Kind)
	if err != nil {
		return "", core.Key{}, err
	}
	k.Hash = hash
	if err := s.keys.CreateKey(ctx, &k, k.Kind.MaxLive()); err != nil {
		return "", core.Key{}, err
	}
	return secret, k, nil
}

// List returns the owner's keys of the kind: the live ones and the last
// core.KeptRevokedKeys revoked (older revoked keys are deleted).
func (s *Keys) List(ctx context.Context, ownerID string, kind core.KeyKind) ([]core.Key, error) {
	if _, err := s.owners.Owner(ctx, ownerID); err != nil {
		return nil, err
	}
	return s.keys.Keys(ctx, ownerID, kind)
}

// Revoke stops the owner's key id from working, from the next request
// on. The owner's revoked keys of its kind past the last
// core.KeptRevokedKeys are deleted.
func (s *Keys) Revoke(ctx context.Context, ownerID, id string) error {
	return s.keys.RevokeKey(ctx, ownerID, id, s.clock.Now())
}

// RevokeOfKind is Revoke for a key of the kind only: an id of the other
// kind is KindNotFound, so a command about ingest keys cannot revoke an
// API key by a mistyped id. The key stops working from the next request
// on: in this process at once, in any other within the store's bound
// (on Postgres, a second at most; see gormstore's keyTrust).
func (s *Keys) RevokeOfKind(ctx context.Context, ownerID string, kind core.KeyKind, id string) error {
	k, err := s.keys.Key(ctx, ownerID, id)
	if err != nil {
		return err
	}
	if k.Kind != kind {
		return core.Errorf(core.KindNotFound, "no %s key %s", kind, id)
	}
	return s.keys.RevokeKey(ctx, ownerID, id, s.clock.Now())
}

// lastUsedStep is how stale a key's last use may be before a request
// records it again: a write per key a minute, not one per request, on a
// path every request takes.
const lastUsedStep = time.Minute

// Authenticate returns the live key of the kind whose secret was sent.
// Every failure is KindUnauthorized: missing, malformed, unknown, revoked,
// or a key of the other kind.
func (s *Keys) Authenticate(ctx context.Context, kind core.KeyKind, secret string) (core.Key, error) {
	hash, err := core.CheckSecret(kind, secret)
	if err != nil {
		return core.Key{}, err
	}
	k, err := s.keys.KeyByHash(ctx, hash)
	switch {
	case core.IsKind(err, core.KindNotFound):
		return core.Key{}, core.Errorf(core.KindUnauthorized, "unknown %s key", kind)
	case err != nil:
		return core.Key{}, err
	case k.Kind != kind:
		return core.Key{}, core.Errorf(core.KindUnauthorized, "unknown %s key", kind)
	case k.Revoked():
		return core.Key{}, core.Errorf(core.KindUnauthorized, "this key was revoked")
	}
	if now := s.clock.Now(); now.Sub(k.LastUsedAt) >= lastUsedStep {
		// Only a record for the owner to read: a store that cannot write
		// it must not refuse a valid key, so the error is dropped.
		if s.keys.MarkKeyUsed(ctx, k.ID, now) == nil {
			k.LastUsedAt = now
		}
	}
	return k, nil
}
