package httpapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/app/record"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

type keyOf map[string]core.Key

func (k keyOf) Authenticate(_ context.Context, _ core.KeyKind, secret string) (core.Key, error) {
	if key, ok := k[secret]; ok {
		return key, nil
	}
	return core.Key{}, core.Errorf(core.KindUnauthorized, "unknown key")
}

type unlimited struct{}

func (unlimited) Take(context.Context, string, int) (ports.Quota, error) {
	return ports.Quota{Allowed: true, Limit: 60, Remaining: 59}, nil
}

func (unlimited) Peek(context.Context, string, int) (ports.Quota, error) {
	return ports.Quota{Allowed: true, Limit: 60, Remaining: 60}, nil
}

// fakeWebhooks answers fixed values and records what the transport
// handed it.
type fakeWebhooks struct {
	created   core.Webhook
	delivery  core.Delivery
	gotURL    string
	gotMin    *int
	gotPlats  []string
	gotChange ports.WebhookChange
	gotIDs    []string
	// rotation and replay
	gotOverlap *time.Duration
	gotFrom    time.Time
	gotTo      time.Time
	replayed   ports.ReplayResult
	err        error // what RotateSecret and Replay answer when set
}

func (f *fakeWebhooks) Create(_ context.Context, owner, url string, min *int, platforms []string) (core.Webhook, string, error) {
	f.gotURL, f.gotMin, f.gotPlats = url, min, platforms
	return f.created, "whsec_test", nil
}
func (f *fakeWebhooks) List(context.Context, string) ([]core.Webhook, error) {
	return []core.Webhook{f.created}, nil
}
func (f *fakeWebhooks) Update(_ context.Context, _, id string, ch ports.WebhookChange) (core.Webhook, error) {
	f.gotChange, f.gotIDs = ch, []string{id}
	return f.created, nil
}
func (f *fakeWebhooks) Delete(_ context.Context, _, id string) error {
	if id != f.created.ID {
		return core.Errorf(core.KindNotFound, "webhook not found")
	}
	return nil
}
func (f *fakeWebhooks) Test(ctx context.Context, _, _ string, take func(context.Context) error) (ports.WebhookResult, error) {
	if err := take(ctx); err != nil {
		return ports.WebhookResult{}, err
	}
	return ports.WebhookResult{Status: 502, Error: "http 502", Duration: 1500 * time.Microsecond}, nil
}
func (f *fakeWebhooks) Deliveries(context.Context, string, string) ([]core.Delivery, error) {
	return []core.Delivery{f.delivery}, nil
}
func (f *fakeWebhooks) Retry(ctx context.Context, _, webhookID, deliveryID string, take func(context.Context) error) (core.Delivery, error) {
	f.gotIDs = []string{webhookID, deliveryID}
	if err := take(ctx); err != nil {
		return core.Delivery{}, err
	}
	d := f.delivery
	d.Status, d.Trigger, d.NextAttemptAt = core.DeliveryQueued, core.TriggerManual, time.UnixMilli(1_800_000_000_000)
	return d, nil
}

func webhookAPI(t *testing.T, svc WebhookService) *httptest.Server {
	t.Helper()
	keys := keyOf{
		"svc_api_hooks": {ID: "k1", OwnerID: "o1", Kind: core.APIKey, Scopes: []core.Scope{core.ScopeWebhooks}},
		"svc_api_read":  {ID: "k2", OwnerID: "o1", Kind: core.APIKey},
	}
	api := New(Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps{Keys: keys, Limiter: unlimited{}, Webhooks: svc})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	return srv
}

func send(t *testing.T, srv *httptest.Server, method, path, key, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp.StatusCode, out
}

