package httpapi

import (
	"testing"

	"github.com/earshothq/earshot/core"
)

// A value of the wrong type is refused naming the field and the JSON
// type it takes, in the words of the OpenAPI document: a whole-number
// field says integer (70.5 is a number, so "must be of type number"
// sent the caller the wrong way), and no Go type (*int64) is shown.
func TestTypeErrorNamesTheJSONType(t *testing.T) {
	f := &fakeWebhooks{created: core.Webhook{ID: "w1", URL: "https://hooks.example.com/in", MinScore: 70, Active: true}}
	srv := webhookAPI(t, f)
	for _, c := range []struct{ method, path, body, want string }{
		{"POST", "/api/v1/webhooks", `{"url":"https://hooks.example.com/in","min_score":70.5}`, "min_score must be of type integer"},
		{"POST", "/api/v1/webhooks", `{"url":"https://hooks.example.com/in","min_score":"70"}`, "min_score must be of type integer"},
		{"POST", "/api/v1/webhooks/w1/rotate-secret", `{"overlap_seconds":"1h"}`, "overlap_seconds must be of type integer"},
		{"POST", "/api/v1/webhooks/w1/rotate-secret", `{"overlap_seconds":1.5}`, "overlap_seconds must be of type integer"},
		{"PATCH", "/api/v1/webhooks/w1", `{"active":"yes"}`, "active must be of type boolean"},
		{"PATCH", "/api/v1/webhooks/w1", `{"platforms":"x"}`, "platforms must be of type array of strings"},
		{"POST", "/api/v1/webhooks", `{"url":7}`, "url must be of type string"},
	} {
		status, out := send(t, srv, c.method, c.path, "svc_api_hooks", c.body)
		e, _ := out["error"].(map[string]any)
		if status != 400 || e["code"] != "invalid_parameter" || e["message"] != c.want {
			t.Errorf("%s %s %s: %d %v, want 400 invalid_parameter %q", c.method, c.path, c.body, status, out, c.want)
		}
	}
}
