package gormstore

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/mattn/go-sqlite3"
	"gorm.io/driver/postgres"
	"gorm.io/driver/sqlite"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Each store proves the ports it implements.
var (
	_ ports.OwnerStore         = (*OwnerStore)(nil)
	_ ports.SessionStore       = (*SessionStore)(nil)
	_ ports.KeyStore           = (*KeyStore)(nil)
	_ ports.PhraseStore        = (*PhraseStore)(nil)
	_ ports.ListeningStore     = (*PhraseStore)(nil)
	_ ports.MatchStore         = (*MatchStore)(nil)
	_ ports.ScoringBacklog     = (*MatchStore)(nil)
	_ ports.TriageStore        = (*TriageStore)(nil)
	_ ports.AlertStore         = (*AlertStore)(nil)
	_ ports.WebhookStore       = (*WebhookStore)(nil)
	_ ports.DeliveryQueue      = (*WebhookStore)(nil)
	_ ports.AccountStore       = (*AccountStore)(nil)
	_ ports.AccountHealthStore = (*AccountStore)(nil)
	_ ports.NotificationStore  = (*NotificationStore)(nil)
	_ ports.RedditStore        = (*RedditStore)(nil)
	_ ports.LeaseStore         = (*LeaseStore)(nil)
	_ ports.RateLimiter        = (*RateLimiter)(nil)
)

// DB is an open database. Stores of every role share one.
type DB struct {
	gorm     *gorm.DB  // the stores' reads, every statement prepared once per connection
	writer   *gorm.DB  // their writes, prepared alike: gorm itself but on a SQLite file
	pages    *gorm.DB  // the API's pages of matches: gorm itself but on Postgres
	plain    *gorm.DB  // the writer's pool unprepared: a migration's file is several statements
	pools    []*sql.DB // the read pool, then the SQLite file's write pool or Postgres's page pool
	postgres bool
	keys     keyCache     // Postgres only (key.go)
	barrier  atomic.Int64 // when the last scoring barrier was asked for, in µs (score.go)
}

