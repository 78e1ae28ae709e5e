package gormstore

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	neturl "net/url"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// TestKeyCacheKeepsNoRacedRead: a key read from the database while a
// drop happened, or before the cache was live, is not kept.
func TestKeyCacheKeepsNoRacedRead(t *testing.T) {
	var c memory
	c.keys = map[string]core.Key{}
	k := core.Key{ID: "k1", Hash: "h1"}
	_, _, gen := c.key("h1")
	c.put(k, gen)
	if _, ok, _ := c.key("h1"); ok {
		t.Fatal("kept a key while not listening")
	}
	c.start(nil)
	c.confirm(time.Now())
	_, _, gen = c.key("h1")
	c.drop(func(hash string, _ core.Key) bool { return hash == "other" })
	c.put(k, gen)
	if _, ok, _ := c.key("h1"); ok {
		t.Fatal("kept a key read while another was dropped")
	}
	_, _, gen = c.key("h1")
	c.put(k, gen)
	if _, ok, _ := c.key("h1"); !ok {
		t.Fatal("did not keep a key read quietly")
	}
	c.drop(func(_ string, k core.Key) bool { return k.ID == "k1" })
	if _, ok, _ := c.key("h1"); ok {
		t.Fatal("dropping by id left the key")
	}
	c.put(k, gen)
	c.stop()
	if _, ok, _ := c.key("h1"); ok {
		t.Fatal("a cache that stopped listening kept its keys")
	}
}

// TestKeyCacheTrustedWithinKeyTrust: kept keys are answered only while
// the last probe that came back was sent less than keyTrust ago, and
// not at all before one has, nor on a clock set back.
func TestKeyCacheTrustedWithinKeyTrust(t *testing.T) {
	clock := newTestClock()
	c := memory{now: clock.now}
	k := core.Key{ID: "k1", Hash: "h1"}
	c.start(nil)
	_, _, gen := c.key("h1")
	c.put(k, gen)
	if _, ok, _ := c.key("h1"); ok {
		t.Fatal("answered before a probe came back")
	}
	c.confirm(clock.now())
	if _, ok, _ := c.key("h1"); !ok {
		t.Fatal("not answered right after a probe came back")
	}
	clock.advance(keyTrust - time.Millisecond)
	if _, ok, _ := c.key("h1"); !ok {
		t.Fatal("not answered within keyTrust")
	}
	clock.advance(time.Millisecond)
	if _, ok, _ := c.key("h1"); ok {
		t.Fatalf("answered %v after the last probe was sent", keyTrust)
	}
	c.confirm(clock.now())
	clock.advance(-time.Second)
	if _, ok, _ := c.key("h1"); ok {
		t.Fatal("answered on a clock set back")
	}
}

