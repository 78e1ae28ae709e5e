package gormstore

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/mattn/go-sqlite3"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/earshothq/earshot/core"
)

// DB is an open database. Stores of every role share one.
type DB struct {
	gorm     *gorm.DB // every statement of the stores, prepared once per connection
	plain    *gorm.DB // the same pool unprepared: a migration's file is several statements
	postgres bool
	url      string // Postgres: for the connection that listens

	listener   listener // Postgres only (listen.go)
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
	pg, pgURL, memory := false, "", false
	switch {
	case strings.HasPrefix(rawURL, "sqlite://"):
		path := strings.TrimPrefix(rawURL, "sqlite://")
		if path == "" {
			return nil, errors.New("sqlite:// needs a path, for example sqlite://earshot.db")
		}
		var dsn string
		dsn, memory = sqliteDSN(path)
		dial = sqlite.Open(dsn)
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		u, err := url.Parse(rawURL)
		if err != nil {
			return nil, errors.New("postgres URL does not parse")
		}
		// A generic plan costed on an empty database once walked every
		// match of an owner for a lookup by id (docs/adr/0003-postgres-reads.md);
		// an operator's own setting wins.
		if q := u.Query(); !q.Has("plan_cache_mode") {
			q.Set("plan_cache_mode", "force_custom_plan")
			u.RawQuery = q.Encode()
		}
		pgURL, pg = u.String(), true
		dial = postgres.Open(pgURL)
	default:
		return nil, errors.New("database URL must start with sqlite:// or postgres://")
	}
	g, err := openGorm(dial, !pg && !memory)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	pool, err := g.DB()
	if err != nil {
		return nil, err
	}
	switch {
	case memory: // each connection would be a new, empty database
		pool.SetMaxOpenConns(1)
		pool.SetMaxIdleConns(1)
	case !pg: // one writer, a few readers beside it in WAL mode
		pool.SetMaxOpenConns(4)
		pool.SetMaxIdleConns(4)
		pool.SetConnMaxIdleTime(5 * time.Minute)
	default:
		pool.SetMaxOpenConns(20)
		pool.SetMaxIdleConns(10)
		pool.SetConnMaxIdleTime(5 * time.Minute)
	}
	prepared := g.Session(&gorm.Session{PrepareStmt: true, NewDB: true})
	prepared.Statement.ConnPool = preparedPool{prepared.Statement.ConnPool.(*gorm.PreparedStmtDB)}
	db := &DB{gorm: prepared, plain: g, postgres: pg, url: pgURL}
	db.closing, db.close = context.WithCancel(context.Background())
	return db, nil
}

// preparedPool prepares statements outside transactions only. Inside
// one, gorm's cache would wait for the same statement being prepared on
// the pool, which can need the connection the transaction holds
// (TestTransactionDoesNotWaitForThePool).
type preparedPool struct{ *gorm.PreparedStmtDB }

func (p preparedPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	return p.ConnPool.(gorm.TxBeginner).BeginTx(ctx, opts)
}

