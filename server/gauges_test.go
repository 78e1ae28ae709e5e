package server

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// A scrape answers while the queue tables cannot be read (a migration or
// an operator holding a lock on them, a database that stopped answering):
// the gauges read -1 within a bound instead of holding the scrape, and
// with it every metric that would show the trouble, until the database
// answers.
func TestScrapeAnswersWhileTheQueuesCannotBeRead(t *testing.T) {
	url := pgtest.URL(t)
	lockTable(t, url, "webhook_deliveries")
	db, err := gormstore.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	reg := newMetrics(db)
	answered := make(chan string, 1)
	go func() {
		rec := httptest.NewRecorder()
		reg.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		answered <- rec.Body.String()
	}()
	select {
	case body := <-answered:
		if !strings.Contains(body, "\nearshot_queued_deliveries -1\n") || !strings.Contains(body, "\nearshot_unscored_matches -1\n") ||
			!strings.Contains(body, "\nearshot_oldest_queued_delivery_seconds -1\n") {
			t.Fatalf("scrape while the queue is locked:\n%s", body)
		}
	case <-time.After(2 * gaugeWait):
		t.Fatalf("no scrape answer within %s while the queue is locked", 2*gaugeWait)
	}
}

// lockTable migrates the database at url and holds an exclusive lock on
// table, as a migration or an operator would, until t ends; it returns
// the lock's transaction, to look at the waits it causes.
func lockTable(t *testing.T, url, table string) *sql.Tx {
	t.Helper()
	ctx := context.Background()
	db, err := gormstore.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	tx, err := db.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback() })
	if _, err := tx.ExecContext(ctx, "LOCK TABLE "+table+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	return tx
}
