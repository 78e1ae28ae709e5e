package dashboard

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// countingWebhooks has one webhook, h1, of every owner, and counts the
// pings and redeliveries asked of it.
type countingWebhooks struct {
	mu           sync.Mutex
	tests, redos int
}

func (c *countingWebhooks) Create(context.Context, string, string, *int, []string) (core.Webhook, string, error) {
	return core.Webhook{}, "", core.Errorf(core.KindInvalid, "no")
}
func (c *countingWebhooks) List(context.Context, string) ([]core.Webhook, error) {
	return []core.Webhook{{ID: "h1", URL: "https://hooks.example.com/in", Active: true}}, nil
}
func (c *countingWebhooks) Update(context.Context, string, string, ports.WebhookChange) (core.Webhook, error) {
	return core.Webhook{}, nil
}
func (c *countingWebhooks) Deliveries(context.Context, string, string) ([]core.Delivery, error) {
	return nil, nil
}
func (c *countingWebhooks) Test(ctx context.Context, _, _ string, take func(context.Context) error) (ports.WebhookResult, error) {
	if err := take(ctx); err != nil {
		return ports.WebhookResult{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tests++
	return ports.WebhookResult{Status: 200}, nil
}
func (c *countingWebhooks) Retry(ctx context.Context, _, _, _ string, take func(context.Context) error) (core.Delivery, error) {
	if err := take(ctx); err != nil {
		return core.Delivery{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.redos++
	return core.Delivery{}, nil
}

// post sends a same-origin form as the owner.
func postAs(d *Dashboard, owner, path, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("POST", path, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Sec-Fetch-Site", "same-origin")
	r.AddCookie(&http.Cookie{Name: cookieName, Value: owner + strings.Repeat("t", 43-len(owner))})
	w := httptest.NewRecorder()
	d.ServeHTTP(w, r)
	return w
}

// Every write of the dashboard takes from the owner's bucket: past the
// limit the action is not carried out, the answer is 429 with
// Retry-After and the page says when to try again; reading pages and
// signing out are never refused, other owners are not affected, and the
// next window admits again.
func TestDashboardWritesAreLimited(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 10, 0, time.UTC)
	hooks := &countingWebhooks{}
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RateLimit: 5},
		Deps{Sessions: ownerSessions{owners: map[string]string{"a" + strings.Repeat("t", 42): "a", "b" + strings.Repeat("t", 42): "b"}},
			Inbox: fakeInbox{}, Matches: fakeMatches{m: core.Match{ID: "m1"}}, Phrases: fakePhrases{}, Webhooks: hooks,
			Limiter: ratelimit.NewMemory(func() time.Time { return now })})
	if err != nil {
		t.Fatal(err)
	}
	writes := []string{"/app/webhooks/h1/test", "/app/webhooks/h1/deliveries/d1/redeliver", "/app/matches/m1", "/app/phrases", "/app/matches/bulk"}
	refused := 0
	for i := range 20 {
		w := postAs(d, "a", writes[i%len(writes)], "action=read&phrase=acme&platform=x&id=m1")
		if w.Code != http.StatusTooManyRequests {
			continue
		}
		refused++
		if ra := w.Header().Get("Retry-After"); ra != "60" {
			t.Fatalf("Retry-After %q, want 60", ra)
		}
		if body := w.Body.String(); !strings.Contains(body, "at most 5 changes and sends a minute") || !strings.Contains(body, "try again in 60 seconds") ||
			!strings.Contains(body, `role="alert"`) {
			t.Fatalf("refusal page:\n%s", body)
		}
	}
	if refused != 15 {
		t.Fatalf("%d of 20 writes refused, want 15", refused)
	}
	if hooks.tests+hooks.redos != 2 {
		t.Fatalf("%d pings and %d redeliveries carried out, want 1 and 1", hooks.tests, hooks.redos)
	}
	for _, path := range []string{"/app/", "/app/webhooks/h1", "/app/phrases"} {
		if w := getAs(d, "a", path); w.Code != 200 {
			t.Fatalf("reading %s past the limit: %d", path, w.Code)
		}
	}
	if w := postAs(d, "a", "/app/logout", ""); w.Code != 200 {
		t.Fatalf("signing out past the limit: %d", w.Code)
	}
	if w := postAs(d, "b", "/app/webhooks/h1/test", ""); w.Code != http.StatusSeeOther {
		t.Fatalf("another owner's ping: %d", w.Code)
	}
	now = now.Add(time.Minute)
	if w := postAs(d, "a", "/app/webhooks/h1/test", ""); w.Code != http.StatusSeeOther {
		t.Fatalf("a ping in the next window: %d", w.Code)
	}
}
