package gormstore

import (
	"context"
	"time"

	"gorm.io/gorm"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

type keyRow struct {
	ID         string `gorm:"primaryKey"`
	OwnerID    string
	Kind       string
	Name       string
	Hash       string
	Scopes     string // comma-separated
	CreatedAt  int64  `gorm:"autoCreateTime:false"`
	RevokedAt  int64
	LastUsedAt int64
}

func (keyRow) TableName() string { return "api_keys" }

func (r keyRow) key() core.Key {
	return core.Key{
		ID: r.ID, OwnerID: r.OwnerID, Kind: core.KeyKind(r.Kind), Name: r.Name, Hash: r.Hash, Scopes: splitList[core.Scope](r.Scopes),
		CreatedAt: fromMicros(r.CreatedAt), RevokedAt: fromMicros(r.RevokedAt), LastUsedAt: fromMicros(r.LastUsedAt),
	}
}

// KeyStore keeps keys by the hash of their secret.
type KeyStore struct{ db *DB }

var _ ports.KeyStore = (*KeyStore)(nil)

// NewKeyStore returns the key store of db.
func NewKeyStore(db *DB) *KeyStore { return &KeyStore{db: db} }

// CreateKey implements ports.KeyStore.
func (s *KeyStore) CreateKey(ctx context.Context, k *core.Key, max int) error {
	return translate(s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		if _, err := lockOwner(tx, k.OwnerID); err != nil {
			return err
		}
		if k.Kind == core.APIKey {
			var live int64
			if err := tx.Model(&keyRow{}).Where("owner_id = ? AND kind = ? AND revoked_at = 0", k.OwnerID, core.APIKey).
				Count(&live).Error; err != nil {
				return err
			}
			if int(live) >= max {
				return core.Errorf(core.KindPlanLimit, "an owner may hold at most %d API keys: revoke one first", max)
			}
		}
		k.ID = newID()
		k.CreatedAt = tx.NowFunc().Truncate(time.Microsecond)
		return tx.Create(&keyRow{
			ID: k.ID, OwnerID: k.OwnerID, Kind: string(k.Kind), Name: k.Name, Hash: k.Hash,
			Scopes: joinList(k.Scopes), CreatedAt: micros(k.CreatedAt),
		}).Error
	}), "key")
}

// KeyByHash implements ports.KeyStore. On Postgres keys come from
// memory while Postgres tells this process of every change (keycache.go);
// on SQLite the cache never goes live.
func (s *KeyStore) KeyByHash(ctx context.Context, hash string) (core.Key, error) {
	if s.db.postgres {
		s.db.listen()
	}
	k, ok, gen := s.db.keyCache.get(hash)
	if ok {
		return k, nil
	}
	// Every request reads its key (on SQLite always): the SQL is written
	// out and scanned into the row's fields, without gorm's reflection.
	rows, err := scanAll(s.db.with(ctx).Raw("SELECT "+keyColumns+" FROM api_keys WHERE hash = ?", hash), (*keyRow).fields)
	if err != nil {
		return core.Key{}, translate(err, "key")
	}
	if len(rows) == 0 {
		return core.Key{}, core.Errorf(core.KindNotFound, "key not found")
	}
	k = rows[0].key()
	s.db.keyCache.put(k, gen)
	return k, nil
}

const keyColumns = "id, owner_id, kind, name, hash, scopes, created_at, revoked_at, last_used_at"

func (r *keyRow) fields() []any {
	return []any{&r.ID, &r.OwnerID, &r.Kind, &r.Name, &r.Hash, &r.Scopes, &r.CreatedAt, &r.RevokedAt, &r.LastUsedAt}
}

// Keys implements ports.KeyStore.
func (s *KeyStore) Keys(ctx context.Context, ownerID string, kind core.KeyKind) ([]core.Key, error) {
	return list(s.db.with(ctx).Where("owner_id = ? AND kind = ?", ownerID, kind).Order("created_at, id"), "key", keyRow.key)
}

// RevokeKey implements ports.KeyStore.
func (s *KeyStore) RevokeKey(ctx context.Context, ownerID, id string, at time.Time) error {
	var hash string
	err := s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		var row keyRow
		if err := tx.Take(&row, "id = ? AND owner_id = ?", id, ownerID).Error; err != nil || row.RevokedAt != 0 {
			return err
		}
		hash = row.Hash
		return tx.Model(&row).Update("revoked_at", micros(at)).Error
	})
	if hash != "" {
		s.db.keyCache.drop(hash) // at once here; Postgres tells the others on commit
	}
	return translate(err, "key")
}

// Key implements ports.KeyStore.
func (s *KeyStore) Key(ctx context.Context, ownerID, id string) (core.Key, error) {
	return one(s.db.with(ctx), "key", keyRow.key, "id = ? AND owner_id = ?", id, ownerID)
}

// MarkKeyUsed implements ports.KeyStore. Postgres does not announce a
// last use (a message a minute a key to every process), so the process
// that records one drops its cached copy.
func (s *KeyStore) MarkKeyUsed(ctx context.Context, id string, at time.Time) error {
	us := micros(at)
	err := s.db.with(ctx).Model(&keyRow{}).Where("id = ? AND last_used_at < ?", id, us).Update("last_used_at", us).Error
	s.db.keyCache.dropID(id)
	return translate(err, "key")
}
