package httpapi

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/earshothq/earshot/core/health"
)

// A helper path asked with a method it does not serve answers in the
// documented error body, as a wrong method on /api/v1 does (400
// invalid_request), not in the mux's plain text; the routes it does
// serve are unchanged.
func TestHelperWrongMethod(t *testing.T) {
	h := NewHelper(HelperConfig{}, helperKeys, &fakeIngest{}, &fakeSessions{})
	h.HandleAccountStatus(reportFunc(func(_ context.Context, _ string, s health.Signal) (health.Status, error) {
		return health.StatusOf("acc-1", s.Platform, true, health.Record{}), nil
	}))
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	for _, call := range [][2]string{{"GET", "/ingest"}, {"POST", "/phrases"}, {"DELETE", "/session"}, {"POST", "/proxy"},
		{"GET", "/account-status"}} {
		resp, out := helperCall(t, srv, call[0], call[1], "svc_ingest_one", "")
		e, _ := out["error"].(map[string]any)
		if resp.StatusCode != 400 || e["code"] != "invalid_request" {
			t.Fatalf("%s %s: %d %v", call[0], call[1], resp.StatusCode, out)
		}
	}
	if resp, out := helperCall(t, srv, "POST", "/ingest", "svc_ingest_one", oneBatch); resp.StatusCode != 200 {
		t.Fatalf("POST /ingest: %d %v", resp.StatusCode, out)
	}
	if resp, out := helperCall(t, srv, "POST", "/account-status", "svc_ingest_one", `{"platform":"x","status":200}`); resp.StatusCode != 200 {
		t.Fatalf("POST /account-status: %d %v", resp.StatusCode, out)
	}
}
