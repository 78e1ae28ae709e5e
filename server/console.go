package server

import (
	"context"
	"fmt"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
)

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