// TestKeyCacheFollowsOtherProcesses runs two handles on one Postgres
// schema, as two replicas: a key one of them keeps in memory follows
// what the other does to it (revocation, deletion) once Postgres has
// told it, and a handle whose listening connection is cut forgets what
// it kept.
func TestKeyCacheFollowsOtherProcesses(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	dbs := openPools(t, url, 2, newTestClock())
	a, b := dbs[0], dbs[1]
	o := testOwner(t, a, "cache@example.com")
	newKey := func(name string) core.Key {
		k := core.Key{OwnerID: o.ID, Kind: core.APIKey, Name: name, Hash: rand.Text(), Scopes: []core.Scope{core.ScopeRead}}
		if err := NewKeyStore(b).CreateKey(ctx, &k, 5); err != nil {
			t.Fatal(err)
		}
		return k
	}
	keysA := NewKeyStore(a)
	// until polls a's view of hash until ok says it is right: Postgres
	// tells a asynchronously.
	until := func(what, hash string, ok func(core.Key, error) bool) {
		t.Helper()
		var k core.Key
		var err error
		if !eventually(func() bool { k, err = keysA.KeyByHash(ctx, hash); return ok(k, err) }) {
			t.Fatalf("%s: still %+v, %v", what, k, err)
		}
	}
	kept := func(hash string) func(core.Key, error) bool {
		return func(core.Key, error) bool { _, ok, _ := a.memory.key(hash); return ok }
	}
	k := newKey("one")
	until("the cache listens and keeps the key", k.Hash, kept(k.Hash))
	// A change Postgres does not announce shows that the key now comes
	// from memory.
	unannounced(t, b, "UPDATE api_keys SET name = 'renamed' WHERE id = ?", k.ID)
	if got, err := keysA.KeyByHash(ctx, k.Hash); err != nil || got.Name != "one" {
		t.Fatalf("cached key read as %+v, %v; want the name it had when cached", got, err)
	}

	if err := NewKeyStore(b).RevokeKey(ctx, o.ID, k.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	until("revoked by another process", k.Hash, func(k core.Key, err error) bool { return err == nil && k.Revoked() })

	gone := newKey("two")
	until("cached", gone.Hash, kept(gone.Hash))
	if err := b.gorm.Exec("DELETE FROM api_keys WHERE id = ?", gone.ID).Error; err != nil {
		t.Fatal(err)
	}
	until("deleted by another process", gone.Hash, func(_ core.Key, err error) bool { return core.IsKind(err, core.KindNotFound) })

	// Cut a's listening connection: what a kept is forgotten, since a
	// change could pass unannounced until it listens again.
	cut := newKey("three")
	until("cached", cut.Hash, kept(cut.Hash))
	pid := a.listener.pid.Load()
	if err := b.gorm.Exec("SELECT pg_terminate_backend(?)", int64(pid)).Error; err != nil {
		t.Fatal(err)
	}
	if !eventually(func() bool { _, ok, _ := a.memory.key(cut.Hash); return !ok }) {
		t.Fatal("not forgotten when the connection was cut")
	}
	unannounced(t, b, "UPDATE api_keys SET name = 'renamed' WHERE id = ?", cut.ID)
	until("read afresh", cut.Hash, func(k core.Key, err error) bool { return err == nil && k.Name == "renamed" })
	// It listens again (a second later) and keeps keys again.
	until("listening again", cut.Hash, kept(cut.Hash))
}

// TestKeyCacheUnusedWhileMessagesAreLost: a process whose probes do not
// come back (as behind a pooler that drops LISTEN) never answers from
// memory, so every lookup sees the database.
func TestKeyCacheUnusedWhileMessagesAreLost(t *testing.T) {
	ctx := context.Background()
	db := openPools(t, pgtest.URL(t), 1, newTestClock())[0]
	db.listener.lost = "earshot_nowhere"
	o := testOwner(t, db, "lost@example.com")
	k := core.Key{OwnerID: o.ID, Kind: core.APIKey, Name: "n0", Hash: rand.Text()}
	keys := NewKeyStore(db)
	if err := keys.CreateKey(ctx, &k, 5); err != nil {
		t.Fatal(err)
	}
	// The lookups below run once the connection listens and its probe,
	// which never comes back, is on its way.
	if _, err := keys.KeyByHash(ctx, k.Hash); err != nil {
		t.Fatal(err)
	}
	if !eventually(func() bool { return db.listener.pid.Load() != 0 }) {
		t.Fatal("the connection never listened")
	}
	for i := 1; i <= 20; i++ {
		if err := db.gorm.Exec("UPDATE api_keys SET name = ? WHERE id = ?", fmt.Sprintf("n%d", i), k.ID).Error; err != nil {
			t.Fatal(err)
		}
		// The change is announced; only a cache in use could miss it,
		// and none should be in use. Change it unannounced to be sure.
		got, err := keys.KeyByHash(ctx, k.Hash)
		if err != nil || got.Name != fmt.Sprintf("n%d", i) {
			t.Fatalf("lookup %d: %+v, %v", i, got, err)
		}
		unannounced(t, db, "UPDATE api_keys SET scopes = ? WHERE id = ?", fmt.Sprintf("read%d", i), k.ID)
		if got, err := keys.KeyByHash(ctx, k.Hash); err != nil || len(got.Scopes) != 1 || string(got.Scopes[0]) != fmt.Sprintf("read%d", i) {
			t.Fatalf("lookup %d after an unannounced change: %+v, %v", i, got, err)
		}
		if listening(db) {
			t.Fatal("used-up windows answered from memory")
		}
	}
}

// TestListenersProbeBesideEachOther: every replica hears every other's
// probes; each must still see its own come back, probe after probe.
func TestListenersProbeBesideEachOther(t *testing.T) {
	every := probeEvery
	probeEvery = 20 * time.Millisecond
	t.Cleanup(func() { probeEvery = every })
	dbs := openPools(t, pgtest.URL(t), 3, newTestClock())
	for _, db := range dbs {
		db.listen()
	}
	if !eventually(func() bool { return listening(dbs[0]) && listening(dbs[1]) && listening(dbs[2]) }) {
		t.Fatal("not every pool listens")
	}
	pids, backs := make([]uint32, len(dbs)), make([]int64, len(dbs))
	for i, db := range dbs {
		pids[i], backs[i] = db.listener.pid.Load(), db.listener.back.Load()
	}
	// A hundred probes each: a probe lost among the others' would end
	// its connection (a new server process) and stop answering.
	if !eventually(func() bool {
		for i, db := range dbs {
			if db.listener.back.Load() < backs[i]+100 {
				return false
			}
		}
		return true
	}) {
		t.Fatal("not every pool saw a hundred of its probes come back")
	}
	for i, db := range dbs {
		if !listening(db) || db.listener.pid.Load() != pids[i] {
			t.Fatalf("pool %d stopped listening, or listened again, among the others' probes", i)
		}
	}
}

// stallingRelay forwards TCP connections from a loopback port to
// upstream until stalled; from then on it holds every byte in either
// direction, as a network that hangs without closing the connection.
type stallingRelay struct {
	ln       net.Listener
	upstream string
	gate     sync.RWMutex // held for writing while stalled
	mu       sync.Mutex
	conns    []net.Conn
	stalled  bool
}

func newStallingRelay(t *testing.T, upstream string) *stallingRelay {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &stallingRelay{ln: ln, upstream: upstream}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, c, u)
			r.mu.Unlock()
			go r.pipe(c, u)
			go r.pipe(u, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		r.mu.Lock()
		for _, c := range r.conns {
			c.Close()
		}
		if r.stalled {
			r.gate.Unlock()
		}
		r.mu.Unlock()
	})
	return r
}

