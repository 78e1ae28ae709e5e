package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/earshothq/earshot/core"
)

// Sweep calls sweep each period until ctx ends and returns after the
// call under way; a failure is logged as what failed. The stores' upkeep
// (idle sessions, rate windows, the queues' vacuum) runs on it.
func Sweep(ctx context.Context, period time.Duration, log *slog.Logger, what string, sweep func(context.Context) error) {
	every(ctx, period, nil, func() {
		if err := sweep(ctx); err != nil && ctx.Err() == nil {
			log.Warn(what+" failed", "err", err)
		}
	})
}

// every calls f each interval, and at once whenever wake receives (a nil
// wake never does), until ctx ends. It returns after the call under way.
func every(ctx context.Context, interval time.Duration, wake <-chan struct{}, f func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
		f()
	}
}

// The waits of again: the first, and the longest; each doubles the last.
const (
	againFirst = 100 * time.Millisecond
	againMost  = 5 * time.Second
)

// again calls write until it works, or until the next wait would end at
// or past until, and returns its last error. It is for the writes that
// record what went out already (a message sent, an email the server
// accepted) while a claim keeps others off it: left unwritten after a
// failure of a moment, the work is done again once the claim runs out.
// write must be safe to make again. An error no second write mends (a
// row not found, a conflict, a value refused) is returned at once.
func again(until time.Time, write func() error) error {
	wait := againFirst
	for {
		err := write()
		if err == nil || !time.Now().Add(wait).Before(until) || lasting(err) {
			return err
		}
		t := time.NewTimer(wait)
		<-t.C
		wait = min(2*wait, againMost)
	}
}

// lasting reports whether err is of a kind that a write made again
// would meet again.
func lasting(err error) bool {
	return core.IsKind(err, core.KindNotFound) || core.IsKind(err, core.KindConflict) || core.IsKind(err, core.KindInvalid)
}
