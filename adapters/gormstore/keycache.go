package gormstore

import (
	"sync"

	"github.com/earshothq/earshot/core"
)

// On Postgres every API request looked its key up: a round trip and a
// statement in Postgres for a row that changes a few times in its life.
// So keys are kept in memory, and kept right by Postgres itself: a
// trigger on api_keys (migration 13) sends the hash of every key that
// changes or goes on the channel keysChannel when its transaction
// commits, whichever process or replica wrote it, and each process
// listens on a connection of its own (listen.go) and drops that key. A
// key is cached only while that connection is seen to work: a key read
// from the database before it was, or while a drop was on its way, is
// not kept (the generation below), and when the connection fails the
// cache is emptied and stays unused until it listens again. A revoked
// key therefore stops working in every process once Postgres has told
// it, within a millisecond or so on a working network; the process that
// revoked it drops it at once. SQLite has no such channel and its
// lookups cost no round trip, so it is not cached there.
const keysChannel = "earshot_keys"

// maxCachedKeys bounds the cache: past it, further keys are looked up
// without being kept until drops make room.
const maxCachedKeys = 10_000

type keyCache struct {
	mu   sync.Mutex
	live bool                // the listening connection is up
	gen  uint64              // bumped at every drop, so a read that raced one is not kept
	keys map[string]core.Key // by hash
}

// get returns the cached key of hash, or the generation to hand to put
// after reading it from the database.
func (c *keyCache) get(hash string) (core.Key, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, ok := c.keys[hash]
	return k, ok, c.gen
}

// put keeps k unless the cache is down or anything was dropped since
// gen was read.
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
	} else {
		delete(c.keys, hash)
	}
}

// dropID forgets the key whose id is id.
func (c *keyCache) dropID(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for h, k := range c.keys {
		if k.ID == id {
			delete(c.keys, h)
		}
	}
}

// setLive empties the cache and says whether it may keep keys.
func (c *keyCache) setLive(live bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.live = live
	clear(c.keys)
}
