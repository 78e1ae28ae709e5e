package app

import (
	"context"
	"time"
)

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
