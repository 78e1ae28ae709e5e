package httpapi

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// fakeChannels answers fixed values, or err, and records what the
// transport handed it.
type fakeChannels struct {
	ch        core.Webhook
	delivery  core.Delivery
	err       error
	gotNew    ports.NewChannel
	gotChange ports.ChannelChange
	gotIDs    []string
	gotFrom   time.Time
}

func (f *fakeChannels) Create(_ context.Context, _ string, in ports.NewChannel) (core.Webhook, error) {
	f.gotNew = in
	return f.ch, f.err
}
func (f *fakeChannels) List(context.Context, string) ([]core.Webhook, error) {
	return []core.Webhook{f.ch}, f.err
}
func (f *fakeChannels) Get(_ context.Context, _, id string) (core.Webhook, error) {
	f.gotIDs = []string{id}
	return f.ch, f.err
}
func (f *fakeChannels) Update(_ context.Context, _, id string, ch ports.ChannelChange) (core.Webhook, error) {
	f.gotChange, f.gotIDs = ch, []string{id}
	return f.ch, f.err
}
func (f *fakeChannels) Delete(_ context.Context, _, id string) error {
	f.gotIDs = []string{id}
	return f.err
}
func (f *fakeChannels) Test(ctx context.Context, _, id string, take func(context.Context) error) (ports.WebhookResult, error) {
	f.gotIDs = []string{id}
	if f.err == nil {
		if err := take(ctx); err != nil {
			return ports.WebhookResult{}, err
		}
	}
	return ports.WebhookResult{Status: 410, Error: "slack: the channel was deleted (channel_not_found), http 404", Duration: 2 * time.Millisecond}, f.err
}
func (f *fakeChannels) Deliveries(_ context.Context, _, id string) ([]core.Delivery, error) {
	f.gotIDs = []string{id}
	return []core.Delivery{f.delivery}, f.err
}
func (f *fakeChannels) Retry(ctx context.Context, _, id, deliveryID string, take func(context.Context) error) (core.Delivery, error) {
	f.gotIDs = []string{id, deliveryID}
	if f.err != nil {
		return f.delivery, f.err
	}
	return f.delivery, take(ctx)
}
func (f *fakeChannels) Gate(context.Context) error         { return nil }
func (f *fakeChannels) Keep(context.Context, string) error { return nil }

func (f *fakeChannels) Replay(ctx context.Context, _, id string, from, _ time.Time, take func(context.Context) error) (ports.ReplayResult, error) {
	f.gotIDs, f.gotFrom = []string{id}, from
	if f.err == nil {
		if err := take(ctx); err != nil {
			return ports.ReplayResult{}, err
		}
	}
	return ports.ReplayResult{Queued: []core.Delivery{f.delivery}}, f.err
}

func channelAPI(t *testing.T, svc ChannelService) *httptest.Server {
	t.Helper()
	keys := keyOf{
		"svc_api_hooks": {ID: "k1", OwnerID: "o1", Kind: core.APIKey, Scopes: []core.Scope{core.ScopeWebhooks}},
		"svc_api_read":  {ID: "k2", OwnerID: "o1", Kind: core.APIKey},
	}
	deps := Deps{Keys: keys, Limiter: unlimited{}}
	if svc != nil {
		deps.Channels = svc
	}
	srv := httptest.NewServer(New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, deps))
	t.Cleanup(srv.Close)
	return srv
}

