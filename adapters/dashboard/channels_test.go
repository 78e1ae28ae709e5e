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

// fakeChannels has one Slack channel, c1, beside the webhook of
// countingWebhooks, and records what it is asked; err, when set, is the
// answer of Create and Update.
type fakeChannels struct {
	mu      sync.Mutex
	ch      core.Webhook
	log     []core.Delivery
	created []ports.NewChannel
	changes []ports.ChannelChange
	tests   int
	err     error
}

func (f *fakeChannels) Create(_ context.Context, owner string, in ports.NewChannel) (core.Webhook, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created = append(f.created, in)
	if f.err != nil {
		return core.Webhook{}, f.err
	}
	f.ch = core.Webhook{ID: "c2", OwnerID: owner, Kind: core.ChannelKind(in.Kind), URL: "ntfy.sh/…abcd", Active: true}
	return f.ch, nil // the one Get finds from now on, as the store would
}
func (f *fakeChannels) All(context.Context, string) ([]core.Webhook, error) {
	return []core.Webhook{{ID: "h1", URL: "https://hooks.example.com/in", MinScore: 70, Active: true}, f.ch}, nil
}
func (f *fakeChannels) Get(_ context.Context, _, id string) (core.Webhook, error) {
	if id != f.ch.ID {
		return core.Webhook{}, core.Errorf(core.KindNotFound, "channel not found")
	}
	return f.ch, nil
}
func (f *fakeChannels) Update(_ context.Context, _, id string, ch ports.ChannelChange) (core.Webhook, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.changes = append(f.changes, ch)
	return f.ch, f.err
}
func (f *fakeChannels) Deliveries(context.Context, string, string) ([]core.Delivery, error) {
	return f.log, nil
}
func (f *fakeChannels) Test(ctx context.Context, _, _ string, take func(context.Context) error) (ports.WebhookResult, error) {
	if err := take(ctx); err != nil {
		return ports.WebhookResult{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tests++
	return ports.WebhookResult{Status: 410, Error: "slack: the channel was deleted (channel_not_found), http 404"}, nil
}
func (f *fakeChannels) Retry(ctx context.Context, _, _, _ string, take func(context.Context) error) (core.Delivery, error) {
	return core.Delivery{}, take(ctx)
}
func (f *fakeChannels) Replay(ctx context.Context, _, _ string, _, _ time.Time, take func(context.Context) error) (ports.ReplayResult, error) {
	return ports.ReplayResult{}, take(ctx)
}

func channelDashboard(t *testing.T, chans *fakeChannels, rate int, now time.Time) *Dashboard {
	t.Helper()
	clock := func() time.Time { return now }
	d, err := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), RateLimit: rate, Now: clock},
		Deps{Sessions: ownerSessions{owners: map[string]string{"a" + strings.Repeat("t", 42): "a"}},
			Inbox: fakeInbox{}, Matches: fakeMatches{}, Phrases: fakePhrases{}, Webhooks: &countingWebhooks{}, Channels: chans,
			Limiter: ratelimit.NewMemory(clock)})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// The page lists webhooks and channels together, each with its kind,
