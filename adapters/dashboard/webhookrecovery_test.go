package dashboard

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// The counting fake of limit_test.go rotates and replays too, counting
// them among its writes.
func (c *countingWebhooks) RotateSecret(context.Context, string, string, *time.Duration) (core.Webhook, string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.redos++
	return core.Webhook{ID: "h1"}, "whsec_new", nil
}

func (c *countingWebhooks) Replay(ctx context.Context, _, _ string, _, _ time.Time, take func(context.Context) error) (ports.ReplayResult, error) {
	if err := take(ctx); err != nil {
		return ports.ReplayResult{}, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.redos++
	return ports.ReplayResult{}, nil
}

// recoveryWebhooks has one webhook, h1, and records the rotations and
// replays asked of it; err, when set, is their answer.
type recoveryWebhooks struct {
	countingWebhooks
	mu       sync.Mutex
	hook     core.Webhook
	overlaps []*time.Duration
	ranges   [][2]time.Time
	replayed ports.ReplayResult
	err      error
	now      time.Time // when a rotation happens
}

func (f *recoveryWebhooks) List(context.Context, string) ([]core.Webhook, error) {
	return []core.Webhook{f.hook}, nil
}

func (f *recoveryWebhooks) RotateSecret(_ context.Context, _, id string, overlap *time.Duration) (core.Webhook, string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.overlaps = append(f.overlaps, overlap)
	if f.err != nil {
		return core.Webhook{}, "", f.err
	}
	if id != f.hook.ID {
		return core.Webhook{}, "", core.Errorf(core.KindNotFound, "webhook not found")
	}
	w := f.hook
	if overlap == nil {
		w.PreviousSecretUntil = f.now.Add(core.DefaultSecretOverlap)
	} else if *overlap > 0 {
		w.PreviousSecretUntil = f.now.Add(*overlap)
	}
	f.hook = w
	return w, "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", nil
}

func (f *recoveryWebhooks) Replay(ctx context.Context, _, _ string, from, to time.Time, take func(context.Context) error) (ports.ReplayResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ranges = append(f.ranges, [2]time.Time{from, to})
	if f.err != nil {
		return f.replayed, f.err
	}
	return f.replayed, take(ctx)
}

// recoveryDashboard is a dashboard of owner a whose clock reads *now.
func recoveryDashboard(t *testing.T, hooks WebhookService, rate int, now *time.Time) *Dashboard {
	t.Helper()
	clock := func() time.Time { return *now }
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RateLimit: rate, Now: clock},
		Deps{Sessions: ownerSessions{owners: map[string]string{"a" + strings.Repeat("t", 42): "a"}},
			Inbox: fakeInbox{}, Matches: fakeMatches{}, Phrases: fakePhrases{}, Webhooks: hooks,
			Limiter: ratelimit.NewMemory(clock)})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func wantIn(t *testing.T, what, body string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(body, p) {
			t.Fatalf("%s lacks %q:\n%s", what, p, body)
		}
	}
}

// The webhook's page offers the rotation behind a confirmation page,
// which names the overlap choices (24 hours chosen); the rotation's
// answer shows the new secret once, says until when the old one signs,
// and the page shows that until the overlap ends. A choice that is not a
// number, and one the service refuses, come back on the confirmation
// page with the reason.
func TestRotateSecretForm(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	f := &recoveryWebhooks{hook: core.Webhook{ID: "h1", URL: "https://hooks.example.com/in", Active: true}, now: now}
	d := recoveryDashboard(t, f, 100, &now)

	page := getAs(d, "a", "/app/webhooks/h1")
	if page.Code != 200 {
		t.Fatalf("webhook page: %d", page.Code)
	}
	wantIn(t, "the webhook page", page.Body.String(), `action="/app/webhooks/h1/rotate" method="get"`, `id="rotate"`)
	if strings.Contains(page.Body.String(), "also signs until") {
		t.Fatal("the page speaks of an old secret before any rotation")
	}

	confirm := getAs(d, "a", "/app/webhooks/h1/rotate")
	if confirm.Code != 200 {
		t.Fatalf("confirmation page: %d", confirm.Code)
	}
	body := confirm.Body.String()
	wantIn(t, "the confirmation page", body, "https://hooks.example.com/in", `method="post" action="/app/webhooks/h1/rotate"`,
		`<option value="86400" selected>`, `<option value="0">`, `<option value="604800">`, "shown once", `href="/app/webhooks/h1"`)
	if len(f.overlaps) != 0 {
		t.Fatal("showing the confirmation rotated the secret")
	}

	done := postAs(d, "a", "/app/webhooks/h1/rotate", "overlap=3600")
	if done.Code != 200 || len(f.overlaps) != 1 || f.overlaps[0] == nil || *f.overlaps[0] != time.Hour {
		t.Fatalf("rotate: %d, overlaps %v", done.Code, f.overlaps)
	}
	body = done.Body.String()
	const secret = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	wantIn(t, "the rotation's answer", body, `value="`+secret+`"`, "shown this once", "2026-11-26 11:30 UTC")
	if n := strings.Count(body, secret); n != 1 {
		t.Fatalf("the new secret is on the page %d times", n)
	}
	if later := getAs(d, "a", "/app/webhooks/h1").Body.String(); strings.Contains(later, secret) || !strings.Contains(later, "also signs until 2026-11-26 11:30 UTC") {
		t.Fatalf("the webhook page after the rotation:\n%s", later)
	}
	now = now.Add(time.Hour)
	if later := getAs(d, "a", "/app/webhooks/h1").Body.String(); strings.Contains(later, "also signs until") {
		t.Fatal("the page speaks of an old secret whose overlap ended")
	}

	// No choice sent: the service's default.
	if got := postAs(d, "a", "/app/webhooks/h1/rotate", ""); got.Code != 200 || f.overlaps[1] != nil {
		t.Fatalf("rotate without a choice: %d, overlap %v", got.Code, f.overlaps[1])
	}
	if got := postAs(d, "a", "/app/webhooks/h1/rotate", "overlap=soon"); got.Code != 400 || len(f.overlaps) != 2 ||
		!strings.Contains(got.Body.String(), "overlap must be") || !strings.Contains(got.Body.String(), `method="post" action="/app/webhooks/h1/rotate"`) {
		t.Fatalf("a choice that is not a number: %d, %d rotations\n%s", got.Code, len(f.overlaps), got.Body.String())
	}
	f.err = core.Errorf(core.KindInvalid, "overlap must be 0 to 7 days (604800 seconds)")
	if got := postAs(d, "a", "/app/webhooks/h1/rotate", "overlap=999999"); got.Code != 400 ||
		!strings.Contains(got.Body.String(), "overlap must be 0 to 7 days") || strings.Contains(got.Body.String(), "whsec_") {
		t.Fatalf("a refused choice: %d\n%s", got.Code, got.Body.String())
	}
	f.err = nil
	if got := postAs(d, "a", "/app/webhooks/h2/rotate", "overlap=0"); got.Code != 404 {
		t.Fatalf("another webhook's rotation: %d", got.Code)
	}
	if got := getAs(d, "a", "/app/webhooks/h2/rotate"); got.Code != 404 {
		t.Fatalf("another webhook's confirmation: %d", got.Code)
	}
}

