package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/earshothq/earshot/core"
)

// limitedSessions refuses every sign-in request as app.Sessions does an
// address past its requests of the minute.
type limitedSessions struct{ fakeSessions }

func (limitedSessions) RequestLink(context.Context, string, string) error {
	return core.Errorf(core.KindRateLimited, "too many sign-in requests: wait a minute and try again")
}

// A sign-in request past the limit is 429 with Retry-After, as every
// other 429 of the dashboard is, so a client knows when to ask again.
func TestSignInRequestsPastTheLimitSayWhenToRetry(t *testing.T) {
	d, err := New(Config{}, Deps{Sessions: limitedSessions{}})
	if err != nil {
		t.Fatal(err)
	}
	w := serve(d, formPost("/app/login", url.Values{"email": {"a@example.com"}}, "same-origin", false))
	if w.Code != http.StatusTooManyRequests || !strings.Contains(w.Body.String(), "wait a minute") {
		t.Fatalf("status %d\n%s", w.Code, w.Body)
	}
	if s, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || s <= 0 {
		t.Fatalf("Retry-After %q, want a positive number of seconds", w.Header().Get("Retry-After"))
	}
}
