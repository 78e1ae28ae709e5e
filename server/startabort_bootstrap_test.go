package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/pgtest"
)

// The first start's bootstrap waits on the database (here an operator's
// lock on the owners table, the shape of gauges_test's lock) and the
// start is cut short: the start fails with the abort's cause, as a
// given-up subscription does, so serve reads it as a stop asked for
// (status 0) and not as a failure of its own (status 1).
func TestStartAbortDuringTheBootstrap(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	tx := lockTable(t, url, "owners")

	cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": url, "EARSHOT_ADDR": "127.0.0.1:0", "EARSHOT_BOOTSTRAP": "true"})
	a := Serve(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard)
	if err := a.Err(); err != nil {
		t.Fatal(err)
	}
	cause := errors.New("signal")
	abort, interrupt := context.WithCancelCause(ctx)
	startCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	started := make(chan error, 1)
	go func() { started <- a.Start(WithStartAbort(startCtx, abort)) }()

	// Wait until a query waits on the lock: the bootstrap's count.
	waiting := time.NewTicker(10 * time.Millisecond)
	defer waiting.Stop()
	for n := 0; n == 0; {
		select {
		case err := <-started:
			t.Fatalf("the start ended while the owners table was locked: %v", err)
		case <-waiting.C:
		}
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'owners'::regclass").Scan(&n); err != nil {
			t.Fatal(err)
		}
	}
	interrupt(cause)
	select {
	case err := <-started:
		if !errors.Is(err, cause) {
			t.Fatalf("start: %v, want the abort's cause", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the start still waits for the bootstrap after the abort")
	}
}