// address, health and last deliveries, everything escaped; it offers a
// form per service with a line on where to find what it asks.
func TestWebhooksAndChannelsPage(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	f := &fakeChannels{
		ch: core.Webhook{ID: "c1", Kind: core.ChannelSlack, URL: "hooks.slack.com/services/T0…/B0…/…abcd", MinScore: 80,
			Active: false, DisabledReason: "switched off at once: slack: <b>gone</b> (no_service), http 404", ConsecutiveFailures: 3,
			Schedule: core.AlertSchedule{Frequency: core.AlertDaily, Hour: 9, Zone: "Europe/Berlin"}},
		log: []core.Delivery{{ID: "d1", Event: core.EventDigest, Status: core.DeliveryFailed, Error: "slack: <i>x</i>", CreatedAt: now.Add(-time.Hour)}},
	}
	d := channelDashboard(t, f, 100, now)
	page := getAs(d, "a", "/app/webhooks")
	if page.Code != 200 {
		t.Fatalf("page: %d", page.Code)
	}
	body := page.Body.String()
	wantIn(t, "the list", body, "<h1>Webhooks and channels</h1>", `href="/app/webhooks/h1"`, `href="/app/channels/c1"`,
		"hooks.slack.com/services/T0…/B0…/…abcd", `<td data-label="Kind">Slack</td>`, `<td data-label="Kind">Webhook</td>`,
		"&lt;b&gt;gone&lt;/b&gt;", "3 failed in a row", "daily at 09:00 Europe/Berlin", `title="slack: &lt;i&gt;x&lt;/i&gt;"`, "failed 1 h ago",
		`action="/app/channels/c1/test"`)
	if strings.Contains(body, "<b>gone</b>") || strings.Contains(body, "<i>x</i>") {
		t.Fatal("a reason is shown unescaped")
	}
	wantIn(t, "the forms", body, `id="add-slack"`, `id="add-discord"`, `id="add-telegram"`, `id="add-ntfy"`,
		"Incoming Webhooks", "Integrations, Webhooks", "@BotFather", "getUpdates", "access token", `name="frequency"`, `id="telegram-chat"`)
}

// A refused create comes back in its own form with the service's words
// beside the field, and never with the token typed; an accepted one
// names the channel.
func TestChannelCreateForm(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	f := &fakeChannels{ch: core.Webhook{ID: "c1", Kind: core.ChannelSlack, URL: "hooks.slack.com/…", Active: true}}
	d := channelDashboard(t, f, 100, now)
	f.err = core.Errorf(core.KindInvalid, "chat_id must be a chat's number, such as -1001234567890, or a public channel's @username")
	w := postAs(d, "a", "/app/channels", "kind=telegram&token=123456789%3AAAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw&chat_id=me&min_score=60&platform=x&frequency=daily&hour=7&zone=UTC")
	if w.Code != 400 {
		t.Fatalf("refused create: %d", w.Code)
	}
	body := w.Body.String()
	wantIn(t, "the refusal", body, `id="telegram-e-chat"`, "chat_id must be a chat&#39;s number", `<details class="chan" id="add-telegram" open>`,
		`value="me"`, "The channel was not added")
	if strings.Contains(body, "AAHdqTcvCH1v") {
		t.Fatal("the token is shown back")
	}
	in := f.created[0]
	if in.Kind != "telegram" || in.ChatID != "me" || *in.MinScore != 60 || in.Frequency != "daily" || in.Hour != 7 || len(in.Platforms) != 1 {
		t.Fatalf("handed %+v", in)
	}
	if w := postAs(d, "a", "/app/channels", "kind=ntfy&url=https%3A%2F%2Fntfy.sh%2Ft&hour=nine"); w.Code != 400 || !strings.Contains(w.Body.String(), `id="ntfy-e-hour"`) {
		t.Fatalf("an hour that is no number: %d", w.Code)
	}
	f.err = nil
	// Added, the browser is sent back to the list, so a reload of the
	// answer adds nothing twice; the list names the channel from the store.
	w = postAs(d, "a", "/app/channels", "kind=ntfy&url=https%3A%2F%2Fntfy.sh%2Ft")
	if at := w.Header().Get("Location"); w.Code != http.StatusSeeOther || at != "/app/webhooks?added=c2" {
		t.Fatalf("create: %d %q\n%s", w.Code, at, w.Body.String())
	}
	if page := getAs(d, "a", "/app/webhooks?added=c2"); page.Code != 200 || !strings.Contains(page.Body.String(), "ntfy channel added: ntfy.sh/…abcd") {
		t.Fatalf("the list after the add: %d\n%s", page.Code, page.Body.String())
	}
	if page := getAs(d, "a", "/app/webhooks?added=c9"); strings.Contains(page.Body.String(), "channel added") {
		t.Fatal("an address naming no channel of the owner's says one was added")
	}
	if in := f.created[len(f.created)-1]; in.Platforms == nil || len(in.Platforms) != 0 || in.MinScore != nil {
		t.Fatalf("no platform ticked must reach the service as none: %+v", in)
	}
}