// Open connects to url: `sqlite://PATH`, `sqlite://:memory:` or
// `postgres://...` (`postgresql://` too). It does not migrate. A SQLite
// file gets a write pool of one connection beside the read pool: writers
// queued in Go take their turns in order, where SQLite's busy handler
// sleeps, polls and lets one starve behind later ones (docs/adr/0016).
// On Postgres a connect that gets no answer fails after connectTimeout
// unless the operator bounds it, as does a first statement after it that
// gets none (firstAnswer), and unless the URL sets plan_cache_mode,
// statements are planned for their values (a generic plan costed on an
// empty database once walked every match of an owner for a lookup by id,
// docs/adr/0003), but the API's page, one index walk whatever the
// statistics, is read on a pool of its own that plans it once
// (docs/adr/0017).
func Open(rawURL string) (*DB, error) {
	db := &DB{keys: keyCache{keys: map[string]cachedKey{}}}
	var read, write, pages *gorm.DB
	var err error
	// WAL so readers never wait for the writer, a busy timeout for a second
	// process, foreign keys for cascades, IMMEDIATE transactions so a
	// read-then-write never fails to upgrade its lock.
	const liteOpts = "_busy_timeout=10000&_foreign_keys=1&_txlock=immediate"
	switch path, lite := strings.CutPrefix(rawURL, "sqlite://"); {
	case lite && path == "":
		return nil, errors.New("sqlite:// needs a path, for example sqlite://earshot.db")
	case lite && path == ":memory:": // one connection, never closed: each new one would be a new, empty database
		read, err = db.open(sqlite.Open("file:mem"+rand.Text()+"?mode=memory&cache=shared&"+liteOpts), false, 1, 1, 0)
	case lite: // readers beside the writer in WAL mode
		dial := sqlite.Open("file:" + path + "?_journal_mode=WAL&_synchronous=NORMAL&" + liteOpts)
		if read, err = db.open(dial, true, 4, 4, 5*time.Minute); err == nil {
			write, err = db.open(dial, true, 1, 1, 5*time.Minute)
		}
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		u, perr := url.Parse(rawURL)
		if perr != nil {
			return nil, errors.New("postgres URL does not parse")
		}
		// The driver's parse of the URL as written: its error shows the
		// operator's URL, not one with the parameters added below.
		cfg, perr := pgconn.ParseConfig(rawURL)
		if perr != nil {
			return nil, fmt.Errorf("open database: %w", perr)
		}
		db.postgres = true
		var pageURL string
		q := u.Query()
		if !q.Has("connect_timeout") && os.Getenv("PGCONNECT_TIMEOUT") == "" && cfg.ConnectTimeout == 0 {
			q.Set("connect_timeout", strconv.Itoa(int(connectTimeout/time.Second)))
			u.RawQuery = q.Encode()
		}
		if !q.Has("plan_cache_mode") {
			q.Set("plan_cache_mode", "force_generic_plan")
			q.Set("enable_bitmapscan", "off")
			u.RawQuery = q.Encode()
			pageURL = u.String()
			q.Del("enable_bitmapscan")
			q.Set("plan_cache_mode", "force_custom_plan")
			u.RawQuery = q.Encode()
		}
		read, err = db.open(postgres.Open(u.String()), false, 20, 10, 5*time.Minute)
		if err == nil && pageURL != "" {
			pages, err = db.open(postgres.Open(pageURL), false, pageConns, pageConns, 5*time.Minute)
		}
	default:
		return nil, errors.New("database URL must start with sqlite:// or postgres://")
	}
	if err != nil {
		return nil, err
	}
	db.gorm, db.plain = prepared(read), cmp.Or(write, read)
	db.writer, db.pages = db.gorm, db.gorm
	if write != nil {
		db.writer = prepared(write)
	}
	if pages != nil {
		db.pages = prepared(pages)
	}
	return db, nil
}

// connectTimeout bounds each connect to Postgres (dial, TLS, startup and
// authentication, per host) unless the operator set connect_timeout in
// the URL, PGCONNECT_TIMEOUT or a service file: a server that accepts the
// connection and never answers would otherwise hold serve, migrate and
// admin, and later a pool's new connection, forever. 30 s, as the
// broker's dial (adapters/bus): ample for a slow link or a server waking
// from a pause, and one figure for an operator to know. It also bounds
// Open's first statement (firstAnswer), whatever the operator set;
// later statements, a long migration's too, are not bounded by it.
// Whole seconds, as connect_timeout is; a variable so tests can lower it.
var connectTimeout = 30 * time.Second

// pageConns bounds the connections of Postgres's page pool: the API's
// readers beside the rest of the service's 20.
const pageConns = 8

// open opens dial on a pool of db's: up to conns connections, idle of
// them kept, each closed after idleFor unused (0: never). It tries again
// while a SQLite file another process is creating refuses the switch to
// WAL as busy (no busy handler covers that); failing, it closes db.
func (db *DB) open(dial gorm.Dialector, sqliteFile bool, conns, idle int, idleFor time.Duration) (*gorm.DB, error) {
	cfg := &gorm.Config{
		Logger: logger.Discard, TranslateError: true, SkipDefaultTransaction: true,
		// IN lists make a few hundred shapes; none expires, because gorm
		// closes an expired statement even while another goroutine runs it.
		PrepareStmtMaxSize: 1024, PrepareStmtTTL: 10 * 365 * 24 * time.Hour,
		NowFunc: func() time.Time { return time.Now().UTC() },
	}
	// gorm's own ping takes no context: on Postgres, firstAnswer pings
	// under a deadline instead.
	cfg.DisableAutomaticPing = db.postgres
	deadline := time.Now().Add(10 * time.Second)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		g, err := gorm.Open(dial, cfg)
		var se sqlite3.Error
		if err == nil && db.postgres {
			pool, _ := g.DB()
			if err = firstAnswer(pool); err != nil {
				pool.Close()
			}
		}
		if err == nil {
			pool, _ := g.DB() // a *gorm.DB from gorm.Open always has one
			pool.SetMaxOpenConns(conns)
			pool.SetMaxIdleConns(idle)
			pool.SetConnMaxIdleTime(idleFor)
			db.pools = append(db.pools, pool)
			return g, nil
		}
		if !sqliteFile || !errors.As(err, &se) || se.Code != sqlite3.ErrBusy || time.Now().After(deadline) {
			db.Close()
			return nil, fmt.Errorf("open database: %w", err)
		}
		time.Sleep(wait)
	}
}

