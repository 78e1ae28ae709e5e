package httpapi

import (
	"context"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core/health"
)

// A retryAfter too large for a duration in seconds reads as a wait past
// the day it is cut to, never wrapped round to a short wait or to a
// negative one that is refused: the platform named a long wait, and the
// helper must hold off for the longest the service keeps.
func TestAccountStatusHugeRetryAfter(t *testing.T) {
	for _, secs := range []int64{18446744074, 9300000000, 1 << 62, 86401} {
		body := `{"platform":"x","status":429,"retryAfter":` + strconv.FormatInt(secs, 10) + `}`
		v, err := decodeAccountStatus(context.Background(), httptest.NewRequest("POST", "/account-status", strings.NewReader(body)))
		if err != nil {
			t.Fatalf("retryAfter %d: %v", secs, err)
		}
		sig := v.(health.Signal)
		if err := health.CheckSignal(sig); err != nil {
			t.Fatalf("retryAfter %d: CheckSignal %v", secs, err)
		}
		if sig.RetryAfter <= health.MaxRetryAfter {
			t.Fatalf("retryAfter %d read as %v, want past %v", secs, sig.RetryAfter, health.MaxRetryAfter)
		}
	}
}
