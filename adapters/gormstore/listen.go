package gormstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"maps"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/earshothq/earshot/core"
)

// On Postgres a process keeps in memory what every request would
// otherwise read: its keys (key.go) and the rate windows used up
// (ratelimit.go). Triggers (migrations 13, 14) announce each change on
// commit, and the process listens on a connection of its own, opened on
// first need and again a second after it fails. Memory answers only while
// a probe sent through the pool every probeEvery comes back on that
// connection: a path that loses messages (PgBouncer in transaction mode,
// a hung connection) never answers from memory, or stops within keyTrust.
const (
	keysChannel    = "earshot_keys"    // the hash of a key changed or deleted
	windowsChannel = "earshot_windows" // "<started> <key>" of a window whose count reached its limit
	probePrefix    = "probe:"          // a probe's payload on keysChannel (no hash has a colon)
	// keyTrust bounds how long a revoked key may still work in a process
	// that missed its drop (notifications arrive in commit order).
	keyTrust       = time.Second
	maxCachedKeys  = 10_000  // past it keys are looked up unkept
	maxUsedWindows = 100_000 // past it Peek reads the database until what was missed has ended
)

var (
	probeEvery = 250 * time.Millisecond // well within keyTrust; a variable for tests
	probeWait  = 5 * time.Second        // a probe not back by then ends the connection

	// listenerChanged is called each time the listening connection changes
	// what its process knows, so that tests wait on the change itself.
	listenerChanged = func() {}
)

// listener is the state of the listening connection.
type listener struct {
	once sync.Once
	pid  atomic.Uint32 // the connection's server process, for tests
	back atomic.Int64  // probes that came back, for tests
	lost string        // tests: send probes here, where nobody listens
	url  string        // tests: listen through this URL rather than db.url
}

// memory is what a process knows while it listens.
type memory struct {
	mu        sync.Mutex
	live      bool                // listening works
	confirmed time.Time           // when the last probe that came back was sent
	gen       uint64              // bumped at every key dropped: a key read across a drop is not kept
	keys      map[string]core.Key // by hash
	used      map[string]int64    // the start (µs) of each key's window used up
	missed    time.Time           // when a used-up window was last not kept for want of room
	swept     time.Time
	now       func() time.Time // nil: time.Now; tests move it
}

func (m *memory) clock() time.Time {
	if m.now != nil {
		return m.now()
	}
	return time.Now()
}

// start answers from memory, with the windows used up so far.
func (m *memory) start(used map[string]int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	m.live, m.confirmed = true, time.Time{}
	clear(m.keys)
	for k, s := range used {
		m.usedUpLocked(k, s)
	}
}

// stop forgets everything and answers from the database.
func (m *memory) stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	m.live, m.confirmed, m.used = false, time.Time{}, nil
	clear(m.keys)
}

// confirm records that a probe sent at sent came back.
func (m *memory) confirm(sent time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.confirmed = sent
}

// key returns the kept key of hash, and the generation to hand to put
// after reading it from the database. A clock set back is not trusted.
func (m *memory) key(hash string) (core.Key, bool, uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if since := m.clock().Sub(m.confirmed); !m.live || since < 0 || since >= keyTrust {
		return core.Key{}, false, m.gen
	}
	k, ok := m.keys[hash]
	return k, ok, m.gen
}

// put keeps k unless memory is not live or a key was dropped since gen.
func (m *memory) put(k core.Key, gen uint64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.live && m.gen == gen && len(m.keys) < maxCachedKeys {
		if m.keys == nil {
			m.keys = map[string]core.Key{}
		}
		m.keys[k.Hash] = k
	}
}

// drop forgets the keys drop says, every key when hash is empty.
func (m *memory) drop(drop func(hash string, k core.Key) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	maps.DeleteFunc(m.keys, drop)
}

// usedUp records that key's window that started at started is used up.
func (m *memory) usedUp(key string, started int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.usedUpLocked(key, started)
}

