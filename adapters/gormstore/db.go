package gormstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/mattn/go-sqlite3"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/earshothq/earshot/core"
)

// DB is an open database. Stores of every role share one.
type DB struct {
	gorm     *gorm.DB
	sql      *sql.DB
	pages    *sql.DB // for the API's pages: sql, or on Postgres a pool that plans once
	postgres bool
	url      string   // the Postgres URL, for the connection that listens
	stmts    sync.Map // query text -> *sql.Stmt, for the hot reads

	listener   listener // Postgres only; see listen.go
	keyCache   keyCache
	windows    windows
	closing    context.Context
	close      context.CancelFunc
	background sync.WaitGroup // goroutines that end when closing does
}

// Open connects to url: `sqlite://PATH`, `sqlite://:memory:` or
// `postgres://...` (`postgresql://` too). It does not migrate.
func Open(rawURL string) (*DB, error) {
	var dial gorm.Dialector
	pg, pgURL, pagesURL := false, "", ""
	memory := false
	switch {
	case strings.HasPrefix(rawURL, "sqlite://"):
		path := strings.TrimPrefix(rawURL, "sqlite://")
		if path == "" {
			return nil, errors.New("sqlite:// needs a path, for example sqlite://earshot.db")
		}
		dsn, mem := sqliteDSN(path)
		memory = mem
		dial = sqlite.New(sqlite.Config{DriverName: lockingDriverName, DSN: dsn})
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil, errors.New("postgres URL does not parse")
		}
		// pgx prepares every statement and keeps it per connection.
		// After five runs Postgres may switch a prepared statement to a
		// generic plan, costed with the statistics of that moment, and
		// keep it: on a database that started empty, a lookup by id
		// then walked every match of the owner (scoring fell to 100 a
		// second). A custom plan per run costs a short planning step and
		// follows the data. An operator's own setting in the URL wins.
		//
		// The API's page of matches is the exception (pages below): on a
		// table of seven indexes its custom plan cost Postgres more than
		// running it, and its plan is the same whatever the statistics, a
		// walk of the owner's index in created_us order (so the generic
		// plan is, even on an empty table). It is forced: given the choice
		// (auto), Postgres costs a generic plan at an unknown LIMIT of a
		// tenth of the rows and keeps planning each run
		// (docs/adr/0003-postgres-reads.md).
		//
		// The scorer's claim of unscored matches runs on the pages' pool
		// too, where bitmap scans are off: both are walks of an index in
		// created_us order, and the claim's must be an index scan (see
		// ClaimUnscored).
		q := u.Query()
		if !q.Has("plan_cache_mode") {
			q.Set("plan_cache_mode", "force_custom_plan")
			u.RawQuery = q.Encode()
			pages := *u
			q.Set("plan_cache_mode", "force_generic_plan")
			if !q.Has("enable_bitmapscan") {
				q.Set("enable_bitmapscan", "off")
			}
			pages.RawQuery = q.Encode()
			pagesURL = pages.String()
		}
		pgURL = u.String()
		dial = postgres.Open(pgURL)
		pg = true
	default:
		return nil, errors.New("database URL must start with sqlite:// or postgres://")
	}
	g, err := openGorm(dial, !pg && !memory)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	sqlDB, err := g.DB()
	if err != nil {
		return nil, err
	}
	switch {
	case memory:
		// Every connection to an in-memory database would be a new, empty
		// database; one connection keeps them one.
		sqlDB.SetMaxOpenConns(1)
		sqlDB.SetMaxIdleConns(1)
	case !pg:
		// SQLite has one writer at a time; a few connections let reads run
		// beside it in WAL mode without queueing behind the busy timeout.
		// Keep them all open when idle: database/sql keeps two by default,
		// so under load the others were closed after each use and opened
		// again, with their prepared statements, on the next request.
		sqlDB.SetMaxOpenConns(4)
		sqlDB.SetMaxIdleConns(4)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	default:
		sqlDB.SetMaxOpenConns(20)
		sqlDB.SetMaxIdleConns(10)
		sqlDB.SetConnMaxIdleTime(5 * time.Minute)
	}
	db := &DB{gorm: g, sql: sqlDB, pages: sqlDB, postgres: pg, url: pgURL}
	if pagesURL != "" {
		// A pool of its own for the pages, whose statements Postgres
		// plans once per connection. The pgx driver is the one
		// gorm's postgres dialector registers.
		if db.pages, err = sql.Open("pgx", pagesURL); err != nil {
			sqlDB.Close()
			return nil, fmt.Errorf("open database: %w", err)
		}
		db.pages.SetMaxOpenConns(8)
		db.pages.SetMaxIdleConns(8)
		db.pages.SetConnMaxIdleTime(5 * time.Minute)
	}
	db.closing, db.close = context.WithCancel(context.Background())
	return db, nil
}