// The channel routes hand the service what the owner sent, chat_id as a
// string or an integer, and answer the channel with its destination
// redacted, hour and zone for a daily digest only.
func TestChannelRecords(t *testing.T) {
	created := time.UnixMilli(1_700_000_000_000).UTC()
	f := &fakeChannels{
		ch: core.Webhook{ID: "c1", Kind: core.ChannelTelegram, URL: "telegram chat -1001234567890 (bot 123456…)", MinScore: 80,
			Platforms: []core.Platform{core.Reddit}, Active: true, ConsecutiveFailures: 2, CreatedAt: created,
			Schedule: core.AlertSchedule{Frequency: core.AlertDaily, Hour: 9}, LastDigestAt: created.Add(time.Hour)},
		delivery: core.Delivery{ID: "d1", Event: core.EventDigest, Trigger: core.TriggerScheduled, Status: core.DeliveryDelivered,
			Tries: 1, ResponseStatus: 200, CreatedAt: created, LastAttemptAt: created},
	}
	srv := channelAPI(t, f)
	status, body := send(t, srv, "POST", "/api/v1/channels", "svc_api_hooks",
		`{"kind":"telegram","token":"123456789:AAH","chat_id":-1001234567890,"min_score":80,"platforms":["reddit"],"frequency":"daily","hour":9,"zone":"UTC"}`)
	want := map[string]any{"id": "c1", "kind": "telegram", "address": "telegram chat -1001234567890 (bot 123456…)", "min_score": 80.0,
		"platforms": []any{"reddit"}, "frequency": "daily", "hour": 9.0, "zone": "UTC", "active": true, "disabledReason": nil,
		"consecutiveFailures": 2.0, "createdAt": 1.7e12, "lastDigestAt": 1.7000036e12}
	if status != 201 || !reflect.DeepEqual(body["data"], want) {
		t.Fatalf("create: %d %v", status, body)
	}
	n := f.gotNew
	if n.Kind != "telegram" || n.Token != "123456789:AAH" || n.ChatID != "-1001234567890" || n.URL != "" || *n.MinScore != 80 ||
		!reflect.DeepEqual(n.Platforms, []string{"reddit"}) || n.Frequency != "daily" || n.Hour != 9 || n.Zone != "UTC" {
		t.Fatalf("create handed %+v", n)
	}
	send(t, srv, "POST", "/api/v1/channels", "svc_api_hooks", `{"kind":"telegram","chat_id":"@earshot_leads"}`)
	if f.gotNew.ChatID != "@earshot_leads" || f.gotNew.MinScore != nil || f.gotNew.Platforms != nil {
		t.Fatalf("create handed %+v", f.gotNew)
	}

	if status, body := send(t, srv, "GET", "/api/v1/channels", "svc_api_hooks", ""); status != 200 || !reflect.DeepEqual(body["data"], []any{want}) {
		t.Fatalf("list: %d %v", status, body)
	}
	if status, body := send(t, srv, "GET", "/api/v1/channels/c1", "svc_api_hooks", ""); status != 200 || !reflect.DeepEqual(body["data"], want) || f.gotIDs[0] != "c1" {
		t.Fatalf("get: %d %v", status, body)
	}
	// At once: no hour, zone or digest period.
	f.ch.Schedule, f.ch.Kind, f.ch.URL = core.AlertSchedule{Frequency: core.AlertAtOnce}, core.ChannelNtfy, "ntfy.sh/…abcd (with access token)"
	want["frequency"], want["hour"], want["zone"], want["lastDigestAt"], want["kind"], want["address"] = "at once", nil, nil, nil, "ntfy", "ntfy.sh/…abcd (with access token)"
	status, body = send(t, srv, "PATCH", "/api/v1/channels/c1", "svc_api_hooks", `{"active":false,"token":"","url":"https://ntfy.sh/x","frequency":"at once","platforms":["x"]}`)
	if status != 200 || !reflect.DeepEqual(body["data"], want) {
		t.Fatalf("patch: %d %v", status, body)
	}
	ch := f.gotChange
	if *ch.Active || *ch.Token != "" || *ch.URL != "https://ntfy.sh/x" || ch.ChatID != nil || ch.MinScore != nil || *ch.Frequency != "at once" ||
		ch.Hour != nil || !reflect.DeepEqual(ch.Platforms, []string{"x"}) {
		t.Fatalf("patch handed %+v", ch)
	}
	if status, body := send(t, srv, "DELETE", "/api/v1/channels/c1", "svc_api_hooks", ""); status != 200 || !reflect.DeepEqual(body["data"], map[string]any{"id": "c1", "deleted": true}) {
		t.Fatalf("delete: %d %v", status, body)
	}
	if status, body := send(t, srv, "POST", "/api/v1/channels/c1/test", "svc_api_hooks", ""); status != 200 ||
		!reflect.DeepEqual(body["data"], map[string]any{"delivered": false, "responseStatus": 410.0, "error": "slack: the channel was deleted (channel_not_found), http 404", "durationMs": 2.0}) {
		t.Fatalf("test: %d %v", status, body)
	}
	entry := map[string]any{"id": "d1", "event": "digest", "trigger": "scheduled", "status": "delivered", "tries": 1.0,
		"responseStatus": 200.0, "error": nil, "createdAt": 1.7e12, "lastAttemptAt": 1.7e12, "nextAttemptAt": nil}
	if status, body := send(t, srv, "GET", "/api/v1/channels/c1/deliveries", "svc_api_hooks", ""); status != 200 || !reflect.DeepEqual(body["data"], []any{entry}) {
		t.Fatalf("deliveries: %d %v", status, body)
	}
	if status, body := send(t, srv, "POST", "/api/v1/channels/c1/deliveries/d1/retry", "svc_api_hooks", ""); status != 202 || !reflect.DeepEqual(body["data"], entry) ||
		!reflect.DeepEqual(f.gotIDs, []string{"c1", "d1"}) {
		t.Fatalf("retry: %d %v", status, body)
	}
	if status, body := send(t, srv, "POST", "/api/v1/channels/c1/replay", "svc_api_hooks", `{"from":"2026-11-26T10:00:00Z"}`); status != 202 ||
		body["data"].(map[string]any)["queued"] != 1.0 || !f.gotFrom.Equal(time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)) {
		t.Fatalf("replay: %d %v", status, body)
	}
	if status, body := send(t, srv, "GET", "/api/v1/channels", "svc_api_read", ""); status != 403 || body["error"].(map[string]any)["code"] != "forbidden" {
		t.Fatalf("a key without the webhooks scope: %d %v", status, body)
	}
}