func (r *stallingRelay) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			r.gate.RLock()
			_, werr := dst.Write(buf[:n])
			r.gate.RUnlock()
			if werr != nil {
				src.Close()
				return
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

// stall stops forwarding: once it returns, no further byte gets through.
func (r *stallingRelay) stall() {
	r.gate.Lock()
	r.mu.Lock()
	r.stalled = true
	r.mu.Unlock()
}

// TestKeyCacheBoundedWhileListenerStalls: a process whose listening
// connection hangs (no error, nothing arrives) keeps a key another
// process revoked for at most keyTrust after the last probe it sent
// came back, then looks keys up again and refuses it. The clock the
// cache reads is moved by hand; the relay the listener goes through
// stops forwarding.
func TestKeyCacheBoundedWhileListenerStalls(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	clock := newTestClock()
	dbs := openPools(t, url, 2, clock)
	a, b := dbs[0], dbs[1]
	u, err := neturl.Parse(a.url)
	if err != nil {
		t.Fatal(err)
	}
	relay := newStallingRelay(t, u.Host)
	u.Host = relay.ln.Addr().String()
	a.listener.url = u.String()
	a.memory.now = clock.now

	o := testOwner(t, b, "stalled@example.com")
	k := core.Key{OwnerID: o.ID, Kind: core.APIKey, Name: "stalled", Hash: rand.Text()}
	if err := NewKeyStore(b).CreateKey(ctx, &k, 5); err != nil {
		t.Fatal(err)
	}
	keysA := NewKeyStore(a)
	if !eventually(func() bool {
		_, _ = keysA.KeyByHash(ctx, k.Hash)
		_, ok, _ := a.memory.key(k.Hash)
		return ok
	}) {
		t.Fatal("the key was never kept")
	}
	relay.stall()
	if err := NewKeyStore(b).RevokeKey(ctx, o.ID, k.ID, time.Now()); err != nil {
		t.Fatal(err)
	}
	// The message of the revocation is held in the relay: a is still
	// answering from memory.
	if got, err := keysA.KeyByHash(ctx, k.Hash); err != nil || got.Revoked() {
		t.Fatalf("before the bound: %+v, %v; want the cached live key (is the relay stalled?)", got, err)
	}
	clock.advance(keyTrust)
	if got, err := keysA.KeyByHash(ctx, k.Hash); err != nil || !got.Revoked() {
		t.Fatalf("%v after the last probe came back: %+v, %v; want the key revoked", keyTrust, got, err)
	}
}
