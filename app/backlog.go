package app

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// BacklogPeriod is how often Backlog reads the count of unscored matches.
const BacklogPeriod = 250 * time.Millisecond

// Backlog keeps ingest from storing matches faster than scoring stores
// their scores. Posts that all match can arrive faster than the scorer
// works, and the unscored matches would then pile up without end, each
// read of the service sharing the machine with working them off; with a
// bound, the helpers that send the posts wait instead (a refused batch
// is answered 503 with Retry-After, and the helper sends it again).
//
// The count is read from the database every BacklogPeriod, so replicas
// on one database see one backlog; each adds the matches it stores
// meanwhile, so that the bound is not overrun between two reads by
// more than the batches in flight at a read (and the other replicas'
// until their next read). Safe for concurrent use; a nil *Backlog
// refuses nothing.
type Backlog struct {
	store   ports.ScoringBacklog
	bound   int
	log     *slog.Logger
	waiting atomic.Int64 // the last count read, with the matches stored since
	failing atomic.Bool  // the last read failed: said once, not every period
	full    atomic.Bool  // the last read reached the bound: said once
}

// NewBacklog returns the watcher of the unscored matches that refuses
// batches while bound or more wait; a bound of 0 or less refuses none
// and reads nothing.
func NewBacklog(store ports.ScoringBacklog, bound int, log *slog.Logger) *Backlog {
	return &Backlog{store: store, bound: max(bound, 0), log: orDefaultLog(log)}
}

// Run reads the count at once and then every BacklogPeriod until ctx
// ends. A failed read keeps the last count, and is logged when reads
// start to fail and when they work again, not every period.
func (b *Backlog) Run(ctx context.Context) {
	if b == nil || b.bound == 0 {
		return
	}
	read := func() {
		err := b.Refresh(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !b.failing.Swap(true):
			b.log.Warn("reading the scoring backlog failed; ingest goes by the last count until a read works", "err", err)
		case err == nil && b.failing.Swap(false):
			b.log.Info("reading the scoring backlog works again", "unscored", b.waiting.Load())
		}
	}
	read()
	every(ctx, BacklogPeriod, nil, read)
}

// Refresh reads the count of unscored matches once, up to the bound.
func (b *Backlog) Refresh(ctx context.Context) error {
	if b == nil || b.bound == 0 {
		return nil
	}
	n, err := b.store.Unscored(ctx, b.bound)
	if err != nil {
		return err
	}
	b.waiting.Store(int64(n))
	if full := n >= b.bound; full != b.full.Swap(full) {
		if full {
			b.log.Warn("scoring is behind: POST /ingest refuses batches until fewer matches wait for a score", "unscored", n, "bound", b.bound)
		} else {
			b.log.Info("scoring has caught up: POST /ingest takes batches again", "unscored", n, "bound", b.bound)
		}
	}
	return nil
}

// admit refuses a batch, with KindUnavailable, while bound or more
// matches wait for a score.
func (b *Backlog) admit() error {
	if b == nil || b.bound == 0 || b.waiting.Load() < int64(b.bound) {
		return nil
	}
	return core.Errorf(core.KindUnavailable,
		"scoring is behind: %d or more matches wait for a score; send this batch again after Retry-After seconds", b.bound)
}

// stored adds n matches just stored to the count, until the next read.
func (b *Backlog) stored(n int) {
	if b != nil && b.bound > 0 && n > 0 {
		b.waiting.Add(int64(n))
	}
}
