package gormstore

import (
	"context"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// redditCheckpointsSQL is the schema step of the reddit checkpoints: one
// row per community and listing, times in microseconds like every table.
const redditCheckpointsSQL = `
CREATE TABLE reddit_checkpoints (
	community       TEXT NOT NULL,
	listing         TEXT NOT NULL,
	until_us        BIGINT NOT NULL DEFAULT 0,
	rate            DOUBLE PRECISION NOT NULL DEFAULT 0,
	last_via        TEXT NOT NULL DEFAULT '',
	last_read_at    BIGINT NOT NULL DEFAULT 0,
	last_success_at BIGINT NOT NULL DEFAULT 0,
	last_error      TEXT NOT NULL DEFAULT '',
	last_error_at   BIGINT NOT NULL DEFAULT 0,
	archive_lag_us  BIGINT NOT NULL DEFAULT 0,
	PRIMARY KEY (community, listing)
);
`

// RedditStore keeps the reddit poller's checkpoints.
type RedditStore struct{ db *DB }

var _ ports.RedditStore = (*RedditStore)(nil)

// NewRedditStore returns the reddit checkpoint store of db.
func NewRedditStore(db *DB) *RedditStore { return &RedditStore{db: db} }

type redditCheckpointRow struct {
	Community     string
	Listing       string
	UntilUs       int64
	Rate          float64
	LastVia       string
	LastReadAt    int64
	LastSuccessAt int64
	LastError     string
	LastErrorAt   int64
	ArchiveLagUs  int64
}

// RedditCheckpoints implements ports.RedditStore.
func (s *RedditStore) RedditCheckpoints(ctx context.Context) ([]ports.RedditCheckpoint, error) {
	var rows []redditCheckpointRow
	if err := s.db.with(ctx).Raw(`SELECT * FROM reddit_checkpoints ORDER BY community, listing`).Scan(&rows).Error; err != nil {
		return nil, translate(err, "reddit checkpoint")
	}
	out := make([]ports.RedditCheckpoint, len(rows))
	for i, r := range rows {
		out[i] = ports.RedditCheckpoint{
			Community: r.Community, Listing: ports.RedditListing(r.Listing), Until: fromMicros(r.UntilUs), Rate: r.Rate,
			LastVia: r.LastVia, LastReadAt: fromMicros(r.LastReadAt), LastSuccessAt: fromMicros(r.LastSuccessAt),
			LastError: r.LastError, LastErrorAt: fromMicros(r.LastErrorAt), ArchiveLag: time.Duration(r.ArchiveLagUs) * time.Microsecond,
		}
	}
	return out, nil
}

// checkpointChunk bounds the rows of one statement, well inside both
// databases' limits on parameters.
const checkpointChunk = 100

// SaveRedditCheckpoints implements ports.RedditStore: one upsert a chunk,
// in one transaction, keeping the later of the stored and given Until.
func (s *RedditStore) SaveRedditCheckpoints(ctx context.Context, cps []ports.RedditCheckpoint) error {
	for _, cp := range cps {
		if cp.Listing != ports.RedditPosts && cp.Listing != ports.RedditComments {
			return core.Errorf(core.KindInvalid, "listing must be %s or %s", ports.RedditPosts, ports.RedditComments)
		}
	}
	if len(cps) == 0 {
		return nil
	}
	tx := s.db.with(ctx).Begin()
	if tx.Error != nil {
		return translate(tx.Error, "reddit checkpoint")
	}
	defer tx.Rollback()
	for start := 0; start < len(cps); start += checkpointChunk {
		chunk := cps[start:min(start+checkpointChunk, len(cps))]
		var q strings.Builder
		q.WriteString(`INSERT INTO reddit_checkpoints (community, listing, until_us, rate, last_via, last_read_at,
			last_success_at, last_error, last_error_at, archive_lag_us) VALUES `)
		args := make([]any, 0, 10*len(chunk))
		for i, cp := range chunk {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
			args = append(args, cp.Community, string(cp.Listing), micros(cp.Until), cp.Rate, cp.LastVia, micros(cp.LastReadAt),
				micros(cp.LastSuccessAt), cp.LastError, micros(cp.LastErrorAt), cp.ArchiveLag.Microseconds())
		}
		// Until never moves back, whatever a late or concurrent writer
		// says: the checkpoint is what keeps posts from being lost.
		q.WriteString(` ON CONFLICT (community, listing) DO UPDATE SET
			until_us = CASE WHEN excluded.until_us > reddit_checkpoints.until_us THEN excluded.until_us ELSE reddit_checkpoints.until_us END,
			rate = excluded.rate, last_via = excluded.last_via, last_read_at = excluded.last_read_at,
			last_success_at = excluded.last_success_at, last_error = excluded.last_error,
			last_error_at = excluded.last_error_at, archive_lag_us = excluded.archive_lag_us`)
		if err := tx.Exec(q.String(), args...).Error; err != nil {
			return translate(err, "reddit checkpoint")
		}
	}
	return translate(tx.Commit().Error, "reddit checkpoint")
}
