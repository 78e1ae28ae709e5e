package gormstore

import (
	"context"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

type redditCheckpointRow struct {
	Community, Listing                                            string `gorm:"primaryKey"`
	Rate                                                          float64
	LastVia, LastError                                            string
	UntilUs, LastReadAt, LastSuccessAt, LastErrorAt, ArchiveLagUs int64 // µs
}

func (redditCheckpointRow) TableName() string { return "reddit_checkpoints" }

func (r redditCheckpointRow) checkpoint() ports.RedditCheckpoint {
	return ports.RedditCheckpoint{
		Community: r.Community, Listing: ports.RedditListing(r.Listing), Until: fromMicros(r.UntilUs), Rate: r.Rate,
		LastVia: r.LastVia, LastReadAt: fromMicros(r.LastReadAt), LastSuccessAt: fromMicros(r.LastSuccessAt),
		LastError: r.LastError, LastErrorAt: fromMicros(r.LastErrorAt), ArchiveLag: time.Duration(r.ArchiveLagUs) * time.Microsecond,
	}
}

// RedditStore keeps the reddit poller's checkpoints.
type RedditStore struct{ db *DB }

func NewRedditStore(db *DB) *RedditStore { return &RedditStore{db: db} }

func (s *RedditStore) RedditCheckpoints(ctx context.Context) ([]ports.RedditCheckpoint, error) {
	return list(s.db.with(ctx).Order("community, listing"), "reddit checkpoint", redditCheckpointRow.checkpoint)
}

// keepLaterUntil never moves a stored Until back, whatever a late or
// concurrent writer says: the checkpoint is what keeps posts from being lost.
var keepLaterUntil = clause.OnConflict{
	Columns: []clause.Column{{Name: "community"}, {Name: "listing"}},
	DoUpdates: append(clause.Set{{Column: clause.Column{Name: "until_us"}, Value: gorm.Expr(
		"CASE WHEN excluded.until_us > reddit_checkpoints.until_us THEN excluded.until_us ELSE reddit_checkpoints.until_us END")}},
		clause.AssignmentColumns([]string{"rate", "last_via", "last_read_at", "last_success_at", "last_error", "last_error_at", "archive_lag_us"})...),
}

// SaveRedditCheckpoints implements ports.RedditStore: one upsert per 100
// rows (well inside both databases' limits on parameters), in one transaction.
func (s *RedditStore) SaveRedditCheckpoints(ctx context.Context, cps []ports.RedditCheckpoint) error {
	rows := make([]redditCheckpointRow, 0, len(cps))
	at := map[[2]string]int{} // a checkpoint's row: Postgres refuses a statement that upserts one row twice
	for _, cp := range cps {
		if cp.Listing != ports.RedditPosts && cp.Listing != ports.RedditComments {
			return core.Errorf(core.KindInvalid, "listing must be %s or %s", ports.RedditPosts, ports.RedditComments)
		}
		k := [2]string{cp.Community, string(cp.Listing)}
		i, seen := at[k]
		if !seen {
			i, at[k] = len(rows), len(rows)
			rows = append(rows, redditCheckpointRow{})
		}
		until := rows[i].UntilUs // named again: the later one's fields, as a second call would store, and the later Until
		rows[i] = redditCheckpointRow{Community: cp.Community, Listing: string(cp.Listing), UntilUs: micros(cp.Until), Rate: cp.Rate,
			LastVia: cp.LastVia, LastReadAt: micros(cp.LastReadAt), LastSuccessAt: micros(cp.LastSuccessAt), LastError: cp.LastError,
			LastErrorAt: micros(cp.LastErrorAt), ArchiveLagUs: cp.ArchiveLag.Microseconds()}
		rows[i].UntilUs = max(rows[i].UntilUs, until)
	}
	if len(rows) == 0 {
		return nil
	}
	return translate(s.db.write(ctx).Transaction(func(tx *gorm.DB) error {
		return tx.Clauses(keepLaterUntil).CreateInBatches(&rows, 100).Error
	}), "reddit checkpoint")
}