// The channel's page shows its health, settings and destination form;
// its test shows the service's answer; a change of destination names
// only the parts given; writes are refused across origins and counted
// against the owner's limit as a webhook's test is.
func TestChannelPage(t *testing.T) {
	now := time.Date(2026, 11, 26, 10, 30, 0, 0, time.UTC)
	f := &fakeChannels{ch: core.Webhook{ID: "c1", Kind: core.ChannelNtfy, URL: "ntfy.sh/…abcd (with access token)", MinScore: 70, Active: true,
		Schedule: core.AlertSchedule{Frequency: core.AlertHourly}, LastDigestAt: now.Add(-20 * time.Minute)}}
	d := channelDashboard(t, f, 4, now)
	page := getAs(d, "a", "/app/channels/c1")
	if page.Code != 200 {
		t.Fatalf("page: %d", page.Code)
	}
	wantIn(t, "the channel page", page.Body.String(), "ntfy channel", "ntfy.sh/…abcd (with access token)", "Sends hourly",
		"started 20 min ago", `<option value="hourly" selected>`, `name="no_token"`, `id="ntfy-url"`, `action="/app/channels/c1/replay"`)
	if w := getAs(d, "a", "/app/channels/c9"); w.Code != 404 {
		t.Fatalf("another channel: %d", w.Code)
	}
	// The switch-off notification links to /app/webhooks/{id} for both.
	if w := getAs(d, "a", "/app/webhooks/c1"); w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/app/channels/c1" {
		t.Fatalf("a channel's id on the webhook page: %d %q", w.Code, w.Header().Get("Location"))
	}

	w := postAs(d, "a", "/app/channels/c1/test", "")
	if w.Code != http.StatusSeeOther || w.Header().Get("Location") != "/app/channels/c1" || f.tests != 1 {
		t.Fatalf("test: %d %q, %d tests", w.Code, w.Header().Get("Location"), f.tests)
	}
	wantIn(t, "the test's answer", getWith(d, "a", "/app/channels/c1", w.Result().Cookies()).Body.String(), `id="test-result"`,
		"slack: the channel was deleted (channel_not_found), http 404")

	w = postAs(d, "a", "/app/channels/c1/destination", "no_token=on")
	if w.Code != http.StatusSeeOther || len(f.changes) != 1 || f.changes[0].Token == nil || *f.changes[0].Token != "" || f.changes[0].URL != nil {
		t.Fatalf("dropping the token: %d %+v", w.Code, f.changes)
	}
	w = postAs(d, "a", "/app/channels/c1", "min_score=50&platform=reddit&frequency=daily&hour=8&zone=Europe%2FParis")
	ch := f.changes[len(f.changes)-1]
	if w.Code != http.StatusSeeOther || *ch.MinScore != 50 || *ch.Frequency != "daily" || *ch.Hour != 8 || *ch.Zone != "Europe/Paris" || ch.Platforms[0] != "reddit" {
		t.Fatalf("settings: %d %+v", w.Code, ch)
	}

	// A cross-origin write is refused before it is counted or carried out.
	r := httptest.NewRequest("POST", "/app/channels/c1/test", nil)
	r.Header.Set("Sec-Fetch-Site", "cross-site")
	r.AddCookie(&http.Cookie{Name: cookieName, Value: "a" + strings.Repeat("t", 42)})
	cross := httptest.NewRecorder()
	d.ServeHTTP(cross, r)
	if cross.Code != http.StatusForbidden || f.tests != 1 {
		t.Fatalf("a cross-origin test: %d, %d tests", cross.Code, f.tests)
	}
	// The fourth write of the minute is the last the limit of 4 admits.
	if w := postAs(d, "a", "/app/channels/c1/test", ""); w.Code != http.StatusSeeOther {
		t.Fatalf("the fourth write: %d", w.Code)
	}
	if w := postAs(d, "a", "/app/channels/c1/test", ""); w.Code != http.StatusTooManyRequests || f.tests != 2 {
		t.Fatalf("the fifth write: %d, %d tests", w.Code, f.tests)
	}
}
