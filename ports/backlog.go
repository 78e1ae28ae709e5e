package ports

import "context"

// ScoringBacklog tells how many stored matches wait for a score, so that
// ingest can stop taking posts while scoring is behind. The count is the
// database's, so every replica on it reads the same backlog.
type ScoringBacklog interface {
	// Unscored returns how many matches of any owner have no score yet,
	// claimed ones included, counting no further than limit: a backlog
	// of limit or more is limit, so a read costs at most limit rows
	// however long the backlog has grown. 0 when limit is 0 or less.
	Unscored(ctx context.Context, limit int) (int, error)
}