// firstAnswer connects one of pool's connections, under the connect
// bound, and fails unless Postgres answers a ping on it within
// connectTimeout: a server that completes the start-up and then stops
// answering (hung, or a firewall that drops the session part way) would
// otherwise hold serve, migrate and admin forever at their first
// statement. Only this first statement is bounded: later ones, a long
// migration's too, run under their callers' contexts.
func firstAnswer(pool *sql.DB) error {
	conn, err := pool.Conn(context.Background())
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	// The driver's own connection: its Ping says why it failed where
	// database/sql's says only "bad connection".
	return conn.Raw(func(dc any) error {
		pg := dc.(*stdlib.Conn).Conn()
		if err := pg.Ping(ctx); err != nil {
			if ctx.Err() != nil {
				return fmt.Errorf("Postgres at %s connected and then gave no answer within %v", pg.PgConn().Conn().RemoteAddr(), connectTimeout)
			}
			return err
		}
		return nil
	})
}

// prepared returns g preparing each statement once per connection.
func prepared(g *gorm.DB) *gorm.DB {
	p := g.Session(&gorm.Session{PrepareStmt: true, NewDB: true})
	p.Statement.ConnPool = preparedPool{p.Statement.ConnPool.(*gorm.PreparedStmtDB)}
	return p
}

// preparedPool prepares statements outside transactions only: inside one,
// gorm's cache would wait for the same statement being prepared on the
// pool, which can need the transaction's connection.
type preparedPool struct{ *gorm.PreparedStmtDB }

func (p preparedPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	return p.ConnPool.(gorm.TxBeginner).BeginTx(ctx, opts)
}

// with returns the handle for a read under ctx; write, for a statement or
// transaction that writes (a read inside a write transaction uses its
// tx; one outside waits for no writer on the read handle); pageReads, for
// the API's pages of matches.
func (db *DB) with(ctx context.Context) *gorm.DB      { return db.on(ctx, db.gorm) }
func (db *DB) write(ctx context.Context) *gorm.DB     { return db.on(ctx, db.writer) }
func (db *DB) pageReads(ctx context.Context) *gorm.DB { return db.on(ctx, db.pages) }

// on returns g under ctx. SQLite drops the cancellation, which its driver
// watches from a goroutine per row step at more than most of our queries
// cost (docs/adr/0012-store-tricks-by-figure.md).
func (db *DB) on(ctx context.Context, g *gorm.DB) *gorm.DB {
	if !db.postgres {
		ctx = context.WithoutCancel(ctx)
	}
	return g.WithContext(ctx)
}

// pick returns this database's text of a statement written in both.
func (db *DB) pick(pg, lite string) string {
	if db.postgres {
		return pg
	}
	return lite
}

// jsonValues is a FROM item whose column value holds each element
// of a JSON array bound as text: one short statement for any number of ids.
func (db *DB) jsonValues() string {
	return db.pick("json_array_elements_text(CAST(? AS json))", "json_each(?)")
}

func (db *DB) Postgres() bool { return db.postgres }

