package ports

import (
	"context"
	"time"
)

// Quota is a rate limiter's answer for one request.
type Quota struct {
	Allowed   bool
	Limit     int
	Remaining int           // requests left in the current window
	Reset     time.Duration // until the window ends; Retry-After when refused
}

// RetryAfter is Reset in whole seconds, rounded up and at least 1: the
// value of a Retry-After header, which a client reading 0 would send at
// once.
func (q Quota) RetryAfter() int { return max(int(q.Reset.Seconds()+0.999), 1) }

// RateLimiter counts requests per key in fixed windows of one minute.
type RateLimiter interface {
	// Take counts one request of key against limit and says whether it
	// may go ahead. It is safe for concurrent use; with a shared backend
	// the count holds across replicas.
	Take(ctx context.Context, key string, limit int) (Quota, error)
	// Peek answers what Take would, without counting a request: Allowed
	// is false once key has used its limit in the current window, and
	// Reset says when that window ends (a whole window for a key not
	// seen in it). It is safe for concurrent use. With a shared backend
	// a window another replica used up may be seen a moment late, and
	// Remaining and Reset of a window not used up may count only this
	// replica's requests.
	Peek(ctx context.Context, key string, limit int) (Quota, error)
}
