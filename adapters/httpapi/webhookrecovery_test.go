package httpapi

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

func (f *fakeWebhooks) RotateSecret(_ context.Context, _, id string, overlap *time.Duration) (core.Webhook, string, error) {
	f.gotOverlap, f.gotIDs = overlap, []string{id}
	if f.err != nil {
		return core.Webhook{}, "", f.err
	}
	w := f.created
	w.PreviousSecretUntil = time.UnixMilli(1_700_086_400_000)
	return w, "whsec_rotated", nil
}

func (f *fakeWebhooks) Gate(context.Context) error { return nil }

func (f *fakeWebhooks) Keep(context.Context, string) error { return nil }

func (p probeWebhooks) Gate(context.Context) error { return nil }

func (p probeWebhooks) Keep(context.Context, string) error { return nil }

func (f *fakeWebhooks) Replay(ctx context.Context, _, id string, from, to time.Time, take func(context.Context) error) (ports.ReplayResult, error) {
	f.gotFrom, f.gotTo, f.gotIDs = from, to, []string{id}
	if f.err != nil {
		return f.replayed, f.err
	}
	return f.replayed, take(ctx)
}

func (p probeWebhooks) RotateSecret(_ context.Context, _, id string, _ *time.Duration) (core.Webhook, string, error) {
	return core.Webhook{ID: id}, "whsec_x", p.id(id)
}

func (p probeWebhooks) Replay(ctx context.Context, _, id string, _, _ time.Time, take func(context.Context) error) (ports.ReplayResult, error) {
	if err := p.id(id); err != nil {
		return ports.ReplayResult{}, err
	}
	return ports.ReplayResult{}, take(ctx)
}

// errorCode is the code of an error answer's body.
func errorCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// POST /webhooks/{id}/rotate-secret answers the record with the new
// secret, once, and when the old one stops signing; the overlap is
// optional, in whole seconds, and its bounds are the service's.
func TestRotateSecretRoute(t *testing.T) {
	created := time.UnixMilli(1_700_000_000_000).UTC()
	f := &fakeWebhooks{created: core.Webhook{ID: "w1", URL: "https://hooks.example.com/in", MinScore: 70, Active: true, CreatedAt: created}}
	srv := webhookAPI(t, f)

	status, body := send(t, srv, "POST", "/api/v1/webhooks/w1/rotate-secret", "svc_api_hooks", "")
	want := map[string]any{"id": "w1", "url": "https://hooks.example.com/in", "min_score": 70.0,
		"platforms": []any{"reddit", "x", "facebook"}, "active": true, "disabledReason": nil, "createdAt": 1.7e12,
		"previousSecretExpiresAt": 1.7000864e12, "secret": "whsec_rotated"}
	if status != 200 || !reflect.DeepEqual(body["data"], want) {
		t.Fatalf("rotate without a body: %d %v", status, body)
	}
	if f.gotOverlap != nil || !reflect.DeepEqual(f.gotIDs, []string{"w1"}) {
		t.Fatalf("rotate without a body handed %v, %v; want no overlap: the service's default", f.gotOverlap, f.gotIDs)
	}
	for body, want := range map[string]time.Duration{`{"overlap_seconds":3600}`: time.Hour, `{"overlap_seconds":0}`: 0, ` {} `: -1,
		`{"overlap_seconds":604800}`: 7 * 24 * time.Hour} {
		f.gotOverlap = nil
		if status, out := send(t, srv, "POST", "/api/v1/webhooks/w1/rotate-secret", "svc_api_hooks", body); status != 200 {
			t.Fatalf("rotate %s: %d %v", body, status, out)
		}
		if want < 0 && f.gotOverlap != nil || want >= 0 && (f.gotOverlap == nil || *f.gotOverlap != want) {
			t.Fatalf("rotate %s handed overlap %v, want %v", body, f.gotOverlap, want)
		}
	}
	// Out of bounds reaches the service, which refuses; a count of seconds
	// too large for a duration is past the bound, not wrapped round.
	f.gotOverlap = nil
	send(t, srv, "POST", "/api/v1/webhooks/w1/rotate-secret", "svc_api_hooks", `{"overlap_seconds":99999999999999999}`)
	if f.gotOverlap == nil || *f.gotOverlap <= core.MaxSecretOverlap {
		t.Fatalf("a huge overlap handed %v", f.gotOverlap)
	}
	send(t, srv, "POST", "/api/v1/webhooks/w1/rotate-secret", "svc_api_hooks", `{"overlap_seconds":-5}`)
	if f.gotOverlap == nil || *f.gotOverlap >= 0 {
		t.Fatalf("a negative overlap handed %v", f.gotOverlap)
	}
	for body, code := range map[string]string{
		`{"overlap_seconds":"1h"}`: "invalid_parameter",
		`{"overlap_seconds":1.5}`:  "invalid_parameter",
		`{"overlap":3600}`:         "invalid_parameter",
		`{`:                        "invalid_json",
		`[]`:                       "invalid_json",
	} {
		if status, out := send(t, srv, "POST", "/api/v1/webhooks/w1/rotate-secret", "svc_api_hooks", body); status != 400 || errorCode(out) != code {
			t.Errorf("rotate %s: %d %v, want 400 %s", body, status, out, code)
		}
	}
	f.err = core.Errorf(core.KindInvalid, "overlap must be 0 to 7 days (604800 seconds)")
	if status, out := send(t, srv, "POST", "/api/v1/webhooks/w1/rotate-secret", "svc_api_hooks", `{"overlap_seconds":604801}`); status != 400 ||
		errorCode(out) != "invalid_parameter" || out["error"].(map[string]any)["message"] != "overlap must be 0 to 7 days (604800 seconds)" {
		t.Fatalf("a refused overlap: %d %v", status, out)
	}
	f.err = core.Errorf(core.KindNotFound, "webhook not found")
	if status, out := send(t, srv, "POST", "/api/v1/webhooks/w2/rotate-secret", "svc_api_hooks", ""); status != 404 || errorCode(out) != "not_found" {
		t.Fatalf("rotate of an unknown webhook: %d %v", status, out)
	}
	if status, out := send(t, srv, "POST", "/api/v1/webhooks/w1/rotate-secret", "svc_api_read", ""); status != 403 || errorCode(out) != "forbidden" {
		t.Fatalf("rotate with a key without the webhooks scope: %d %v", status, out)
	}
}