// VacuumQueues vacuums and analyzes webhook_deliveries on Postgres: each
// delivery leaves dead index entries the claims walk, and autovacuum
// comes too seldom (docs/adr/0006-delivery-queue-on-postgres.md).
func (db *DB) VacuumQueues(ctx context.Context) error {
	if !db.postgres {
		return nil
	}
	return db.plain.WithContext(ctx).Exec("VACUUM (ANALYZE, SKIP_LOCKED) webhook_deliveries").Error
}

// VacuumMatches vacuums and analyzes matches on Postgres, and says so,
// when the table's counts pass autovacuum's own thresholds: the API's
// pages meet at every depth the versions the scorer's updates leave and
// the rows no vacuum has marked all-visible, and autovacuum may be off
// or late (docs/adr/0014).
func (db *DB) VacuumMatches(ctx context.Context) (bool, error) {
	if !db.postgres {
		return false, nil
	}
	var due bool
	if err := db.plain.WithContext(ctx).Raw(`SELECT COALESCE(bool_or(
		n_dead_tup > current_setting('autovacuum_vacuum_threshold')::float8 + current_setting('autovacuum_vacuum_scale_factor')::float8 * n_live_tup
		OR n_ins_since_vacuum > current_setting('autovacuum_vacuum_insert_threshold')::float8 + current_setting('autovacuum_vacuum_insert_scale_factor')::float8 * n_live_tup), false)
		FROM pg_stat_user_tables WHERE relid = 'matches'::regclass`).Scan(&due).Error; err != nil || !due {
		return false, err
	}
	return true, db.plain.WithContext(ctx).Exec("VACUUM (ANALYZE, SKIP_LOCKED) matches").Error
}

// Gauges are the depths of the work queues, for the metrics.
type Gauges struct {
	Unscored     int64     // matches stored and not scored yet
	Queued       int64     // webhook deliveries waiting for a try
	OldestQueued time.Time // when the oldest queued delivery was made; zero when none
}

func (db *DB) Gauges(ctx context.Context) (Gauges, error) {
	var g struct{ Unscored, Queued, Oldest int64 }
	if err := db.with(ctx).Raw(`SELECT (SELECT COUNT(*) FROM matches WHERE score IS NULL) AS unscored,
		(SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'queued') AS queued,
		(SELECT COALESCE(MIN(created_at), 0) FROM webhook_deliveries WHERE status = 'queued') AS oldest`).Scan(&g).Error; err != nil {
		return Gauges{}, err
	}
	return Gauges{Unscored: g.Unscored, Queued: g.Queued, OldestQueued: fromMicros(g.Oldest)}, nil
}

// Ping pings the read pool: a SQLite file's write pool would answer
// only after the writers queued for its one connection.
func (db *DB) Ping(ctx context.Context) error { return db.SQL().PingContext(ctx) }

func (db *DB) Close() error {
	var err error
	for _, p := range db.pools {
		err = errors.Join(err, p.Close())
	}
	return err
}

// SQL returns the read pool, for tools and benchmarks that compare the
// store with plain SQL on the same driver (a SQLite file's stores write
// through another pool).
func (db *DB) SQL() *sql.DB { return db.pools[0] }

// lockForUpdate: FOR UPDATE on Postgres; gorm leaves it out on SQLite,
// whose IMMEDIATE transactions hold the write lock from their start.
var lockForUpdate = clause.Locking{Strength: "UPDATE"}

// lockNoKeyUpdate holds a row against other changes, as an UPDATE of
// columns other than its key does, but not against the key-share lock a
// row referring to it takes when inserted.
var lockNoKeyUpdate = clause.Locking{Strength: "NO KEY UPDATE"}

// lockKeyShare holds a row against its deletion and a change of its key,
// as a row referring to it does, but not against other changes.
var lockKeyShare = clause.Locking{Strength: "KEY SHARE"}

// newID returns a UUIDv7: ids sort roughly by creation, so index
// inserts stay local.
func newID() string { return uuid.Must(uuid.NewV7()).String() }

// micros and fromMicros convert to and from stored times; 0 is the zero time.
func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func fromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us).UTC()
}

