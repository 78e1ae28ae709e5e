package gormstore

import (
	"context"
	"crypto/rand"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// On Postgres a process keeps in memory what every request would
// otherwise read: keys (keycache.go) and the rate windows used up
// (windows). Triggers (migrations 13, 14) announce each change on
// commit, and the process listens on a connection of its own, opened on
// first need and again a second after it fails. Memory is used only
// while a probe sent through the pool comes back on it, before the first
// answer and every probeEvery after: a path that loses messages
// (PgBouncer in transaction mode, a hung connection) never serves from
// memory, or stops within probeEvery plus probeWait.

// windowsChannel carries "<started> <key>" for a rate window whose count
// has reached its limit.
const windowsChannel = "earshot_windows"

// probePrefix starts a probe's payload on keysChannel (no hash has a colon).
const probePrefix = "probe:"

// probeEvery stays well within keyTrust; probeWait gives a probe up
// (variables for tests).
var (
	probeEvery = 250 * time.Millisecond
	probeWait  = 5 * time.Second
)

// listenerChanged is called each time a listening connection changes
// what its process knows, so that tests wait on the change itself.
var listenerChanged = func() {}

// listener is the state of the listening connection.
type listener struct {
	once sync.Once
	pid  atomic.Uint32 // the connection's server process, for tests
	back atomic.Int64  // probes that came back, for tests
	lost string        // tests: send probes here, where nobody listens
	url  string        // tests: listen through this URL rather than db.url
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
	url := db.url
	if db.listener.url != "" {
		url = db.listener.url
	}
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		return
	}
	// Every replica hears every probe: only its own counts.
	var p probes
	p.back = make(chan struct{}, 1)
	cfg.OnNotification = func(_ *pgconn.PgConn, n *pgconn.Notification) {
		switch {
		case n.Channel == keysChannel && strings.HasPrefix(n.Payload, probePrefix):
			if want := p.token.Load(); want != nil && *want == n.Payload {
				select {
				case p.back <- struct{}{}:
				default:
				}
			}
		case n.Channel == keysChannel:
			db.keyCache.drop(n.Payload)
		case n.Channel == windowsChannel:
			at, key, ok := strings.Cut(n.Payload, " ")
			if started, err := strconv.ParseInt(at, 10, 64); ok && err == nil {
				db.windows.usedUp(key, started)
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
	defer listenerChanged() // after the two below
	defer db.keyCache.setLive(false)
	defer db.windows.stop()
	done := make(chan struct{})
	defer func() { cancel(); <-done }()
	go func() {
		defer close(done)
		defer cancel() // a probe lost ends the connection
		for first := true; ; first = false {
			sent := db.keyCache.clock()
			if !db.probe(ctx, &p) {
				return
			}
			db.listener.back.Add(1)
			if first {
				db.keyCache.setLive(true)
				db.windows.start(used)
			}
			db.keyCache.confirm(sent)
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

// probes is the payload a listening connection waits for, and its signal.
type probes struct {
	token atomic.Pointer[string]
	back  chan struct{}
}

// probe sends a message through the pool and says whether it came back
// on the listening connection within probeWait.
func (db *DB) probe(ctx context.Context, p *probes) bool {
	token, channel := probePrefix+rand.Text(), keysChannel
	if db.listener.lost != "" {
		channel = db.listener.lost
	}
	p.token.Store(&token)
	select { // a late signal of the probe before
	case <-p.back:
	default:
	}
	if db.gorm.WithContext(ctx).Exec("SELECT pg_notify(?, ?)", channel, token).Error != nil {
		return false
	}
	wait := time.NewTimer(probeWait)
	defer wait.Stop()
	select {
	case <-p.back:
		return true
	case <-wait.C:
		return false
	case <-ctx.Done():
		return false
	}
}

// maxUsedWindows bounds the windows kept; past it Peek reads the
// database until every window that could have been missed has ended.
const maxUsedWindows = 100_000

// windows are the rate windows known used up (counted so here, or
// announced), by key: the window's start (µs).
type windows struct {
	mu        sync.Mutex
	listening bool
	used      map[string]int64
	missed    time.Time // when a window was last not kept for want of room
	swept     time.Time
}

// usedUp records that key's window that started at started is used up.
func (w *windows) usedUp(key string, started int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.used == nil {
		w.used = map[string]int64{}
	}
	if _, ok := w.used[key]; !ok && len(w.used) >= maxUsedWindows {
		w.missed = time.Now()
		return
	}
	w.used[key] = max(w.used[key], started)
}

// start answers from memory, with used added to what was heard.
func (w *windows) start(used map[string]int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.used == nil {
		w.used = map[string]int64{}
	}
	for k, s := range used {
		w.used[k] = max(w.used[k], s)
	}
	w.listening = true
}

// stop stops answering from memory and forgets what it knew.
func (w *windows) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.listening, w.used = false, nil
}

// lookup says whether key's window is used up and which; known is false
// while memory may not answer.
func (w *windows) lookup(key string, now time.Time) (started int64, used, known bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	ended := micros(now.Add(-rateWindow))
	if now.Sub(w.swept) >= rateWindow {
		w.swept = now
		for k, s := range w.used {
			if s <= ended {
				delete(w.used, k)
			}
		}
	}
	if !w.listening || time.Since(w.missed) < rateWindow {
		return 0, false, false
	}
	started, used = w.used[key]
	return started, used && started > ended, true
}
