package gormstore

import (
	"maps"
	"sync"
	"time"

	"github.com/earshothq/earshot/core"
)

// On Postgres every API request would look its key up, a round trip for
// a row that changes a few times in its life, so each process keeps the
// keys it read. A trigger on api_keys (migration 13) sends the hash of
// each key changed or deleted on keysChannel when that commits, and the
// process drops it (listen.go). A key read while a drop was on its way
// is not kept (gen); the cache is emptied when listening fails and
// answers only while probes come back (keyTrust).
const keysChannel = "earshot_keys"

// keyTrust bounds how long a revoked key may still work in a process
// that missed its drop: the cache answers until keyTrust after the last
// probe that came back was sent (notifications arrive in commit order).
const keyTrust = time.Second

// maxCachedKeys bounds the cache; past it keys are looked up unkept.
const maxCachedKeys = 10_000

type keyCache struct {
	mu        sync.Mutex
	live      bool                // listening works
	gen       uint64              // bumped at every drop
	keys      map[string]core.Key // by hash
	confirmed time.Time           // when the last probe that came back was sent
	now       func() time.Time    // nil: time.Now; tests move it
}

func (c *keyCache) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// confirm records that a probe sent at sent came back.
func (c *keyCache) confirm(sent time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.confirmed = sent
}

// get returns the cached key of hash, and the generation to hand to put
// after reading it from the database. A clock set back is not trusted.
func (c *keyCache) get(hash string) (core.Key, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if since := c.clock().Sub(c.confirmed); !c.live || since < 0 || since >= keyTrust {
		return core.Key{}, false, c.gen
	}
	k, ok := c.keys[hash]
	return k, ok, c.gen
}

// put keeps k unless the cache is down or anything was dropped since gen.
func (c *keyCache) put(k core.Key, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.live && c.gen == gen && len(c.keys) < maxCachedKeys {
		if c.keys == nil {
			c.keys = map[string]core.Key{}
		}
		c.keys[k.Hash] = k
	}
}

// drop forgets the key of hash, or every key when hash is empty.
func (c *keyCache) drop(hash string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if hash == "" {
		clear(c.keys)
	}
	delete(c.keys, hash)
}

// dropID forgets the key whose id is id.
func (c *keyCache) dropID(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	maps.DeleteFunc(c.keys, func(_ string, k core.Key) bool { return k.ID == id })
}

// setLive empties the cache and says whether it may keep keys.
func (c *keyCache) setLive(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.live, c.confirmed = live, time.Time{}
	clear(c.keys)
}
