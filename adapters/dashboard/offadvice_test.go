package dashboard

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/core"
)

// offWebhooks holds one webhook that switched itself off.
type offWebhooks struct{ countingWebhooks }

func (*offWebhooks) List(context.Context, string) ([]core.Webhook, error) {
	return []core.Webhook{{ID: "h1", URL: "https://hooks.example.com/in", Active: false, ConsecutiveFailures: 5,
		DisabledReason: "switched off after 5 failed deliveries in a row; last error: http 502"}}, nil
}

// A switched-off webhook's page says, beside the reason, what brings it
// back; one switched on does not.
func TestSwitchedOffWebhookSaysWhatNext(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	const next = "Fix the receiver, then press Switch on: what was queued meanwhile then goes out."
	for _, c := range []struct {
		hooks WebhookService
		want  bool
	}{{&offWebhooks{}, true}, {&countingWebhooks{}, false}} {
		d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RateLimit: 100, Now: clock},
			Deps{Sessions: ownerSessions{owners: map[string]string{"a" + strings.Repeat("t", 42): "a"}},
				Inbox: fakeInbox{}, Matches: fakeMatches{}, Phrases: fakePhrases{}, Webhooks: c.hooks, Channels: &fakeChannels{},
				Limiter: ratelimit.NewMemory(clock)})
		if err != nil {
			t.Fatal(err)
		}
		page := getAs(d, "a", "/app/webhooks/h1")
		if page.Code != 200 || strings.Contains(page.Body.String(), next) != c.want {
			t.Fatalf("%T: %d, says what next: %v\n%s", c.hooks, page.Code, !c.want, page.Body.String())
		}
	}
}
