package gormstore

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
)

type keyRow struct {
	ID, OwnerID, Kind, Name, Hash, Scopes string // Scopes comma-separated
	CreatedAt, RevokedAt, LastUsedAt      int64  `gorm:"autoCreateTime:false"` // µs
}

func (keyRow) TableName() string { return "api_keys" }

const keyColumns = "id, owner_id, kind, name, hash, scopes, created_at, revoked_at, last_used_at"

func (r *keyRow) fields() []any {
	return []any{&r.ID, &r.OwnerID, &r.Kind, &r.Name, &r.Hash, &r.Scopes, &r.CreatedAt, &r.RevokedAt, &r.LastUsedAt}
}

func (r keyRow) key() core.Key {
	return core.Key{
		ID: r.ID, OwnerID: r.OwnerID, Kind: core.KeyKind(r.Kind), Name: r.Name, Hash: r.Hash, Scopes: splitList[core.Scope](r.Scopes),
		CreatedAt: fromMicros(r.CreatedAt), RevokedAt: fromMicros(r.RevokedAt), LastUsedAt: fromMicros(r.LastUsedAt),
	}
}

// KeyStore keeps keys by the hash of their secret.
type KeyStore struct{ db *DB }

func NewKeyStore(db *DB) *KeyStore { return &KeyStore{db: db} }

// CreateKey counts the owner's live keys of k's kind under the owner's
// row lock, so two creates at once cannot both take the last place.
func (s *KeyStore) CreateKey(ctx context.Context, k *core.Key, max int) error {
	return translate(s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := lockOwner(tx, k.OwnerID); err != nil {
			return err
		}
		var live int64
		if err := tx.Model(&keyRow{}).Where("owner_id = ? AND kind = ? AND revoked_at = 0", k.OwnerID, k.Kind).Count(&live).Error; err != nil {
			return err
		}
		if int(live) >= max {
			return core.Errorf(core.KindPlanLimit, "an owner may hold at most %d %s keys: revoke one first", max, k.Kind.Label())
		}
		k.ID, k.CreatedAt = newID(), tx.NowFunc().Truncate(time.Microsecond)
		return tx.Create(&keyRow{ID: k.ID, OwnerID: k.OwnerID, Kind: string(k.Kind), Name: k.Name, Hash: k.Hash,
			Scopes: joinList(k.Scopes), CreatedAt: micros(k.CreatedAt)}).Error
	}), "key")
}

// keyCache keeps the keys read on Postgres for keyTrust, where every
// request would otherwise be a round trip for a row that changes a few
// times in its life. A key revoked or used by another process is seen
// here within keyTrust, by that process at once (forget). SQLite reads
// every key: no round trip, and the admin console's process could not
// tell the server's.
type keyCache struct {
	mu   sync.Mutex
	gen  uint64               // bumped at every drop: a key read across one is not kept
	keys map[string]cachedKey // by hash, at most 10,000
}

const keyTrust = time.Second // how long keyCache answers a key from one read

type cachedKey struct {
	core.Key
	read time.Time // when the read began
}

// KeyByHash implements ports.KeyStore. Every request reads its key: the
// SQL is written out and scanned by hand.
func (s *KeyStore) KeyByHash(ctx context.Context, hash string) (core.Key, error) {
	c, now := &s.db.keys, s.db.gorm.NowFunc()
	c.mu.Lock()
	e, ok := c.keys[hash]
	gen := c.gen
	c.mu.Unlock()
	if ok && !now.Before(e.read) && now.Sub(e.read) < keyTrust { // a clock set back is not trusted
		return e.Key, nil
	}
	rows, err := scanAll(s.db.with(ctx).Raw("SELECT "+keyColumns+" FROM api_keys WHERE hash = ?", hash), (*keyRow).fields)
	if err != nil || len(rows) == 0 {
		return core.Key{}, translate(cmp.Or(err, gorm.ErrRecordNotFound), "key")
	}
	k := rows[0].key()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.keys) >= 10_000 {
		maps.DeleteFunc(c.keys, func(_ string, e cachedKey) bool { return now.Sub(e.read) >= keyTrust || now.Before(e.read) })
	}
	if s.db.postgres && c.gen == gen && len(c.keys) < 10_000 {
		c.keys[hash] = cachedKey{k, now}
	}
	return k, nil
}

// forget drops the keys ids from memory: this process sees what it
// changed, revoked or deleted at once.
func (c *keyCache) forget(ids ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	maps.DeleteFunc(c.keys, func(_ string, e cachedKey) bool { return slices.Contains(ids, e.ID) })
}

// Keys lists the live keys and the last core.KeptRevokedKeys revoked:
// RevokeKey deletes older ones, and the bound here holds for rows
// revoked before it did.
func (s *KeyStore) Keys(ctx context.Context, ownerID string, kind core.KeyKind) ([]core.Key, error) {
	db := s.db.with(ctx)
	lastRevoked := db.Model(&keyRow{}).Select("id").Where("owner_id = ? AND kind = ? AND revoked_at <> 0", ownerID, kind).
		Order("revoked_at DESC, id DESC").Limit(core.KeptRevokedKeys)
	return list(db.Where("owner_id = ? AND kind = ? AND (revoked_at = 0 OR id IN (?))", ownerID, kind, lastRevoked).
		Order("created_at, id"), "key", keyRow.key)
}

func (s *KeyStore) Key(ctx context.Context, ownerID, id string) (core.Key, error) {
	return one(s.db.with(ctx), "key", keyRow.key, "id = ? AND owner_id = ?", id, ownerID)
}

// RevokeKey revokes the key and deletes the owner's revoked keys of its
// kind past the last core.KeptRevokedKeys, in one transaction under the
// owner's row lock (as CreateKey takes it), so revokes at once cannot
// leave more. Revoking a revoked key trims too: rows revoked before the
// bound existed go at the owner's next revoke.
func (s *KeyStore) RevokeKey(ctx context.Context, ownerID, id string, at time.Time) error {
	var dropped []string
	err := s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := lockOwner(tx, ownerID); err != nil {
			return err
		}
		var row keyRow
		if err := tx.Take(&row, "id = ? AND owner_id = ?", id, ownerID).Error; err != nil {
			return err
		}
		if row.RevokedAt == 0 {
			if err := tx.Model(&keyRow{}).Where("id = ?", id).Update("revoked_at", micros(at)).Error; err != nil {
				return err
			}
		}
		kept := tx.Model(&keyRow{}).Select("id").Where("owner_id = ? AND kind = ? AND revoked_at <> 0", ownerID, row.Kind).
			Order("revoked_at DESC, id DESC").Limit(core.KeptRevokedKeys)
		if err := tx.Model(&keyRow{}).Where("owner_id = ? AND kind = ? AND revoked_at <> 0 AND id NOT IN (?)", ownerID, row.Kind, kept).
			Pluck("id", &dropped).Error; err != nil || len(dropped) == 0 {
			return err
		}
		return tx.Where("id IN ?", dropped).Delete(&keyRow{}).Error
	})
	s.db.keys.forget(append(dropped, id)...)
	return translate(err, "key")
}

func (s *KeyStore) MarkKeyUsed(ctx context.Context, id string, at time.Time) error {
	us := micros(at)
	err := s.db.write(ctx).Model(&keyRow{}).Where("id = ? AND last_used_at < ?", id, us).Update("last_used_at", us).Error
	s.db.keys.forget(id)
	return translate(err, "key")
}
