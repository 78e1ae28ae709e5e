package server

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.uber.org/fx"
)

// Every answer under /api/v1/, and at /api/v1 itself, is the API's: a path that is not in its
// clean form (a doubled slash from a base address ending in /, a dot
// segment) gets the documented JSON error with the rate headers, not
// net/http's redirect, which is HTML, carries no rate headers and is
// counted against no quota.
func TestUncleanAPIPathsAnswerJSON(t *testing.T) {
	cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": "sqlite://:memory:", "EARSHOT_ADDR": "127.0.0.1:0", "EARSHOT_BOOTSTRAP": "false"})
	var root http.Handler
	a := Serve(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard, fx.Populate(&root))
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	for _, target := range []string{"/api/v1", "/api/v1//me", "/api/v1/./me", "/api/v1/keywords/../me", "/api/v1//keywords"} {
		rec := httptest.NewRecorder()
		root.ServeHTTP(rec, httptest.NewRequest("GET", target, nil))
		var body struct {
			Error struct{ Code string } `json:"error"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 401 || body.Error.Code != "unauthorized" ||
			rec.Header().Get("X-RateLimit-Limit") == "" {
			t.Errorf("GET %s without a key: %d %q (Location %q), want 401 unauthorized in JSON with the rate headers",
				target, rec.Code, rec.Body.String(), rec.Header().Get("Location"))
		}
	}
}
