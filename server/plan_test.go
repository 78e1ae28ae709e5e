package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/fx"
)

// On the Free plan (no webhooks per person, the default) every webhook
// and channel route answers 403 plan_limit, whatever its body holds: a
// Free owner is not told to mend a body only to be refused once it is
// right.
func TestFreePlanRefusesWebhookRoutesBeforeTheirBody(t *testing.T) {
	cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": "sqlite://:memory:", "EARSHOT_ADDR": "127.0.0.1:0"})
	var out strings.Builder
	var root http.Handler
	a := Serve(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), &out, fx.Populate(&root))
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	key := regexp.MustCompile(`svc_api_\S+`).FindString(out.String())
	if key == "" {
		t.Fatalf("no bootstrap key in %q", out.String())
	}
	for _, c := range [][3]string{
		{"POST", "/api/v1/webhooks", `{"url":1}`},
		{"POST", "/api/v1/webhooks", `nope`},
		{"PATCH", "/api/v1/webhooks/x", `{"bogus":1}`},
		{"POST", "/api/v1/webhooks/x/replay", `{"from":"yesterday"}`},
		{"POST", "/api/v1/channels", `{"kind":"carrier pigeon"}`},
		{"PATCH", "/api/v1/channels/x", `[`},
		{"GET", "/api/v1/webhooks", ``},
	} {
		req := httptest.NewRequest(c[0], c[1], strings.NewReader(c[2]))
		req.Header.Set("Authorization", "Bearer "+key)
		rec := httptest.NewRecorder()
		root.ServeHTTP(rec, req)
		if rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), `"plan_limit"`) {
			t.Errorf("%s %s %s: %d %s, want 403 plan_limit", c[0], c[1], c[2], rec.Code, rec.Body)
		}
	}
}
