package httpapi

import (
	"net/http/httptest"
	"testing"
)

// A key without a route's scope is refused 403 forbidden whatever its
// body holds: a body the route would refuse must not answer 400 first,
// which would send the caller to mend a request its key may never make.
func TestScopeBeforeBody(t *testing.T) {
	api := New(Config{Logger: quietLog}, Deps{Keys: readKeys, Limiter: unlimited{}})
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/v1/keywords", `{}`},
		{"POST", "/api/v1/keywords", `not json`},
		{"PATCH", "/api/v1/keywords/p1", `{"status":"sleeping","bogus":1}`},
		{"POST", "/api/v1/webhooks", `{"url":1}`},
		{"PATCH", "/api/v1/webhooks/w1", ``},
		{"POST", "/api/v1/webhooks/w1/replay", `[]`},
		{"POST", "/api/v1/channels", `{"kind":true}`},
	} {
		status, body := send(t, srv, c.method, c.path, "svc_api_read", c.body)
		e, _ := body["error"].(map[string]any)
		if status != 403 || e["code"] != "forbidden" {
			t.Errorf("%s %s %s with a read key: %d %v, want 403 forbidden", c.method, c.path, c.body, status, body)
		}
	}
}
