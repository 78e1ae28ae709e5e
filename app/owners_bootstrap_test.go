package app_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/dbtest"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// failingKeys is the real key store whose writes of one kind fail, as a
// database that goes away between the bootstrap's writes does; with
// revokes set its revokes fail too, as after a crash nothing is undone.
type failingKeys struct {
	ports.KeyStore
	kind    core.KeyKind
	revokes bool
}

var errWriteLost = errors.New("write lost")

func (f failingKeys) CreateKey(ctx context.Context, k *core.Key, max int) error {
	if k.Kind == f.kind {
		return errWriteLost
	}
	return f.KeyStore.CreateKey(ctx, k, max)
}

func (f failingKeys) RevokeKey(ctx context.Context, ownerID, id string, at time.Time) error {
	if f.revokes {
		return errWriteLost
	}
	return f.KeyStore.RevokeKey(ctx, ownerID, id, at)
}

// ownersOn is the owner service of one process over db, its key writes
// going through keys when it is not nil.
func ownersOn(db *gormstore.DB, keys func(ports.KeyStore) ports.KeyStore) (*app.Owners, *app.Keys) {
	os := gormstore.NewOwnerStore(db)
	var ks ports.KeyStore = gormstore.NewKeyStore(db)
	if keys != nil {
		ks = keys(ks)
	}
	k := app.NewKeys(ks, os, ports.SystemClock{})
	return app.NewOwners(os, k), k
}

// checkBootstrap fails t unless b's keys work and belong to its owner,
// and the owner has no other live key: a key made by a start that never
// printed it is revoked.
func checkBootstrap(t *testing.T, keys *app.Keys, b *app.Bootstrap) {
	t.Helper()
	ctx := context.Background()
	if k, err := keys.Authenticate(ctx, core.APIKey, b.APIKey); err != nil || k.OwnerID != b.Owner.ID {
		t.Fatalf("the API key printed does not work: %v", err)
	}
	if k, err := keys.Authenticate(ctx, core.IngestKey, b.IngestKey); err != nil || k.OwnerID != b.Owner.ID {
		t.Fatalf("the ingest key printed does not work: %v", err)
	}
	for _, kind := range []core.KeyKind{core.APIKey, core.IngestKey} {
		ks, err := keys.List(ctx, b.Owner.ID, kind)
		if err != nil {
			t.Fatal(err)
		}
		live := 0
		for _, k := range ks {
			if !k.Revoked() {
				live++
			}
		}
		if live != 1 {
			t.Fatalf("the first owner holds %d live %s keys, want the one printed: %+v", live, kind, ks)
		}
	}
}

// A first start whose write fails after the owner's, or that dies
// before it printed the keys, leaves an owner with no key shown; the
// next start finishes the bootstrap and prints its keys, once.
func TestBootstrapFinishedByTheNextStart(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		keys func(ports.KeyStore) ports.KeyStore
	}{
		{"the API key's write fails", func(k ports.KeyStore) ports.KeyStore { return failingKeys{KeyStore: k, kind: core.APIKey} }},
		{"the ingest key's write fails", func(k ports.KeyStore) ports.KeyStore { return failingKeys{KeyStore: k, kind: core.IngestKey} }},
		// The API key is stored and nothing after: it is never printed.
		{"the start dies after the API key", func(k ports.KeyStore) ports.KeyStore {
			return failingKeys{KeyStore: k, kind: core.IngestKey, revokes: true}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			db := dbtest.Memory(t)
			first, _ := ownersOn(db, c.keys)
			if b, err := first.Bootstrap(ctx); !errors.Is(err, errWriteLost) || b != nil {
				t.Fatalf("first start: %+v, %v; want the lost write", b, err)
			}
			owners, keys := ownersOn(db, nil)
			b, err := owners.Bootstrap(ctx)
			if err != nil || b == nil {
				t.Fatalf("the next start printed nothing: %+v, %v", b, err)
			}
			if list, _ := owners.List(ctx); len(list) != 1 || list[0].ID != b.Owner.ID || b.Owner.Email != app.BootstrapEmail {
				t.Fatalf("owners %+v, bootstrap owner %+v: want the first start's owner, finished", list, b.Owner)
			}
			checkBootstrap(t, keys, b)
			if again, err := owners.Bootstrap(ctx); err != nil || again != nil {
				t.Fatalf("a third start printed %+v, %v; the keys are printed once", again, err)
			}
		})
	}
}

// An owner the bootstrap did not make, or a bootstrap owner that had its
// ingest key (revoked since, or its address changed), is never
// bootstrapped again.
func TestBootstrapLeavesOwnersItDidNotStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		name  string
		setup func(t *testing.T, owners *app.Owners, keys *app.Keys)
	}{
		{"an owner made by the console", func(t *testing.T, owners *app.Owners, _ *app.Keys) {
			if _, err := owners.Create(ctx, "ada@example.com", ""); err != nil {
				t.Fatal(err)
			}
		}},
		{"its ingest key revoked", func(t *testing.T, owners *app.Owners, keys *app.Keys) {
			b, err := owners.Bootstrap(ctx)
			if err != nil || b == nil {
				t.Fatalf("bootstrap: %v", err)
			}
			for _, kind := range []core.KeyKind{core.APIKey, core.IngestKey} {
				ks, _ := keys.List(ctx, b.Owner.ID, kind)
				for _, k := range ks {
					if err := keys.Revoke(ctx, b.Owner.ID, k.ID); err != nil {
						t.Fatal(err)
					}
				}
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			owners, keys := ownersOn(dbtest.Memory(t), nil)
			c.setup(t, owners, keys)
			if b, err := owners.Bootstrap(ctx); err != nil || b != nil {
				t.Fatalf("bootstrap made %+v, %v; want nothing", b, err)
			}
		})
	}
}

// Replicas starting at once on one database print the keys once between
// them: on an empty database, and on one whose first start left the
// bootstrap unfinished. Each replica is a connection of its own.
func TestBootstrapOnceAmongReplicas(t *testing.T) {
	t.Parallel()
	for _, db := range []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"sqlite", func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "earshot.db") }},
		{"postgres", func(t *testing.T) string { return pgtest.URL(t) }},
	} {
		for _, unfinished := range []bool{false, true} {
			name := db.name + "/empty"
			if unfinished {
				name = db.name + "/unfinished"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				url := db.url(t)
				if unfinished {
					first, _ := ownersOn(dbtest.Open(t, url), func(k ports.KeyStore) ports.KeyStore {
						return failingKeys{KeyStore: k, kind: core.IngestKey, revokes: true}
					})
					if _, err := first.Bootstrap(ctx); !errors.Is(err, errWriteLost) {
						t.Fatalf("first start: %v", err)
					}
				}
				const replicas = 6
				var (
					wg      sync.WaitGroup
					mu      sync.Mutex
					printed []*app.Bootstrap
					keys    *app.Keys
				)
				for range replicas {
					owners, k := ownersOn(dbtest.Open(t, url), nil)
					keys = k
					wg.Add(1)
					go func() {
						defer wg.Done()
						b, err := owners.Bootstrap(ctx)
						if err != nil {
							t.Errorf("bootstrap: %v", err)
						}
						if b != nil {
							mu.Lock()
							printed = append(printed, b)
							mu.Unlock()
						}
					}()
				}
				wg.Wait()
				if len(printed) != 1 {
					t.Fatalf("%d replicas printed keys, want one: %+v", len(printed), printed)
				}
				checkBootstrap(t, keys, printed[0])
			})
		}
	}
}
