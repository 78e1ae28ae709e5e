package httpapi

import (
	"context"
	"net/http"
	"testing"

	"github.com/earshothq/earshot/core/health"
)

// A wrong method on a known path (400 invalid_request, as decided in
// docs/decisions.md) names the methods the path takes in Allow, as
// RFC 9110 has an origin server do when it refuses a method, so a client
// learns what to send without reading the document. OPTIONS, which asks
// exactly that, gets the same header. An unknown path has no Allow.
func TestWrongMethodNamesTheAllowedOnes(t *testing.T) {
	api := New(Config{Logger: quietLog}, Deps{Keys: readKeys, Limiter: unlimited{}})
	h := NewHelper(HelperConfig{}, helperKeys, &fakeIngest{}, &fakeSessions{})
	h.HandleAccountStatus(reportFunc(func(_ context.Context, _ string, s health.Signal) (health.Status, error) {
		return health.StatusOf("acc-1", s.Platform, true, health.Record{}), nil
	}))
	for _, c := range []struct {
		h                 http.Handler
		key, method, path string
		status            int
		allow             string
	}{
		{api, "svc_api_read", "PUT", "/api/v1/keywords", 400, "GET, HEAD, POST"},
		{api, "svc_api_read", "OPTIONS", "/api/v1/keywords", 400, "GET, HEAD, POST"},
		{api, "svc_api_read", "POST", "/api/v1/me", 400, "GET, HEAD"},
		{api, "svc_api_read", "TRACE", "/api/v1/me", 400, "GET, HEAD"},
		{api, "svc_api_read", "PUT", "/api/v1/keywords/p1", 400, "GET, HEAD, PATCH, DELETE"},
		{api, "svc_api_read", "GET", "/api/v1/triage", 400, "POST"},
		{api, "svc_api_read", "PROPFIND", "/api/v1/webhooks/w1", 400, "PATCH, DELETE"},
		{api, "svc_api_read", "GET", "/api/v1/nothing", 404, ""},
		{h, "svc_ingest_one", "GET", "/ingest", 400, "POST"},
		{h, "svc_ingest_one", "POST", "/session", 400, "GET, HEAD, PUT"},
		{h, "svc_ingest_one", "OPTIONS", "/proxy", 400, "GET, HEAD"},
		{h, "svc_ingest_one", "GET", "/account-status", 400, "POST"},
	} {
		rec := respond(c.h, c.method, c.path, "Bearer "+c.key, nil)
		if rec.Code != c.status || rec.Header().Get("Allow") != c.allow {
			t.Errorf("%s %s: %d, Allow %q; want %d, Allow %q", c.method, c.path, rec.Code, rec.Header().Get("Allow"), c.status, c.allow)
		}
	}
}