// POST /webhooks/{id}/replay takes from and to as milliseconds since
// 1970 (as the log's createdAt) or RFC 3339, to optional, and answers 202
// with how many were queued, whether more remain, and the new entries.
func TestReplayRoute(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_000).UTC()
	f := &fakeWebhooks{replayed: ports.ReplayResult{More: true, Queued: []core.Delivery{{ID: "r1", WebhookID: "w1", MatchID: "m1",
		Event: core.EventMatchCreated, Trigger: core.TriggerReplay, Status: core.DeliveryQueued, CreatedAt: at, NextAttemptAt: at}}}}
	srv := webhookAPI(t, f)

	status, body := send(t, srv, "POST", "/api/v1/webhooks/w1/replay", "svc_api_hooks", `{"from":1699999000000,"to":1700000000000.5}`)
	entry := map[string]any{"id": "r1", "event": "match.created", "trigger": "replay", "status": "queued", "tries": 0.0,
		"responseStatus": nil, "error": nil, "createdAt": 1.7e12, "lastAttemptAt": nil, "nextAttemptAt": 1.7e12}
	if status != 202 || !reflect.DeepEqual(body["data"], map[string]any{"queued": 1.0, "more": true, "deliveries": []any{entry}}) {
		t.Fatalf("replay: %d %v", status, body)
	}
	if !f.gotFrom.Equal(time.UnixMilli(1_699_999_000_000)) || !f.gotTo.Equal(time.UnixMicro(1_700_000_000_000_500)) || f.gotIDs[0] != "w1" {
		t.Fatalf("replay handed %v to %v for %v", f.gotFrom, f.gotTo, f.gotIDs)
	}
	f.replayed = ports.ReplayResult{}
	status, body = send(t, srv, "POST", "/api/v1/webhooks/w1/replay", "svc_api_hooks", `{"from":"2026-11-26T10:00:00+01:00","to":null}`)
	if status != 202 || !reflect.DeepEqual(body["data"], map[string]any{"queued": 0.0, "more": false, "deliveries": []any{}}) {
		t.Fatalf("a replay that found nothing: %d %v", status, body)
	}
	if !f.gotFrom.Equal(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)) || !f.gotTo.IsZero() {
		t.Fatalf("replay handed %v to %v; want the RFC 3339 time and no end", f.gotFrom, f.gotTo)
	}
	for body, code := range map[string]string{
		`{"from":"yesterday"}`: "invalid_parameter",
		`{"from":-1}`:          "invalid_parameter",
		`{"from":1e300}`:       "invalid_parameter",
		`{"from":true}`:        "invalid_parameter",
		`{"from":1,"to":[]}`:   "invalid_parameter",
		`{"from":1,"until":2}`: "invalid_parameter",
		``:                     "invalid_json",
		`{"from":`:             "invalid_json",
	} {
		if status, out := send(t, srv, "POST", "/api/v1/webhooks/w1/replay", "svc_api_hooks", body); status != 400 || errorCode(out) != code {
			t.Errorf("replay %q: %d %v, want 400 %s", body, status, out, code)
		}
	}
	f.err = core.Errorf(core.KindConflict, "the webhook is switched off: switch it on first, then replay")
	if status, out := send(t, srv, "POST", "/api/v1/webhooks/w1/replay", "svc_api_hooks", `{"from":1}`); status != 409 || errorCode(out) != "conflict" ||
		out["error"].(map[string]any)["message"] != "the webhook is switched off: switch it on first, then replay" {
		t.Fatalf("a replay of a switched-off webhook: %d %v", status, out)
	}
	f.err = core.Errorf(core.KindInvalid, "from must be before to")
	if status, out := send(t, srv, "POST", "/api/v1/webhooks/w1/replay", "svc_api_hooks", `{"from":2,"to":1}`); status != 400 || errorCode(out) != "invalid_parameter" {
		t.Fatalf("a backwards range: %d %v", status, out)
	}
	if status, out := send(t, srv, "POST", "/api/v1/webhooks/w1/replay", "svc_api_read", `{"from":1}`); status != 403 || errorCode(out) != "forbidden" {
		t.Fatalf("replay with a key without the webhooks scope: %d %v", status, out)
	}
}