// Bad input is refused in the documented body, naming the field, before
// the service is asked; the service's refusals pass through as theirs.
func TestChannelInputRefused(t *testing.T) {
	f := &fakeChannels{}
	srv := channelAPI(t, f)
	for _, c := range []struct {
		method, path, body string
		code, words        string
	}{
		{"POST", "/api/v1/channels", `{"kind":"slack","secret":"x"}`, "invalid_parameter", "unknown field secret"},
		{"POST", "/api/v1/channels", `{"kind":"telegram","chat_id":true}`, "invalid_parameter", "chat_id must be a string or an integer"},
		{"POST", "/api/v1/channels", `{"kind":"telegram","chat_id":1.5}`, "invalid_parameter", "chat_id must be a string or an integer"},
		{"POST", "/api/v1/channels", `{"kind":"ntfy","hour":"nine"}`, "invalid_parameter", "hour must be of type integer"},
		{"POST", "/api/v1/channels", `{"kind":`, "invalid_json", ""},
		{"POST", "/api/v1/channels", `[]`, "invalid_json", ""},
		{"PATCH", "/api/v1/channels/c1", `{"kind":"slack"}`, "invalid_parameter", "unknown field kind"},
	} {
		f.gotNew, f.gotChange = ports.NewChannel{}, ports.ChannelChange{}
		status, out := send(t, srv, c.method, c.path, "svc_api_hooks", c.body)
		e, _ := out["error"].(map[string]any)
		if status != 400 || e["code"] != c.code || !strings.Contains(e["message"].(string), c.words) {
			t.Errorf("%s %s %s: %d %v", c.method, c.path, c.body, status, out)
		}
		if f.gotNew.Kind != "" || f.gotChange.Active != nil {
			t.Errorf("%s reached the service", c.body)
		}
	}
	for _, c := range []struct {
		err    error
		status int
		code   string
	}{
		{core.Errorf(core.KindInvalid, "token must be a Telegram bot token as @BotFather gives it"), 400, "invalid_parameter"},
		{core.Errorf(core.KindNotFound, "channel not found"), 404, "not_found"},
		{core.Errorf(core.KindPlanLimit, "the plan allows 1 webhook"), 403, "plan_limit"},
	} {
		f.err = c.err
		status, out := send(t, srv, "POST", "/api/v1/channels", "svc_api_hooks", `{"kind":"telegram"}`)
		e, _ := out["error"].(map[string]any)
		if status != c.status || e["code"] != c.code || e["message"] != core.Message(c.err) {
			t.Errorf("%v: %d %v", c.err, status, out)
		}
	}
}

