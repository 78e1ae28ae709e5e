package gormstore

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// On Postgres a process keeps in memory what every request would
// otherwise read: keys (keycache.go) and which rate windows are used up
// (windows below). Postgres tells it of every change to them, from any
// process, on the channels keysChannel and windowsChannel, through
// triggers that send when the change commits (migrations 13 and 14).
// The process listens on one connection of its own, opened on the first
// request that needs it and again a second after it fails; while it is
// not listening, nothing is answered from memory.
//
// Listening is trusted only while it is seen to work: before the first
// answer from memory and every probeEvery after, the process sends a
// message of its own through its ordinary pool and waits for it on the
// listening connection. A path that loses messages (a pooler such as
// PgBouncer in transaction mode, which drops a LISTEN with the
// transaction, or a connection that hangs) therefore never serves from
// memory, or stops within probeEvery plus probeWait; keys stop sooner,
// within keyTrust of the last probe that came back (keycache.go).

// windowsChannel carries "<started> <key>" for a rate window that has
// just been used up: its count reached the limit it is counted against.
const windowsChannel = "earshot_windows"

// probePrefix starts a probe's payload on keysChannel (no key's hash
// holds a colon).
const probePrefix = "probe:"

// Between two probes, and how long one may take to come back before the
// connection is given up (variables for tests). Keys are trusted only
// keyTrust after the last probe that came back was sent, so probes go
// out often enough that a working connection never lets that lapse:
// four statements a second per process.
var (
	probeEvery = 250 * time.Millisecond
	probeWait  = 5 * time.Second
)

// listener is the state of the listening connection.
type listener struct {
	once sync.Once
	pid  atomic.Uint32 // the connection's server process, for tests
	back atomic.Int64  // probes that came back, for tests
	lost string        // tests: send probes here, where nobody listens
	url  string        // tests: listen through this URL rather than db.url
}

// listen starts, once, the connection that listens. It runs until the
// database is closed.
func (db *DB) listen() {
	db.listener.once.Do(func() {
		db.background.Add(1)
		go func() {
			defer db.background.Done()
			for db.closing.Err() == nil {
				db.listenOnce()
				select {
				case <-db.closing.Done():
				case <-time.After(time.Second):
				}
			}
		}()
	})
}

// listenOnce listens on one connection until it fails, a probe does
// not come back, or the database is closed. It listens first and reads
// the windows used up so far second, so that none falls between the
// two; it answers from memory once its first probe has come back.
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
	// Every replica's probes come to every replica: only the one this
	// connection waits for counts.
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
	}
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+keysChannel+"; LISTEN "+windowsChannel).ReadAll(); err != nil {
		return
	}
	ended := strconv.FormatInt(micros(db.gorm.NowFunc().Add(-rateWindow)), 10)
	res := conn.ExecParams(ctx, "SELECT started, key FROM rate_windows WHERE lim > 0 AND count >= lim AND started > $1",
		[][]byte{[]byte(ended)}, nil, nil, nil).Read()
	if res.Err != nil {
		return
	}
	used := make(map[string]int64, len(res.Rows))
	for _, row := range res.Rows {
		if started, err := strconv.ParseInt(string(row[0]), 10, 64); err == nil {
			used[string(row[1])] = started
		}
	}
	db.listener.pid.Store(conn.PID())
	defer db.keyCache.setLive(false)
	defer db.windows.stop()
	done := make(chan struct{})
	defer func() { cancel(); <-done }()
	go func() {
		defer close(done)
		defer cancel() // a probe that did not come back ends the connection
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

// probes is what a listening connection knows of its own probe: the
// payload it waits for, and a signal when that came back.
type probes struct {
	token atomic.Pointer[string]
	back  chan struct{}
}

// probe sends a message through the ordinary pool and says whether it
// came back on the listening connection within probeWait.
func (db *DB) probe(ctx context.Context, p *probes) bool {
	token, channel := probePrefix+randomHex(8), keysChannel
	if db.listener.lost != "" {
		channel = db.listener.lost
	}
	p.token.Store(&token)
	select { // a signal of the probe before, come back after it gave up
	case <-p.back:
	default:
	}
	if _, err := db.sql.ExecContext(ctx, "SELECT pg_notify($1, $2)", channel, token); err != nil {
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

// maxUsedWindows bounds the used-up windows kept. Past it a window is
// not kept, so memory is not trusted (Peek reads the database) until
// every window that could have been missed has ended.
const maxUsedWindows = 100_000

// windows are the rate windows known to be used up, by key: the start
// of the window (µs). Known means: this process's own count reached the
// limit, or Postgres said another's did.
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

// start answers from memory, adding used to what was heard since the
// connection began listening.
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

// lookup says whether key's window is used up, and which window: known
// is false while nothing may be answered from memory.
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