func (m *memory) usedUpLocked(key string, started int64) {
	if m.used == nil {
		m.used = map[string]int64{}
	}
	if _, ok := m.used[key]; !ok && len(m.used) >= maxUsedWindows {
		m.missed = time.Now()
		return
	}
	m.used[key] = max(m.used[key], started)
}

// window says whether key's window is used up at now and which; known is
// false while memory may not answer.
func (m *memory) window(key string, now time.Time) (started int64, used, known bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ended := micros(now.Add(-rateWindow))
	if now.Sub(m.swept) >= rateWindow {
		m.swept = now
		maps.DeleteFunc(m.used, func(_ string, s int64) bool { return s <= ended })
	}
	if !m.live || time.Since(m.missed) < rateWindow {
		return 0, false, false
	}
	started, used = m.used[key]
	return started, used && started > ended, true
}

// listen starts, once, the connection that listens, until db closes.
func (db *DB) listen() {
	db.listener.once.Do(func() {
		db.background.Go(func() {
			for db.closing.Err() == nil {
				db.listenOnce()
				select {
				case <-db.closing.Done():
				case <-time.After(time.Second):
				}
			}
		})
	})
}

// listenOnce listens on one connection until it fails, a probe does not
// come back, or db closes. It listens before it reads the windows used
// up so far, so none falls between. The connection is pgx's own, outside
// gorm: LISTEN hears between statements, which a pooled one cannot.
func (db *DB) listenOnce() {
	ctx, cancel := context.WithCancel(db.closing)
	defer cancel()
	cfg, err := pgconn.ParseConfig(cmp.Or(db.listener.url, db.url))
	if err != nil {
		return
	}
	var token atomic.Pointer[string] // the probe awaited; every replica hears every probe
	back := make(chan struct{}, 1)
	cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) {
		switch at, key, ok := strings.Cut(n.Payload, " "); {
		case n.Channel == keysChannel && strings.HasPrefix(n.Payload, probePrefix):
			if want := token.Load(); want != nil && *want == n.Payload {
				select {
				case back <- struct{}{}:
				default:
				}
			}
		case n.Channel == keysChannel:
			db.memory.drop(func(hash string, _ core.Key) bool { return n.Payload == "" || hash == n.Payload })
		case n.Channel == windowsChannel:
			if started, err := strconv.ParseInt(at, 10, 64); ok && err == nil {
				db.memory.usedUp(key, started)
			}
		}
		listenerChanged()
	}
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+keysChannel+"; LISTEN "+windowsChannel).ReadAll(); err != nil {
		return
	}
	used, err := db.usedUpWindows(ctx)
	if err != nil {
		return
	}
	db.listener.pid.Store(conn.PID())
	listenerChanged()
	defer listenerChanged() // after the stop below
	defer db.memory.stop()
	done := make(chan struct{})
	defer func() { cancel(); <-done }()
	go func() {
		defer close(done)
		defer cancel() // a probe lost ends the connection
		for first := true; ; first = false {
			sent := db.memory.clock()
			if !db.probe(ctx, &token, back) {
				return
			}
			db.listener.back.Add(1)
			if first {
				db.memory.start(used)
			}
			db.memory.confirm(sent)
			listenerChanged()
			select {
			case <-ctx.Done():
				return
			case <-time.After(probeEvery):
			}
		}
	}()
	for conn.WaitForNotification(ctx) == nil {
	}
}

// probe sends a message through the pool and says whether it came back
// on the listening connection within probeWait.
func (db *DB) probe(ctx context.Context, token *atomic.Pointer[string], back chan struct{}) bool {
	t := probePrefix + rand.Text()
	token.Store(&t)
	select { // a late signal of the probe before
	case <-back:
	default:
	}
	if db.gorm.WithContext(ctx).Exec("SELECT pg_notify(?, ?)", cmp.Or(db.listener.lost, keysChannel), t).Error != nil {
		return false
	}
	wait := time.NewTimer(probeWait)
	defer wait.Stop()
	select {
	case <-back:
		return true
	case <-wait.C:
	case <-ctx.Done():
	}
	return false
}
