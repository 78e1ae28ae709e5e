package app

import (
	"context"
	"log/slog"
	"time"
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
