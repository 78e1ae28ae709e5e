package httpapi

import (
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
)

// The view answers the account's retryAfter, in seconds from the
// report, so that a helper waits what the service decided: 15 minutes
// for a rate limit that named no wait (facebook's "temporarily blocked",
// code 368, whose block lasts hours), the platform's wait when it named
// one, a minute after a network error; nothing for a healthy answer.
// (It was left out, and the helper asked again after its own minute.)
func TestAccountViewCarriesRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		sig  health.Signal
		want int // 0: none
	}{
		{"rate limit naming no wait", health.Signal{Platform: core.Facebook, Status: 200, Code: 368}, 900},
		{"rate limit naming a wait", health.Signal{Platform: core.X, Status: 429, RetryAfter: 2*time.Minute + 300*time.Millisecond}, 121},
		{"network error", health.Signal{Platform: core.X, NoResponse: true}, 60},
		{"healthy", health.Signal{Platform: core.X, Status: 200}, 0},
	} {
		rec := health.Record{}.Apply(c.sig, now)
		v := AccountView(health.StatusOf("acc-1", c.sig.Platform, true, rec))
		got := 0
		if v.RetryAfter != nil {
			got = *v.RetryAfter
		}
		if got != c.want || (c.want == 0) != (v.RetryAfter == nil) {
			t.Errorf("%s: retryAfter %v, want %d", c.name, v.RetryAfter, c.want)
		}
	}
}
