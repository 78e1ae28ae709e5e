package server

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/earshothq/earshot/adapters/gormstore"
)

// answers connects to the Postgres at rawURL under the connect bound
// gormstore.Open applies and fails unless a ping is answered within
// bound. Open's own first statement takes no context: a server that
// completes the start-up and then stops answering (hung, or a firewall
// that drops what follows) would hold it forever. Any other URL passes,
// as does one the driver cannot parse, for Open to say why.
func answers(ctx context.Context, rawURL string, bound time.Duration) error {
	if !strings.HasPrefix(rawURL, "postgres://") && !strings.HasPrefix(rawURL, "postgresql://") {
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil
	}
	cfg, err := pgconn.ParseConfig(rawURL)
	if err != nil {
		return nil
	}
	// gormstore.Open's default, unless the operator chose a bound.
	if !u.Query().Has("connect_timeout") && os.Getenv("PGCONNECT_TIMEOUT") == "" && cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 30 * time.Second
	}
	conn, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer conn.Close(ctx)
	pingCtx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	if err := conn.Ping(pingCtx); err != nil {
		if errors.Is(pingCtx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("open database: Postgres at %s connected and then gave no answer within %v", conn.Conn().RemoteAddr(), bound)
		}
		return fmt.Errorf("open database: %w", err)
	}
	return nil
}

// migrateBehind migrates db when its schema is not at this build's
// version. The read of the version must be answered within bound; the
// migration, which may rightly run long or wait for another process's,
// is not bounded.
func migrateBehind(ctx context.Context, db *gormstore.DB, bound time.Duration) error {
	type read struct {
		v   int
		err error
	}
	done := make(chan read, 1)
	// The read asks whether the table exists with no context: it is given
	// up on rather than cut, and the command exits.
	go func() {
		v, err := db.Version(ctx)
		done <- read{v, err}
	}()
	timer := time.NewTimer(bound)
	defer timer.Stop()
	select {
	case r := <-done:
		if r.err != nil {
			return fmt.Errorf("migrate: %w", r.err)
		}
		if r.v == gormstore.Latest() {
			return nil
		}
	case <-timer.C:
		return fmt.Errorf("migrate: the database gave no answer within %v to the read of the schema's version", bound)
	}
	if err := db.Migrate(ctx); err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	return nil
}