// An API built without a channel service answers plan_limit on every
// channel route.
func TestChannelRoutesWithoutService(t *testing.T) {
	srv := channelAPI(t, nil)
	n := 0
	for _, r := range (&API{}).routes() {
		if !strings.HasPrefix(r.path, "/api/v1/channels") {
			continue
		}
		n++
		path := strings.NewReplacer("{id}", "c1", "{deliveryId}", "d1").Replace(r.path)
		body := map[string]string{"/api/v1/channels": `{"kind":"slack"}`, "/api/v1/channels/{id}": `{"active":true}`,
			"/api/v1/channels/{id}/replay": `{"from":1700000000000}`}[r.path]
		if r.method == "GET" || r.method == "DELETE" {
			body = ""
		}
		status, out := send(t, srv, r.method, path, "svc_api_hooks", body)
		if status != 403 || out["error"].(map[string]any)["code"] != "plan_limit" {
			t.Errorf("%s %s: %d %v", r.method, path, status, out)
		}
	}
	if n != 9 {
		t.Fatalf("%d channel routes, want 9", n)
	}
}

// An hour or a zone sent with a frequency other than daily would be
// dropped while the answer says the change was made, so the transport
// refuses it; without a frequency the service decides, from the
// channel's own.
func TestChannelHourAndZoneOnlyWhenDaily(t *testing.T) {
	f := &fakeChannels{}
	srv := channelAPI(t, f)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/v1/channels", `{"kind":"ntfy","url":"https://ntfy.sh/topic","hour":9}`},
		{"POST", "/api/v1/channels", `{"kind":"ntfy","url":"https://ntfy.sh/topic","frequency":"hourly","zone":"Mars/Base"}`},
		{"POST", "/api/v1/channels", `{"kind":"ntfy","url":"https://ntfy.sh/topic","frequency":"at once","hour":0}`},
		{"PATCH", "/api/v1/channels/c1", `{"frequency":"hourly","hour":9}`},
		{"PATCH", "/api/v1/channels/c1", `{"frequency":"at once","zone":"Europe/Berlin"}`},
	} {
		f.gotNew, f.gotChange = ports.NewChannel{}, ports.ChannelChange{}
		status, out := send(t, srv, c.method, c.path, "svc_api_hooks", c.body)
		e, _ := out["error"].(map[string]any)
		if status != 400 || e["code"] != "invalid_parameter" || !strings.Contains(e["message"].(string), "daily") {
			t.Errorf("%s %s: %d %v", c.method, c.body, status, out)
		}
		if f.gotNew.Kind != "" || f.gotChange.Frequency != nil {
			t.Errorf("%s reached the service", c.body)
		}
	}
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/v1/channels", `{"kind":"ntfy","url":"https://ntfy.sh/topic","frequency":"daily","hour":9,"zone":"Europe/Berlin"}`},
		{"POST", "/api/v1/channels", `{"kind":"ntfy","url":"https://ntfy.sh/topic","frequency":"hourly","hour":null,"zone":null}`},
		{"PATCH", "/api/v1/channels/c1", `{"frequency":" daily ","hour":9}`},
		{"PATCH", "/api/v1/channels/c1", `{"hour":9}`},
	} {
		if status, out := send(t, srv, c.method, c.path, "svc_api_hooks", c.body); status >= 300 {
			t.Errorf("%s %s: %d %v", c.method, c.body, status, out)
		}
	}
}
