package server

import (
	"context"
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
	ctx := context.Background()
	db, err := gormstore.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	locker, err := gormstore.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	tx, err := locker.SQL().BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, "LOCK TABLE webhook_deliveries IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
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