// The replay form sends its range as UTC times to the service, which an
// empty "to" leaves open; the answer says how many were queued and
// whether more remain. A time that is not one is named beside its field;
// a switched-off webhook's refusal is shown as the problem.
func TestReplayForm(t *testing.T) {
	f := &recoveryWebhooks{hook: core.Webhook{ID: "h1", URL: "https://hooks.example.com/in", Active: true},
		replayed: ports.ReplayResult{Queued: make([]core.Delivery, 3), More: true}}
	now := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	d := recoveryDashboard(t, f, 100, &now)

	page := getAs(d, "a", "/app/webhooks/h1").Body.String()
	wantIn(t, "the webhook page", page, `method="post" action="/app/webhooks/h1/replay"`, `name="from"`, `name="to"`,
		`value="2026-11-25T10:30"`, "UTC")

	got := postAs(d, "a", "/app/webhooks/h1/replay", "from=2026-11-25T08%3A00&to=2026-11-26T09%3A15")
	if got.Code != 200 || len(f.ranges) != 1 || !f.ranges[0][0].Equal(time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)) ||
		!f.ranges[0][1].Equal(time.Date(2026, 11, 26, 9, 15, 0, 0, time.UTC)) {
		t.Fatalf("replay: %d, ranges %v", got.Code, f.ranges)
	}
	wantIn(t, "the replay's answer", got.Body.String(), "3 failed deliveries queued to be sent again", "More remain")

	f.replayed = ports.ReplayResult{}
	got = postAs(d, "a", "/app/webhooks/h1/replay", "from=2026-11-25T08%3A00%3A30&to=")
	if got.Code != 200 || !f.ranges[1][0].Equal(time.Date(2026, 11, 25, 8, 0, 30, 0, time.UTC)) || !f.ranges[1][1].IsZero() {
		t.Fatalf("replay up to now: %d, ranges %v", got.Code, f.ranges)
	}
	wantIn(t, "an empty replay's answer", got.Body.String(), "No failed deliveries in that range")

	got = postAs(d, "a", "/app/webhooks/h1/replay", "from=yesterday&to=")
	if got.Code != 400 || len(f.ranges) != 2 {
		t.Fatalf("a from that is not a time: %d, %d replays", got.Code, len(f.ranges))
	}
	wantIn(t, "a refused range", got.Body.String(), `id="e-from"`, "from must be a date and time", `value="yesterday"`)

	f.err = core.Errorf(core.KindConflict, "the webhook is switched off: switch it on first, then replay")
	got = postAs(d, "a", "/app/webhooks/h1/replay", "from=2026-11-25T08%3A00")
	if got.Code != 409 {
		t.Fatalf("a replay of a switched-off webhook: %d", got.Code)
	}
	wantIn(t, "the refusal", got.Body.String(), "switch it on first", `role="alert"`)
}

// Rotations and replays count against the owner's dashboard write limit
// like every other change.
func TestRotateAndReplayAreLimited(t *testing.T) {
	hooks := &countingWebhooks{}
	now := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	d := recoveryDashboard(t, hooks, 2, &now)
	codes := []int{
		postAs(d, "a", "/app/webhooks/h1/rotate", "overlap=0").Code,
		postAs(d, "a", "/app/webhooks/h1/replay", "from=2026-11-25T08%3A00").Code,
		postAs(d, "a", "/app/webhooks/h1/replay", "from=2026-11-25T08%3A00").Code,
		postAs(d, "a", "/app/webhooks/h1/rotate", "overlap=0").Code,
	}
	if codes[2] != http.StatusTooManyRequests || codes[3] != http.StatusTooManyRequests || hooks.redos != 2 {
		t.Fatalf("answers %v with %d carried out under a limit of 2", codes, hooks.redos)
	}
}