// openGorm opens dial. A SQLite file that another process is creating
// at the same moment answers "database is locked" to the switch into WAL
// mode without waiting in the busy handler; two replicas starting
// together on a new file met it. So a file database is opened again for
// up to the busy timeout (10 s) while that is the answer.
func openGorm(dial gorm.Dialector, sqliteFile bool) (*gorm.DB, error) {
	cfg := &gorm.Config{
		Logger:                 logger.Discard,
		TranslateError:         true,
		SkipDefaultTransaction: true,
		NowFunc:                func() time.Time { return time.Now().UTC() },
	}
	deadline := time.Now().Add(10 * time.Second)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		g, err := gorm.Open(dial, cfg)
		var se sqlite3.Error
		if err == nil || !sqliteFile || !errors.As(err, &se) || se.Code != sqlite3.ErrBusy || time.Now().After(deadline) {
			return g, err
		}
		time.Sleep(wait)
	}
}

// sqliteDSN turns a path into a mattn/go-sqlite3 DSN with the settings the
// service depends on: WAL so readers never wait for the writer, a busy
// timeout so a second process waits instead of failing, foreign keys for
// cascading deletes, and IMMEDIATE transactions so a transaction that
// reads then writes never fails to upgrade its lock.
func sqliteDSN(path string) (dsn string, memory bool) {
	const opts = "_busy_timeout=10000&_foreign_keys=1&_txlock=immediate"
	if path == ":memory:" {
		return "file:mem" + randomHex(8) + "?mode=memory&cache=shared&" + opts, true
	}
	return "file:" + path + "?_journal_mode=WAL&_synchronous=NORMAL&" + opts, false
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// with returns the gorm handle for a call under ctx. On SQLite the
// context's cancellation is dropped: the driver watches a cancellable
// context from a goroutine per row step, which costs more than most of
// our queries take; the busy timeout still bounds every call.
func (db *DB) with(ctx context.Context) *gorm.DB {
	return db.gorm.WithContext(db.callCtx(ctx))
}

// callCtx is ctx for a call to the database: on SQLite without its
// cancellation (see with).
func (db *DB) callCtx(ctx context.Context) context.Context {
	if db.postgres {
		return ctx
	}
	return context.WithoutCancel(ctx)
}

// dialect turns the ? placeholders of q into the database's own.
func (db *DB) dialect(q string) string {
	if db.postgres {
		return rebind(q)
	}
	return q
}

// query runs a hot read through a cached prepared statement, skipping
// gorm's callbacks: the reads every API request makes are worth it.
// Placeholders are written as ? and rebound for Postgres.
func (db *DB) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	st, err := db.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(db.callCtx(ctx), args...)
}

// queryPage is query on the pool of the index walks, the API's pages and
// the scorer's claims (see Open), which on SQLite is the one pool.
func (db *DB) queryPage(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if db.pages == db.sql {
		return db.query(ctx, q, args...)
	}
	st, err := db.prepare(ctx, db.pages, "page\x00"+q, q)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (db *DB) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	return db.prepare(ctx, db.sql, q, q)
}

