package gormstore

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// testOwner stores an owner of email on db.
func testOwner(t *testing.T, db *DB, email string) core.Owner {
	t.Helper()
	o, err := core.NewOwner(email, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := NewOwnerStore(db).CreateOwner(context.Background(), &o); err != nil {
		t.Fatal(err)
	}
	return o
}

// testKey stores a new API key of owner on db.
func testKey(t *testing.T, db *DB, owner core.Owner, name string) core.Key {
	t.Helper()
	k := core.Key{OwnerID: owner.ID, Kind: core.APIKey, Name: name, Hash: rand.Text(), Scopes: []core.Scope{core.ScopeRead}}
	if err := NewKeyStore(db).CreateKey(context.Background(), &k, 5); err != nil {
		t.Fatal(err)
	}
	return k
}

// rename changes a key's name behind the stores' back: a process that
// still reads the old name answers from memory.
func rename(t *testing.T, db *DB, k core.Key, name string) {
	t.Helper()
	if err := db.gorm.Exec("UPDATE api_keys SET name = ? WHERE id = ?", name, k.ID).Error; err != nil {
		t.Fatal(err)
	}
}

// TestKeyCacheWithinKeyTrust runs two pools on one Postgres schema, as
// two replicas: a key one of them read is answered from memory for
// keyTrust after the read began and read afresh after it (or on a clock
// set back), so what the other does to it (revocation, deletion) holds
// here within keyTrust; what this one does holds at once.
func TestKeyCacheWithinKeyTrust(t *testing.T) {
	ctx := context.Background()
	clock := newTestClock()
	dbs := openPools(t, pgtest.URL(t), 2, clock)
	a, b := NewKeyStore(dbs[0]), NewKeyStore(dbs[1])
	o := testOwner(t, dbs[1], "cache@example.com")
	name := func(k core.Key) string {
		t.Helper()
		got, err := a.KeyByHash(ctx, k.Hash)
		if err != nil {
			t.Fatal(err)
		}
		return got.Name
	}

	k := testKey(t, dbs[1], o, "one")
	name(k)
	rename(t, dbs[1], k, "renamed")
	if got := name(k); got != "one" {
		t.Fatalf("read %q within keyTrust, want the name it had when read", got)
	}
	clock.advance(keyTrust - time.Microsecond)
	if got := name(k); got != "one" {
		t.Fatalf("read %q just within keyTrust", got)
	}
	clock.advance(time.Microsecond)
	if got := name(k); got != "renamed" {
		t.Fatalf("read %q keyTrust after the read", got)
	}
	rename(t, dbs[1], k, "back")
	clock.advance(-time.Millisecond)
	if got := name(k); got != "back" {
		t.Fatalf("read %q on a clock set back", got)
	}

	if err := b.RevokeKey(ctx, o.ID, k.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got, err := a.KeyByHash(ctx, k.Hash); err != nil || got.Revoked() {
		t.Fatalf("revoked by another process, within keyTrust: %+v, %v; want the key read before", got, err)
	}
	clock.advance(keyTrust)
	if got, err := a.KeyByHash(ctx, k.Hash); err != nil || !got.Revoked() {
		t.Fatalf("revoked by another process, keyTrust later: %+v, %v", got, err)
	}

	gone := testKey(t, dbs[1], o, "two")
	name(gone)
	if err := dbs[1].gorm.Exec("DELETE FROM api_keys WHERE id = ?", gone.ID).Error; err != nil {
		t.Fatal(err)
	}
	clock.advance(keyTrust)
	if _, err := a.KeyByHash(ctx, gone.Hash); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("deleted by another process, keyTrust later: %v", err)
	}

	own := testKey(t, dbs[0], o, "three")
	name(own)
	if err := a.RevokeKey(ctx, o.ID, own.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got, err := a.KeyByHash(ctx, own.Hash); err != nil || !got.Revoked() {
		t.Fatalf("revoked by this process: %+v, %v; want revoked at once", got, err)
	}
}

// TestKeyCacheKeepsNoRacedRead: a key read while this process forgot a
// key is not kept, since the read may have begun before the change the
// forgetting follows.
func TestKeyCacheKeepsNoRacedRead(t *testing.T) {
	ctx := context.Background()
	db := openPools(t, pgtest.URL(t), 1, newTestClock())[0]
	k := testKey(t, db, testOwner(t, db, "race@example.com"), "one")
	forget := false
	if err := db.gorm.Callback().Row().Before("gorm:row").Register("test:forget", func(*gorm.DB) {
		if forget {
			db.keys.forget("another key")
		}
	}); err != nil {
		t.Fatal(err)
	}
	forget = true
	if _, err := NewKeyStore(db).KeyByHash(ctx, k.Hash); err != nil {
		t.Fatal(err)
	}
	forget = false
	rename(t, db, k, "renamed")
	if got, err := NewKeyStore(db).KeyByHash(ctx, k.Hash); err != nil || got.Name != "renamed" {
		t.Fatalf("after a raced read: %+v, %v; want the key read afresh", got, err)
	}
	if got, err := NewKeyStore(db).KeyByHash(ctx, k.Hash); err != nil || got.Name != "renamed" {
		t.Fatal(err)
	}
	rename(t, db, k, "kept")
	if got, err := NewKeyStore(db).KeyByHash(ctx, k.Hash); err != nil || got.Name != "renamed" {
		t.Fatalf("after a quiet read: %+v, %v; want the key kept", got, err)
	}
}

// TestKeysReadEveryTimeOnSQLite: SQLite keeps no key, so a change made by
// another process, such as the admin console, holds at once.
func TestKeysReadEveryTimeOnSQLite(t *testing.T) {
	ctx := context.Background()
	db := openMigrated(t, "sqlite://:memory:")
	k := testKey(t, db, testOwner(t, db, "lite@example.com"), "one")
	for _, name := range []string{"one", "two", "three"} {
		rename(t, db, k, name)
		if got, err := NewKeyStore(db).KeyByHash(ctx, k.Hash); err != nil || got.Name != name {
			t.Fatalf("%+v, %v; want %q", got, err, name)
		}
	}
}

// TestKeyCacheForgetsTrimmedKeys: a revoked key this process holds in
// memory and a later revoke deletes (past core.KeptRevokedKeys) is
// unknown here at once, not answered from memory as revoked, so memory
// holds no key the table no longer has.
func TestKeyCacheForgetsTrimmedKeys(t *testing.T) {
	ctx := context.Background()
	db := openPools(t, pgtest.URL(t), 1, newTestClock())[0]
	keys := NewKeyStore(db)
	o := testOwner(t, db, "trim@example.com")
	at := time.Now()
	var first core.Key
	for i := range core.KeptRevokedKeys + 1 {
		k := testKey(t, db, o, "k")
		if err := keys.RevokeKey(ctx, o.ID, k.ID, at.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = k
			if got, err := keys.KeyByHash(ctx, k.Hash); err != nil || !got.Revoked() {
				t.Fatalf("first revoked key: %+v, %v", got, err)
			}
		}
	}
	if got, err := keys.KeyByHash(ctx, first.Hash); !core.IsKind(err, core.KindNotFound) {
		t.Fatalf("a trimmed key read from memory: %+v, %v; want not found", got, err)
	}
}

// TestKeysListsTheLastRevoked: rows revoked before revoked keys were
// trimmed (here revoked behind the store's back) are listed only as far
// as core.KeptRevokedKeys, the last revoked, and the owner's next revoke
// deletes the rest.
func TestKeysListsTheLastRevoked(t *testing.T) {
	for name, url := range map[string]func(testing.TB) string{
		"sqlite":   func(testing.TB) string { return "sqlite://:memory:" },
		"postgres": pgtest.URL,
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := openPools(t, url(t), 1, newTestClock())[0]
			keys := NewKeyStore(db)
			o := testOwner(t, db, "old-revoked@example.com")
			var made []core.Key
			for i := range core.KeptRevokedKeys + 5 {
				k := testKey(t, db, o, "k")
				if err := db.gorm.Exec("UPDATE api_keys SET revoked_at = ? WHERE id = ?", 1+i, k.ID).Error; err != nil {
					t.Fatal(err)
				}
				made = append(made, k)
			}
			live := testKey(t, db, o, "live")
			list, err := keys.Keys(ctx, o.ID, core.APIKey)
			if err != nil || len(list) != core.KeptRevokedKeys+1 || list[0].ID != made[5].ID || list[len(list)-1].ID != live.ID {
				t.Fatalf("Keys = %d keys, %v; want the live one and the last %d revoked", len(list), err, core.KeptRevokedKeys)
			}
			var rows int64
			count := func() int64 {
				if err := db.gorm.Table("api_keys").Where("owner_id = ?", o.ID).Count(&rows).Error; err != nil {
					t.Fatal(err)
				}
				return rows
			}
			if n := count(); n != core.KeptRevokedKeys+6 {
				t.Fatalf("%d rows before a revoke", n)
			}
			if err := keys.RevokeKey(ctx, o.ID, made[len(made)-1].ID, time.Now()); err != nil {
				t.Fatal(err)
			}
			if n := count(); n != core.KeptRevokedKeys+1 {
				t.Fatalf("%d rows after revoking a revoked key, want the live one and %d revoked", n, core.KeptRevokedKeys)
			}
		})
	}
}
