package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
)

// newKey stores a key of the kind for owner under the kind's limit.
func newKey(t *testing.T, s Stores, ownerID string, kind core.KeyKind) core.Key {
	t.Helper()
	_, hash, _ := core.NewSecret(kind)
	k := core.Key{OwnerID: ownerID, Kind: kind, Hash: hash}
	if err := s.Keys.CreateKey(ctx, &k, kind.MaxLive()); err != nil {
		t.Fatalf("CreateKey %s: %v", kind, err)
	}
	return k
}

// testIngestKeyLimit: live ingest keys are bounded as API keys are, each
// kind by its own count, refused with the kind's name and what to do.
func testIngestKeyLimit(t *testing.T, s Stores) {
	o := newOwner(t, s)
	var first core.Key
	for i := range core.MaxIngestKeys {
		k := newKey(t, s, o.ID, core.IngestKey)
		if i == 0 {
			first = k
		}
	}
	_, hash, _ := core.NewSecret(core.IngestKey)
	k := core.Key{OwnerID: o.ID, Kind: core.IngestKey, Hash: hash}
	err := s.Keys.CreateKey(ctx, &k, core.MaxIngestKeys)
	wantKind(t, err, core.KindPlanLimit)
	if msg := core.Message(err); msg != "an owner may hold at most 20 ingest keys: revoke one first" {
		t.Fatalf("refusal says %q", msg)
	}
	if _, err := s.Keys.KeyByHash(ctx, hash); !core.IsKind(err, core.KindNotFound) {
		t.Fatal("an ingest key refused by the limit was stored")
	}
	// The API keys' count is their own: the ingest keys take none of it.
	for range core.MaxAPIKeys {
		newKey(t, s, o.ID, core.APIKey)
	}
	_, ahash, _ := core.NewSecret(core.APIKey)
	err = s.Keys.CreateKey(ctx, &core.Key{OwnerID: o.ID, Kind: core.APIKey, Hash: ahash}, core.MaxAPIKeys)
	if msg := core.Message(err); !core.IsKind(err, core.KindPlanLimit) || msg != "an owner may hold at most 5 API keys: revoke one first" {
		t.Fatalf("sixth API key: %v", err)
	}
	if err := s.Keys.RevokeKey(ctx, o.ID, first.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.Keys.CreateKey(ctx, &k, core.MaxIngestKeys); err != nil {
		t.Fatalf("after a revoke a new ingest key fits: %v", err)
	}
	// Another owner's keys are counted apart.
	newKey(t, s, newOwner(t, s).ID, core.IngestKey)
}

// testRevokedKeysKept: an owner keeps the core.KeptRevokedKeys keys of a
// kind revoked last; older revoked ones are deleted at the next revoke
// of that kind and are unknown from then on. Live keys, the other kind
// and other owners are untouched.
func testRevokedKeysKept(t *testing.T, s Stores) {
	o, other := newOwner(t, s), newOwner(t, s)
	live := newKey(t, s, o.ID, core.IngestKey)
	api := newKey(t, s, o.ID, core.APIKey)
	otherKey := newKey(t, s, other.ID, core.IngestKey)
	base := time.Now().UTC().Truncate(time.Microsecond)
	for _, k := range []core.Key{api, otherKey} {
		if err := s.Keys.RevokeKey(ctx, k.OwnerID, k.ID, base); err != nil {
			t.Fatal(err)
		}
	}
	const extra = 3
	// Made and revoked a pair at a time, the later made revoked first,
	// so the order revoked is not the order made; never more live keys
	// than the limit allows.
	var revoked []core.Key // in the order revoked
	for len(revoked) < core.KeptRevokedKeys+extra {
		pair := []core.Key{newKey(t, s, o.ID, core.IngestKey)}
		if len(revoked)+1 < core.KeptRevokedKeys+extra {
			pair = append([]core.Key{newKey(t, s, o.ID, core.IngestKey)}, pair...)
		}
		for _, k := range pair {
			revoked = append(revoked, k)
			if err := s.Keys.RevokeKey(ctx, o.ID, k.ID, base.Add(time.Duration(len(revoked))*time.Second)); err != nil {
				t.Fatal(err)
			}
		}
	}
	gone, kept := revoked[:extra], revoked[extra:]
	for _, k := range gone {
		if _, err := s.Keys.KeyByHash(ctx, k.Hash); !core.IsKind(err, core.KindNotFound) {
			t.Fatalf("a key revoked before the last %d is still found by hash: %v", core.KeptRevokedKeys, err)
		}
		if _, err := s.Keys.Key(ctx, o.ID, k.ID); !core.IsKind(err, core.KindNotFound) {
			t.Fatalf("a key revoked before the last %d is still found by id: %v", core.KeptRevokedKeys, err)
		}
	}
	list, err := s.Keys.Keys(ctx, o.ID, core.IngestKey)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{live.ID: true}
	for _, k := range kept {
		want[k.ID] = true
	}
	var ids []string
	for i, k := range list {
		ids = append(ids, k.ID)
		if !want[k.ID] {
			t.Errorf("Keys lists %s, which is neither live nor among the last revoked", k.ID)
		}
		if i > 0 && k.CreatedAt.Before(list[i-1].CreatedAt) {
			t.Errorf("Keys not oldest first at %d", i)
		}
	}
	if len(list) != len(want) {
		t.Fatalf("Keys lists %d keys (%s), want the live one and the last %d revoked", len(list), strings.Join(ids, " "), core.KeptRevokedKeys)
	}
	if got, err := s.Keys.Key(ctx, o.ID, live.ID); err != nil || got.Revoked() {
		t.Fatalf("the live key: %+v, %v", got, err)
	}
	for _, k := range []core.Key{api, otherKey} {
		if got, err := s.Keys.KeyByHash(ctx, k.Hash); err != nil || !got.Revoked() {
			t.Fatalf("a revoked key of another kind or owner: %+v, %v; want it kept", got, err)
		}
	}
	// Revoking a revoked key again keeps the count and changes nothing.
	if err := s.Keys.RevokeKey(ctx, o.ID, kept[0].ID, base.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if list, _ := s.Keys.Keys(ctx, o.ID, core.IngestKey); len(list) != len(want) {
		t.Fatalf("after revoking a revoked key again: %d keys, want %d", len(list), len(want))
	}
	// The next revoke deletes the oldest kept one, only that.
	if err := s.Keys.RevokeKey(ctx, o.ID, live.ID, base.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Keys.Key(ctx, o.ID, kept[0].ID); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("the oldest kept revoked key after one more revoke: %v", err)
	}
	if list, _ := s.Keys.Keys(ctx, o.ID, core.IngestKey); len(list) != core.KeptRevokedKeys {
		t.Fatalf("after one more revoke: %d keys, want %d", len(list), core.KeptRevokedKeys)
	}
}