// prepare returns the statement of q on pool, prepared once and kept
// under key.
func (db *DB) prepare(ctx context.Context, pool *sql.DB, key, q string) (*sql.Stmt, error) {
	if st, ok := db.stmts.Load(key); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := pool.PrepareContext(context.WithoutCancel(ctx), db.dialect(q))
	if err != nil {
		return nil, err
	}
	if prev, loaded := db.stmts.LoadOrStore(key, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// maxCachedArgs bounds the statements kept in the cache by their bound
// values. The multi-row INSERTs of a batch have one text per row count:
// a batch holds at most 100 posts, so posts give at most 100 texts, and
// matches at most 107 under this bound; a larger set of matches is
// prepared for the one call. All of them prepared take about 12 MB on a
// SQLite connection.
const maxCachedArgs = 1500

// tx is a transaction run on database/sql directly, for the hot write
// path of ingest, where gorm's callbacks and reflection cost more than
// the statements themselves.
type tx struct {
	db     *DB
	ctx    context.Context
	sql    *sql.Tx
	missed []string // statements to add to the cache once the connection is free
}

// inTx runs fn in a transaction and commits if it returns nil; an error
// or a panic rolls back. Driver errors come back translated as gorm
// would have, so translate reads them the same.
func (db *DB) inTx(ctx context.Context, fn func(*tx) error) (err error) {
	ctx = db.callCtx(ctx)
	stx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return db.driverErr(err)
	}
	done := false
	defer func() {
		if !done || err != nil {
			_ = stx.Rollback()
		}
	}()
	t := &tx{db: db, ctx: ctx, sql: stx}
	err = fn(t)
	done = true
	if err != nil {
		return err
	}
	if err = db.driverErr(stx.Commit()); err != nil {
		return err
	}
	for _, q := range t.missed {
		_, _ = db.stmt(ctx, q) // only a cache: the next transaction prepares it if this failed
	}
	return nil
}

// stmt returns q prepared for the transaction. Statements of up to
// maxCachedArgs values come from the cache, so each is prepared once per
// connection: mattn/go-sqlite3 prepares every statement afresh, and a
// multi-row INSERT costs about as much to prepare as to run.
//
// A statement not in the cache yet is prepared on the transaction's
// connection for this transaction only, and cached after the commit:
// preparing it for the cache needs a connection of the pool, and waiting
// for one while holding another could wait forever (an in-memory
// database has a single connection; on SQLite the others may all be
// waiting for this transaction's write lock).
func (t *tx) stmt(q string, args int) (*sql.Stmt, error) {
	if args <= maxCachedArgs {
		if st, ok := t.db.stmts.Load(q); ok {
			return t.sql.StmtContext(t.ctx, st.(*sql.Stmt)), nil
		}
		t.missed = append(t.missed, q)
	}
	st, err := t.sql.PrepareContext(t.ctx, t.db.dialect(q))
	return st, t.db.driverErr(err)
}

// exec runs q in the transaction; placeholders are written as ?.
func (t *tx) exec(q string, args ...any) (sql.Result, error) {
	st, err := t.stmt(q, len(args))
	if err != nil {
		return nil, err
	}
	res, err := st.ExecContext(t.ctx, args...)
	return res, t.db.driverErr(err)
}

// query runs q in the transaction; placeholders are written as ?.
func (t *tx) query(q string, args ...any) (*sql.Rows, error) {
	st, err := t.stmt(q, len(args))
	if err != nil {
		return nil, err
	}
	rows, err := st.QueryContext(t.ctx, args...)
	return rows, t.db.driverErr(err)
}

// driverErr translates a driver error into gorm's errors (a duplicate
// key, a missing foreign key) as gorm does with TranslateError set.
func (db *DB) driverErr(err error) error {
	if err == nil {
		return nil
	}
	if tr, ok := db.gorm.Dialector.(gorm.ErrorTranslator); ok {
		return tr.Translate(err)
	}
	return err
}

// rebind turns ? placeholders into Postgres's $1, $2, ...
func rebind(q string) string {
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteString("$" + strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// Postgres reports whether the database is Postgres.
func (db *DB) Postgres() bool { return db.postgres }

// VacuumQueues vacuums the tables that serve as work queues on
// Postgres; on SQLite it does nothing. A delivery changes status twice
// within milliseconds, each change leaves a dead entry in the index the
// claims walk, and autovacuum comes too seldom to keep that walk short
// (docs/adr/0006-delivery-queue-on-postgres.md). The table holds the last
// 20 deliveries of each webhook and those queued, so a vacuum every few
// seconds is cheap. It analyzes too: the share of queued rows swings with
// the backlog, and stale estimates lead the claim's planner astray.
// SKIP_LOCKED passes over a table another replica is vacuuming.
func (db *DB) VacuumQueues(ctx context.Context) error {
	if !db.postgres {
		return nil
	}
	_, err := db.sql.ExecContext(ctx, "VACUUM (ANALYZE, SKIP_LOCKED) webhook_deliveries")
	return err
}

// Ping checks the connection.
func (db *DB) Ping(ctx context.Context) error {
	sqlDB, err := db.gorm.DB()
	if err != nil {
		return err
	}
	return sqlDB.PingContext(ctx)
}

// Close closes the connections.
func (db *DB) Close() error {
	db.close()
	db.background.Wait()
	db.stmts.Range(func(_, st any) bool {
		st.(*sql.Stmt).Close()
		return true
	})
	if db.pages != db.sql {
		db.pages.Close()
	}
	return db.sql.Close()
}

// newID returns a time-ordered UUID (version 7), so ids sort roughly by
// creation and index inserts stay local.
func newID() string {
	return uuid.Must(uuid.NewV7()).String()
}

// micros converts a time to stored microseconds; the zero time is 0.
func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// fromMicros converts stored microseconds back; 0 is the zero time.
func fromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

// translate maps driver errors to core kinds at the boundary.
func translate(err error, what string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gorm.ErrRecordNotFound), errors.Is(err, sql.ErrNoRows), unstorable(err):
		return core.Errorf(core.KindNotFound, "%s not found", what)
	case errors.Is(err, gorm.ErrDuplicatedKey):
		return core.Errorf(core.KindConflict, "%s already exists", what)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return err
	}
	var ce *core.Error
	if errors.As(err, &ce) {
		return err
	}
	return core.Wrap(core.KindInternal, err, "database error")
}

// unstorable reports whether Postgres refused a value that its text
// cannot hold: a NUL, or bytes that are not UTF-8 (SQLSTATE 22021,
// character_not_in_repertoire; 22P05, untranslatable_character). No row
// holds such a value, so a lookup by it finds nothing, which is what
// SQLite answers for the same lookup: /keywords/%00 is not found on
// both. Writes never carry one: core cleans posts (core.CleanPost) and
// refuses control characters in phrases.
func unstorable(err error) bool {
	var coded interface{ SQLState() string }
	if !errors.As(err, &coded) {
		return false
	}
	switch coded.SQLState() {
	case "22021", "22P05":
		return true
	}
	return false
}

// SQL returns the underlying connection pool, for tools and benchmarks
// that compare the store with plain SQL on the same driver.
func (db *DB) SQL() *sql.DB { return db.sql }

// Count runs a COUNT query for a gauge; a failure reads as -1, which a
// dashboard shows as broken rather than as an empty queue.
func (db *DB) Count(query string) int64 {
	var n int64
	if err := db.gorm.Raw(query).Scan(&n).Error; err != nil {
		return -1
	}
	return n
}
