package gormstore

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
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
	Scopes     string
	CreatedAt  int64 `gorm:"autoCreateTime:false"`
	RevokedAt  int64
	LastUsedAt int64
}

func (keyRow) TableName() string { return "api_keys" }

func (r keyRow) key() core.Key {
	k := core.Key{
		ID: r.ID, OwnerID: r.OwnerID, Kind: core.KeyKind(r.Kind), Name: r.Name, Hash: r.Hash,
		CreatedAt: fromMicros(r.CreatedAt), RevokedAt: fromMicros(r.RevokedAt), LastUsedAt: fromMicros(r.LastUsedAt),
	}
	for _, s := range strings.Split(r.Scopes, ",") {
		if s != "" {
			k.Scopes = append(k.Scopes, core.Scope(s))
		}
	}
	return k
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
		k.CreatedAt = tx.NowFunc().Truncate(1000)
		scopes := make([]string, len(k.Scopes))
		for i, sc := range k.Scopes {
			scopes[i] = string(sc)
		}
		return tx.Create(&keyRow{
			ID: k.ID, OwnerID: k.OwnerID, Kind: string(k.Kind), Name: k.Name, Hash: k.Hash,
			Scopes: strings.Join(scopes, ","), CreatedAt: micros(k.CreatedAt),
		}).Error
	}), "key")
}

// KeyByHash implements ports.KeyStore.
func (s *KeyStore) KeyByHash(ctx context.Context, hash string) (core.Key, error) {
	if !s.db.postgres {
		return s.keyByHash(ctx, hash)
	}
	s.db.listen()
	c := &s.db.keyCache
	k, ok, gen := c.get(hash)
	if ok {
		return k, nil
	}
	k, err := s.keyByHash(ctx, hash)
	if err == nil {
		c.put(k, gen)
	}
	return k, err
}

// keyColumns are the columns of a key, in the order keyByHash reads them.
var keyColumns = []string{"id", "owner_id", "kind", "name", "hash", "scopes", "created_at", "revoked_at", "last_used_at"}

// packedKey is keyColumns packed into one value as packedExpr packs a
// match: on SQLite the driver makes a cgo call or more for each column
// read, which cost every API request more than the lookup itself.
// SQLite keeps it in the column packed (migration 17).
var packedKey = packedExpr("", keyColumns)

// keyByHash reads the key of hash from the database.
func (s *KeyStore) keyByHash(ctx context.Context, hash string) (core.Key, error) {
	// Every API request looks its key up: a hand-written scan keeps it cheap.
	cols := "COALESCE(packed, " + packedKey + ")"
	if s.db.postgres {
		cols = strings.Join(keyColumns, ", ")
	}
	rows, err := s.db.query(ctx, "SELECT "+cols+" FROM api_keys WHERE hash = ?", hash)
	if err != nil {
		return core.Key{}, translate(err, "key")
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return core.Key{}, translate(err, "key")
		}
		return core.Key{}, translate(gorm.ErrRecordNotFound, "key")
	}
	var row keyRow
	if s.db.postgres {
		err = rows.Scan(&row.ID, &row.OwnerID, &row.Kind, &row.Name, &row.Hash, &row.Scopes, &row.CreatedAt, &row.RevokedAt, &row.LastUsedAt)
	} else {
		row, err = scanPackedKey(rows)
	}
	if err != nil {
		return core.Key{}, translate(err, "key")
	}
	return row.key(), nil
}

// scanPackedKey reads a row of packedKey.
func scanPackedKey(rows *sql.Rows) (keyRow, error) {
	var packed string
	if err := rows.Scan(&packed); err != nil {
		return keyRow{}, err
	}
	var vals [9]string
	var nulls [9]bool
	if _, err := splitPacked(packed, vals[:], nulls[:]); err != nil {
		return keyRow{}, err
	}
	r := keyRow{ID: vals[0], OwnerID: vals[1], Kind: vals[2], Name: vals[3], Hash: vals[4], Scopes: vals[5]}
	var err error
	for i, n := range []*int64{&r.CreatedAt, &r.RevokedAt, &r.LastUsedAt} {
		if *n, err = strconv.ParseInt(vals[6+i], 10, 64); err != nil {
			return keyRow{}, fmt.Errorf("packed key: %s: %w", keyColumns[6+i], err)
		}
	}
	return r, nil
}

// Keys implements ports.KeyStore.
func (s *KeyStore) Keys(ctx context.Context, ownerID string, kind core.KeyKind) ([]core.Key, error) {
	var rows []keyRow
	if err := s.db.with(ctx).Where("owner_id = ? AND kind = ?", ownerID, kind).
		Order("created_at, id").Find(&rows).Error; err != nil {
		return nil, translate(err, "key")
	}
	out := make([]core.Key, len(rows))
	for i, r := range rows {
		out[i] = r.key()
	}
	return out, nil
}

// RevokeKey implements ports.KeyStore.
func (s *KeyStore) RevokeKey(ctx context.Context, ownerID, id string, at time.Time) error {
	var hash string
	err := s.db.with(ctx).Transaction(func(tx *gorm.DB) error {
		var row keyRow
		if err := tx.Take(&row, "id = ? AND owner_id = ?", id, ownerID).Error; err != nil {
			return err
		}
		if row.RevokedAt != 0 {
			return nil
		}
		hash = row.Hash
		return tx.Model(&keyRow{}).Where("id = ?", id).Update("revoked_at", micros(at)).Error
	})
	if hash != "" {
		// Postgres tells every process once the revocation commits (see
		// keycache.go); this one does not wait for the message.
		s.db.keyCache.drop(hash)
	}
	return translate(err, "key")
}

// Key implements ports.KeyStore.
func (s *KeyStore) Key(ctx context.Context, ownerID, id string) (core.Key, error) {
	var row keyRow
	if err := s.db.with(ctx).Take(&row, "id = ? AND owner_id = ?", id, ownerID).Error; err != nil {
		return core.Key{}, translate(err, "key")
	}
	return row.key(), nil
}

// MarkKeyUsed implements ports.KeyStore.
// The cached key's last use goes stale in this process: the trigger
// leaves last_used_at out, so that a use a minute is not a message to
// every process, and each process drops the key when it records a use
// itself, to read the new time on the next lookup.
func (s *KeyStore) MarkKeyUsed(ctx context.Context, id string, at time.Time) error {
	us := micros(at)
	err := s.db.with(ctx).Exec("UPDATE api_keys SET last_used_at = ? WHERE id = ? AND last_used_at < ?", us, id, us).Error
	s.db.keyCache.dropID(id)
	return translate(err, "key")
}

// lockOwner reads the owner row, locking it on Postgres until the
// transaction ends (SQLite's IMMEDIATE transactions already hold the write
// lock). Work that checks a limit and then inserts serializes per owner.
func lockOwner(tx *gorm.DB, ownerID string) (ownerRow, error) {
	var row ownerRow
	err := tx.Clauses(lockForUpdate).Take(&row, "id = ?", ownerID).Error
	return row, err
}
