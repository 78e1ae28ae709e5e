package app_test

import (
	"context"
	"testing"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// Each kind of key has its own bound on live keys, refused with the
// kind's name and what to do; revoking one makes room, and the list
// keeps only the last core.KeptRevokedKeys revoked.
func TestKeyLimitsPerKind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := dbtest.Memory(t)
	os := gormstore.NewOwnerStore(db)
	keys := app.NewKeys(gormstore.NewKeyStore(db), os, ports.SystemClock{})
	o, err := app.NewOwners(os, keys).Create(ctx, "keys@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	for kind, limit := range map[core.KeyKind]int{core.APIKey: core.MaxAPIKeys, core.IngestKey: core.MaxIngestKeys} {
		create := func() (core.Key, error) {
			if kind == core.IngestKey {
				_, k, err := keys.CreateIngestKey(ctx, o.ID, "")
				return k, err
			}
			_, k, err := keys.CreateAPIKey(ctx, o.ID, "k", nil)
			return k, err
		}
		var last core.Key
		for range limit {
			if last, err = create(); err != nil {
				t.Fatalf("%s key within the limit: %v", kind, err)
			}
		}
		_, err := create()
		want := map[core.KeyKind]string{
			core.APIKey:    "an owner may hold at most 5 API keys: revoke one first",
			core.IngestKey: "an owner may hold at most 20 ingest keys: revoke one first",
		}[kind]
		if !core.IsKind(err, core.KindPlanLimit) || core.Message(err) != want {
			t.Fatalf("%s key past the limit: %v, want plan_limit %q", kind, err, want)
		}
		for range core.KeptRevokedKeys + 2 {
			if err := keys.RevokeOfKind(ctx, o.ID, kind, last.ID); err != nil {
				t.Fatal(err)
			}
			if last, err = create(); err != nil {
				t.Fatalf("%s key after a revoke: %v", kind, err)
			}
		}
		list, err := keys.List(ctx, o.ID, kind)
		if err != nil || len(list) != limit+core.KeptRevokedKeys {
			t.Fatalf("%s keys listed: %d, %v; want %d live and %d revoked", kind, len(list), err, limit, core.KeptRevokedKeys)
		}
	}
}
