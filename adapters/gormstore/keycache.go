package gormstore

import (
	"sync"
	"time"

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
// it, within a millisecond or so on a working network, and within
// keyTrust when the connection hangs; the process that revoked it drops
// it at once. SQLite has no such channel and its
// lookups cost no round trip, so it is not cached there.
const keysChannel = "earshot_keys"

// keyTrust bounds how long a revoked key may still work in a process
// that has not heard of it: the cache answers only while the last probe
// that came back on the listening connection (listen.go) was sent less
// than keyTrust ago. Postgres delivers notifications in commit order,
// so once a probe sent at t has come back, every change committed
// before t has been dropped; a change committed after it is at most
// keyTrust old when the cache stops answering. A connection that hangs
// (no error, nothing arrives) therefore stops the cache within keyTrust,
// and every request looks its key up until probes come back again.
// Probes go out every probeEvery, well within it, so a working
// connection keeps the cache in use.
const keyTrust = time.Second

// maxCachedKeys bounds the cache: past it, further keys are looked up
// without being kept until drops make room.
const maxCachedKeys = 10_000

type keyCache struct {
	mu   sync.Mutex
	live bool                // the listening connection is up
	gen  uint64              // bumped at every drop, so a read that raced one is not kept
	keys map[string]core.Key // by hash
	// confirmed is when the last probe that came back was sent: the
	// cache answers until keyTrust after it.
	confirmed time.Time
	now       func() time.Time // nil: time.Now; tests move it
}

func (c *keyCache) clock() time.Time {
	if c.now != nil {
		return c.now()
	}
	return time.Now()
}

// trusted says whether the cache may answer now; c.mu is held. A clock
// set back (confirmed in the future) is not trusted either.
func (c *keyCache) trusted() bool {
	since := c.clock().Sub(c.confirmed)
	return c.live && since >= 0 && since < keyTrust
}

// confirm records that a probe sent at sent came back: every change
// committed before then has been dropped.
func (c *keyCache) confirm(sent time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.confirmed = sent
}

// get returns the cached key of hash, or the generation to hand to put
// after reading it from the database. Nothing is answered while the
// cache is not trusted (keyTrust).
func (c *keyCache) get(hash string) (core.Key, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.trusted() {
		return core.Key{}, false, c.gen
	}
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
	c.confirmed = time.Time{}
	clear(c.keys)
}
