package dashboard

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/ratelimit"
)

// Every signed-in write takes from the owner's one bucket, read from
// routeList so that a route added later is covered: the test sends of a
// webhook or a channel, redeliveries and replays, the new-address
// email, keys, and every change. Once the bucket is empty each is
// refused with 429 before its handler runs; only signing out is not.
// The sign-in email, asked for signed out, is bounded per address and
// per owner in app.Sessions (TestSignInRequestsPastTheLimitSayWhenToRetry
// shows the page it gets).
func TestEverySignedInWriteIsLimited(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 10, 0, time.UTC)
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RateLimit: 1},
		Deps{Sessions: ownerSessions{owners: map[string]string{"a" + strings.Repeat("t", 42): "a"}},
			Inbox: fakeInbox{}, Matches: fakeMatches{}, Phrases: fakePhrases{},
			Limiter: ratelimit.NewMemory(func() time.Time { return now })})
	if err != nil {
		t.Fatal(err)
	}
	if w := postAs(d, "a", "/app/matches/m1", "action=read"); w.Code == http.StatusTooManyRequests {
		t.Fatalf("the first write refused")
	}
	public := map[string]bool{}
	for _, rt := range d.routeList() {
		public[rt.pattern] = rt.public
	}
	limited := 0
	for pattern, methodPath := range writeRoutes(d) {
		if public[pattern] {
			continue
		}
		_, path, _ := strings.Cut(methodPath, " ")
		w := postAs(d, "a", path, "action=read")
		switch {
		case unlimited[pattern] && w.Code == http.StatusTooManyRequests:
			t.Errorf("%s refused past the limit", pattern)
		case !unlimited[pattern] && (w.Code != http.StatusTooManyRequests || w.Header().Get("Retry-After") == ""):
			t.Errorf("%s past the limit: %d, Retry-After %q", pattern, w.Code, w.Header().Get("Retry-After"))
		case !unlimited[pattern]:
			limited++
		}
	}
	for _, outbound := range []string{"POST /app/webhooks/{id}/test", "POST /app/channels/{id}/test", "POST /app/webhooks/{id}/replay",
		"POST /app/channels/{id}/replay", "POST /app/webhooks/{id}/deliveries/{did}/redeliver",
		"POST /app/channels/{id}/deliveries/{did}/redeliver", "POST /app/account"} {
		if _, ok := writeRoutes(d)[outbound]; !ok || public[outbound] || unlimited[outbound] {
			t.Errorf("%s is not among the limited writes", outbound)
		}
	}
	if limited < 30 {
		t.Fatalf("only %d writes limited", limited)
	}
}