func TestWebhookRecords(t *testing.T) {
	created := time.UnixMilli(1_700_000_000_000).UTC()
	f := &fakeWebhooks{
		created: core.Webhook{ID: "w1", URL: "https://hooks.example.com/in", MinScore: 70, Active: false,
			DisabledReason: "switched off after 5 failed deliveries in a row; last error: timeout", CreatedAt: created},
		delivery: core.Delivery{ID: "d1", Event: core.EventMatchCreated, Trigger: core.TriggerScheduled, Status: core.DeliveryFailed,
			Tries: 4, Error: "timeout", CreatedAt: created, LastAttemptAt: created.Add(time.Second), NextAttemptAt: created.Add(time.Hour)},
	}
	srv := webhookAPI(t, f)

	status, body := send(t, srv, "POST", "/api/v1/webhooks", "svc_api_hooks", `{"url":"https://hooks.example.com/in","platforms":null}`)
	want := map[string]any{"id": "w1", "url": "https://hooks.example.com/in", "min_score": 70.0,
		"platforms": []any{"reddit", "x", "facebook"}, "active": false,
		"disabledReason": "switched off after 5 failed deliveries in a row; last error: timeout", "createdAt": 1.7e12, "secret": "whsec_test"}
	if status != 201 || !reflect.DeepEqual(body["data"], want) {
		t.Fatalf("create: %d %v", status, body)
	}
	if f.gotURL != "https://hooks.example.com/in" || f.gotMin != nil || f.gotPlats != nil {
		t.Fatalf("create handed %q %v %#v", f.gotURL, f.gotMin, f.gotPlats)
	}
	send(t, srv, "POST", "/api/v1/webhooks", "svc_api_hooks", `{"url":"u","min_score":0,"platforms":[]}`)
	if f.gotMin == nil || *f.gotMin != 0 || f.gotPlats == nil || len(f.gotPlats) != 0 {
		t.Fatalf("an empty list must reach the service as given: %v %#v", f.gotMin, f.gotPlats)
	}

	delete(want, "secret")
	if status, body := send(t, srv, "GET", "/api/v1/webhooks", "svc_api_hooks", ""); status != 200 || !reflect.DeepEqual(body["data"], []any{want}) {
		t.Fatalf("list: %d %v", status, body)
	}
	if status, body := send(t, srv, "PATCH", "/api/v1/webhooks/w1", "svc_api_hooks", `{"active":true,"platforms":["x"]}`); status != 200 || !reflect.DeepEqual(body["data"], want) {
		t.Fatalf("patch: %d %v", status, body)
	}
	if *f.gotChange.Active != true || f.gotChange.MinScore != nil || !reflect.DeepEqual(f.gotChange.Platforms, []string{"x"}) || f.gotIDs[0] != "w1" {
		t.Fatalf("patch handed %+v", f.gotChange)
	}
	if status, body := send(t, srv, "PATCH", "/api/v1/webhooks/w1", "svc_api_hooks", `{"url":"https://other.example.com"}`); status != 400 || body["error"].(map[string]any)["code"] != "invalid_parameter" {
		t.Fatalf("patch of the url: %d %v", status, body)
	}
	if status, body := send(t, srv, "DELETE", "/api/v1/webhooks/w1", "svc_api_hooks", ""); status != 200 || !reflect.DeepEqual(body["data"], map[string]any{"id": "w1", "deleted": true}) {
		t.Fatalf("delete: %d %v", status, body)
	}
	if status, _ := send(t, srv, "DELETE", "/api/v1/webhooks/w2", "svc_api_hooks", ""); status != 404 {
		t.Fatalf("delete of another: %d", status)
	}
	if status, body := send(t, srv, "POST", "/api/v1/webhooks/w1/test", "svc_api_hooks", ""); status != 200 ||
		!reflect.DeepEqual(body["data"], map[string]any{"delivered": false, "responseStatus": 502.0, "error": "http 502", "durationMs": 1.5}) {
		t.Fatalf("test: %d %v", status, body)
	}
	entry := map[string]any{"id": "d1", "event": "match.created", "trigger": "scheduled", "status": "failed", "tries": 4.0,
		"responseStatus": nil, "error": "timeout", "createdAt": 1.7e12, "lastAttemptAt": 1.700000001e12, "nextAttemptAt": nil}
	if status, body := send(t, srv, "GET", "/api/v1/webhooks/w1/deliveries", "svc_api_hooks", ""); status != 200 || !reflect.DeepEqual(body["data"], []any{entry}) {
		t.Fatalf("deliveries: %d %v", status, body)
	}
	entry["status"], entry["trigger"], entry["nextAttemptAt"] = "queued", "manual", 1.8e12
	if status, body := send(t, srv, "POST", "/api/v1/webhooks/w1/deliveries/d1/retry", "svc_api_hooks", ""); status != 202 || !reflect.DeepEqual(body["data"], entry) {
		t.Fatalf("retry: %d %v", status, body)
	}
	if !reflect.DeepEqual(f.gotIDs, []string{"w1", "d1"}) {
		t.Fatalf("retry handed %v", f.gotIDs)
	}
	if status, body := send(t, srv, "GET", "/api/v1/webhooks", "svc_api_read", ""); status != 403 || body["error"].(map[string]any)["code"] != "forbidden" {
		t.Fatalf("a key without the webhooks scope: %d %v", status, body)
	}
}

// An API built without a webhook service answers plan_limit on every
// webhook route.
func TestWebhookRoutesWithoutService(t *testing.T) {
	srv := webhookAPI(t, nil)
	for _, r := range (&API{}).routes() {
		if !strings.HasPrefix(r.path, "/api/v1/webhooks") {
			continue
		}
		path := strings.NewReplacer("{id}", "w1", "{deliveryId}", "d1").Replace(r.path)
		body := map[string]string{"/api/v1/webhooks": `{"url":"https://hooks.example.com"}`, "/api/v1/webhooks/{id}": `{"active":true}`,
			"/api/v1/webhooks/{id}/replay": `{"from":1700000000000}`}[r.path]
		status, out := send(t, srv, r.method, path, "svc_api_hooks", body)
		if status != 403 || out["error"].(map[string]any)["code"] != "plan_limit" {
			t.Errorf("%s %s: %d %v", r.method, path, status, out)
		}
	}
}

// GET /matches/{id} answers with the record a match.created message
// carries, byte for byte: app's messenger writes it with json.Marshal
// (app's TestMatchCreatedCarriesTheRecord).
func TestMatchRecordIsTheWebhookData(t *testing.T) {
	m := core.Match{ID: "m1", Phrase: "acme", Platform: core.X, CreatedAt: time.UnixMicro(1_700_000_000_123_456),
		Score: &core.Score{Value: 91, Intent: core.IntentBuying, Reason: "asks where to buy"},
		Post:  core.Post{Author: "ada", Text: "<b>who sells acme?</b>", URL: "https://x.com/ada/1"}}
	got, err := json.Marshal(record.NewMatch(m))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	if err := encodeResponse(context.Background(), rec, ok(record.NewMatch(m))); err != nil {
		t.Fatal(err)
	}
	var page struct{ Data json.RawMessage }
	if err := json.Unmarshal(rec.Body.Bytes(), &page); err != nil {
		t.Fatal(err)
	}
	if string(got) != string(page.Data) {
		t.Fatalf("rendered %s\nGET /matches/{id} data %s", got, page.Data)
	}
}
