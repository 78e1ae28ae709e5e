package gormstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"sync"

	"github.com/mattn/go-sqlite3"
)

// SQLite lets one transaction write at a time. Another that asks meanwhile
// is told the database is busy and its busy handler sleeps and asks
// again, by steps that grow from 1 to 100 ms: under a steady stream of
// short writes from several goroutines (ingest, scores, webhook claims
// and attempts) most of a write's time went to those sleeps, and the
// sleeps grew with the load. Every transaction here is IMMEDIATE, a
// writer from its first statement, so this process queues its
// transactions on a mutex per database instead and each starts as soon
// as the one before ends. Other processes on the same file still meet
// the busy handler.
//
// So code inside a transaction uses that transaction's handle only: a
// statement on another connection of the pool could find every
// connection held by transactions waiting for this one, and would wait
// for ever where the busy handler would have given up after its timeout.

// lockingDriverName is the database/sql name of the SQLite driver whose
// transactions take the mutex of their database.
const lockingDriverName = "sqlite3_earshot"

func init() { sql.Register(lockingDriverName, &lockingDriver{}) }

// writers holds a mutex per DSN: every connection to one database shares
// it, and an in-memory database's DSN is unique to it.
var writers sync.Map // DSN -> *sync.Mutex

type lockingDriver struct{ sqlite3.SQLiteDriver }

func (d *lockingDriver) Open(dsn string) (driver.Conn, error) {
	c, err := d.SQLiteDriver.Open(dsn)
	if err != nil {
		return nil, err
	}
	mu, _ := writers.LoadOrStore(dsn, &sync.Mutex{})
	return &lockingConn{SQLiteConn: c.(*sqlite3.SQLiteConn), mu: mu.(*sync.Mutex)}, nil
}

// lockingConn is a SQLite connection whose transactions hold mu from
// BEGIN to COMMIT or ROLLBACK. Its other methods are the driver's own.
type lockingConn struct {
	*sqlite3.SQLiteConn
	mu *sync.Mutex
}

func (c *lockingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	c.mu.Lock()
	tx, err := c.SQLiteConn.BeginTx(ctx, opts)
	if err != nil {
		c.mu.Unlock()
		return nil, err
	}
	return &lockingTx{Tx: tx, mu: c.mu}, nil
}

func (c *lockingConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

type lockingTx struct {
	driver.Tx
	mu   *sync.Mutex
	once sync.Once
}

func (t *lockingTx) Commit() error {
	defer t.release()
	return t.Tx.Commit()
}

func (t *lockingTx) Rollback() error {
	defer t.release()
	return t.Tx.Rollback()
}

func (t *lockingTx) release() { t.once.Do(t.mu.Unlock) }