// list reads the rows of q and converts them; what names them in errors.
func list[R, T any](q *gorm.DB, what string, f func(R) T) ([]T, error) {
	var rows []R
	if err := q.Find(&rows).Error; err != nil {
		return nil, translate(err, what)
	}
	return convert(rows, f), nil
}

// one reads the row of q that conds select and converts it.
func one[R, T any](q *gorm.DB, what string, f func(R) T, conds ...any) (T, error) {
	var row R
	err := q.Take(&row, conds...).Error
	return f(row), translate(err, what)
}

// locked reads the row conds select under a row lock and runs change on
// it, in one transaction.
func locked[R any](db *gorm.DB, change func(tx *gorm.DB, row *R) error, conds ...any) (R, error) {
	var row R
	err := db.Transaction(func(tx *gorm.DB) error {
		if err := tx.Clauses(lockForUpdate).Take(&row, conds...).Error; err != nil {
			return err
		}
		return change(tx, &row)
	})
	return row, err
}

// affected is res's error, or gorm.ErrRecordNotFound when it changed no row.
func affected(res *gorm.DB) error {
	if res.Error == nil && res.RowsAffected == 0 {
		return gorm.ErrRecordNotFound
	}
	return res.Error
}

func convert[R, T any](rows []R, f func(R) T) []T {
	out := make([]T, len(rows))
	for i, r := range rows {
		out[i] = f(r)
	}
	return out
}

// scanAll scans q's rows through fields: the API's hottest reads skip
// gorm's reflection, which cost nearly as much again as the statement.
func scanAll[T any](q *gorm.DB, fields func(*T) []any) ([]T, error) {
	rows, err := q.Rows()
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	var v T // one row and field list for all: Scan sets every field
	dest := fields(&v)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

func column[T any](q *gorm.DB) ([]T, error) { return scanAll(q, func(v *T) []any { return []any{v} }) }

// joinList stores a list of names (scopes, platforms) as one
// comma-separated column; splitList reads it back, empty as none.
func joinList[T ~string](xs []T) string {
	return strings.Join(convert(xs, func(x T) string { return string(x) }), ",")
}

func splitList[T ~string](s string) []T {
	var out []T
	for x := range strings.SplitSeq(s, ",") {
		if x != "" {
			out = append(out, T(x))
		}
	}
	return out
}

// storable reports whether s can be a key in a statement: Postgres
// refuses text that is not UTF-8 or holds NUL, where no row could match.
func storable(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

// translate maps driver errors to core kinds at the boundary. gorm does
// not translate the errors of a query through Raw, hence the codes.
func translate(err error, what string) error {
	var ce *core.Error
	var pg interface{ SQLState() string }
	var lite sqlite3.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gorm.ErrRecordNotFound), errors.Is(err, sql.ErrNoRows),
		// A text Postgres cannot hold (see storable) is in no row: not found, as on SQLite.
		errors.As(err, &pg) && (pg.SQLState() == "22021" || pg.SQLState() == "22P05"):
		return core.Errorf(core.KindNotFound, "%s not found", what)
	case errors.Is(err, gorm.ErrDuplicatedKey), errors.As(err, &pg) && pg.SQLState() == "23505",
		errors.As(err, &lite) && (lite.ExtendedCode == sqlite3.ErrConstraintUnique || lite.ExtendedCode == sqlite3.ErrConstraintPrimaryKey):
		return core.Errorf(core.KindConflict, "%s already exists", what)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.As(err, &ce):
		return err
	}
	return core.Wrap(core.KindInternal, err, "database error")
}

// foreignKey reports a broken foreign key (a missing owner).
func foreignKey(err error) bool {
	var pg interface{ SQLState() string }
	var lite sqlite3.Error
	return errors.Is(err, gorm.ErrForeignKeyViolated) || errors.As(err, &pg) && pg.SQLState() == "23503" ||
		errors.As(err, &lite) && lite.ExtendedCode == sqlite3.ErrConstraintForeignKey
}