// openGorm opens dial, again for up to the busy timeout while a SQLite
// file another process is creating refuses the switch to WAL as busy
// (that answer skips the busy handler).
func openGorm(dial gorm.Dialector, sqliteFile bool) (*gorm.DB, error) {
	cfg := &gorm.Config{
		Logger:                 logger.Discard,
		TranslateError:         true,
		SkipDefaultTransaction: true,
		// IN lists make a few hundred shapes; none expires, because gorm
		// closes an expired statement even while another goroutine runs it.
		PrepareStmtMaxSize: 1024,
		PrepareStmtTTL:     10 * 365 * 24 * time.Hour,
		NowFunc:            func() time.Time { return time.Now().UTC() },
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

// sqliteDSN sets what the service depends on: WAL so readers never wait
// for the writer, a busy timeout for a second process, foreign keys for
// cascades, IMMEDIATE transactions so a read-then-write never fails to
// upgrade its lock.
func sqliteDSN(path string) (dsn string, memory bool) {
	const opts = "_busy_timeout=10000&_foreign_keys=1&_txlock=immediate"
	if path == ":memory:" {
		return "file:mem" + rand.Text() + "?mode=memory&cache=shared&" + opts, true
	}
	return "file:" + path + "?_journal_mode=WAL&_synchronous=NORMAL&" + opts, false
}

// with returns the handle for a call under ctx. SQLite drops the
// cancellation: the driver watches a cancellable context from a
// goroutine per row step, which costs more than most of our queries
// (docs/decisions.md, "The store"); the busy timeout bounds every call.
func (db *DB) with(ctx context.Context) *gorm.DB {
	if !db.postgres {
		ctx = context.WithoutCancel(ctx)
	}
	return db.gorm.WithContext(ctx)
}

// pick returns this database's text of a statement written in both.
func (db *DB) pick(pg, lite string) string {
	if db.postgres {
		return pg
	}
	return lite
}

// Postgres reports whether the database is Postgres.
func (db *DB) Postgres() bool { return db.postgres }

// VacuumQueues vacuums and analyzes webhook_deliveries on Postgres: each
// delivery leaves dead index entries the claims walk, autovacuum comes
// too seldom, and the queued share swings with the backlog
// (docs/adr/0006-delivery-queue-on-postgres.md). SQLite: nothing.
func (db *DB) VacuumQueues(ctx context.Context) error {
	if !db.postgres {
		return nil
	}
	return db.plain.WithContext(ctx).Exec("VACUUM (ANALYZE, SKIP_LOCKED) webhook_deliveries").Error
}

// Ping checks the connection.
func (db *DB) Ping(ctx context.Context) error { return db.SQL().PingContext(ctx) }

// Close closes the connections.
func (db *DB) Close() error {
	db.close()
	db.background.Wait()
	return db.SQL().Close()
}

// SQL returns the connection pool, for tools and benchmarks that compare
// the store with plain SQL on the same driver.
func (db *DB) SQL() *sql.DB {
	pool, _ := db.plain.DB() // a *gorm.DB from gorm.Open always has one
	return pool
}

// newID returns a UUIDv7: ids sort roughly by creation, so index
// inserts stay local.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

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
	var ce *core.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gorm.ErrRecordNotFound), errors.Is(err, sql.ErrNoRows), unstorable(err):
		return core.Errorf(core.KindNotFound, "%s not found", what)
	case errors.Is(constraint(err), gorm.ErrDuplicatedKey):
		return core.Errorf(core.KindConflict, "%s already exists", what)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.As(err, &ce):
		return err
	}
	return core.Wrap(core.KindInternal, err, "database error")
}

// constraint returns gorm's error for a broken constraint, or err: gorm
// does not translate the errors of a query through Raw (RETURNING).
func constraint(err error) error {
	var pg *pgconn.PgError
	var lite sqlite3.Error
	switch {
	case errors.As(err, &pg) && pg.Code == "23505",
		errors.As(err, &lite) && (lite.ExtendedCode == sqlite3.ErrConstraintUnique || lite.ExtendedCode == sqlite3.ErrConstraintPrimaryKey):
		return gorm.ErrDuplicatedKey
	case errors.As(err, &pg) && pg.Code == "23503", errors.As(err, &lite) && lite.ExtendedCode == sqlite3.ErrConstraintForeignKey:
		return gorm.ErrForeignKeyViolated
	}
	return err
}

// unstorable reports Postgres refusing a value its text cannot hold (a
// NUL, bytes not UTF-8: SQLSTATE 22021, 22P05). No row holds one, so a
// lookup by it is "not found", as on SQLite.
func unstorable(err error) bool {
	var coded interface{ SQLState() string }
	return errors.As(err, &coded) && (coded.SQLState() == "22021" || coded.SQLState() == "22P05")
}
