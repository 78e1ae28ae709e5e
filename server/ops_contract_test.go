package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/fx"

	"github.com/earshothq/earshot/adapters/gormstore"
)

// serveForTest starts `earshot serve`'s application on an in-memory
// database and returns its root handler, with what else populate asks.
func serveForTest(t *testing.T, populate ...any) http.Handler {
	t.Helper()
	cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": "sqlite://:memory:", "EARSHOT_ADDR": "127.0.0.1:0",
		"EARSHOT_BOOTSTRAP": "false", "EARSHOT_SECRET_KEY": strings.Repeat("k", 32)})
	var root http.Handler
	a := Serve(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard, fx.Populate(append([]any{&root}, populate...)...))
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	return root
}

// Whatever clients send (paths no route serves, ids and tokens in paths,
// methods of their own, in any case), the request metrics' labels come
// from closed sets: none carries what a client wrote, and a few hundred
// different requests add no more series than a handful.
func TestRequestMetricsLabelsStayBounded(t *testing.T) {
	root := serveForTest(t)
	const mark = "zqx"
	for i := range 300 {
		tok := fmt.Sprintf("%s%d", mark, i)
		for _, path := range []string{"/" + tok, "/api/v1/keywords/" + tok, "/api/v1/" + tok, "/app/" + tok, "/app/login/" + tok,
			"/ingest/" + tok, "/metrics/" + tok, "/healthz?" + tok} {
			method := []string{"GET", "POST", "get", "M" + tok, "PROPFIND"}[i%5]
			req := httptest.NewRequest("GET", path, nil)
			req.Method = method
			req.RemoteAddr = fmt.Sprintf("192.0.2.%d:1234", i%250)
			root.ServeHTTP(httptest.NewRecorder(), req)
		}
	}
	rec := httptest.NewRecorder()
	root.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	series := regexp.MustCompile(`(?m)^earshot_http_requests_total\{.*\}`).FindAllString(body, -1)
	if len(series) == 0 {
		t.Fatal("no request series")
	}
	for _, s := range series {
		if strings.Contains(s, mark) {
			t.Errorf("a label carries what a client wrote: %s", s)
		}
	}
	if strings.Contains(body, mark) {
		t.Error("the metrics carry what a client wrote")
	}
	// Eight kinds of path, five methods (three of them "other") and
	// their few statuses: far below one series per request.
	if len(series) > 60 {
		t.Errorf("%d series after 2,400 different requests:\n%s", len(series), strings.Join(series, "\n"))
	}
}

// GET /healthz says the process is up and GET /readyz whether the
// database (and the bus) can be reached: with the database gone, the
// first still answers 200 and the second 503.
func TestReadyzFollowsTheDatabase(t *testing.T) {
	var db *gormstore.DB
	root := serveForTest(t, &db)
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		root.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get("/readyz"); code != 200 || !strings.Contains(body, `"ready"`) {
		t.Fatalf("/readyz: %d %s", code, body)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if code, body := get("/readyz"); code != 503 || !strings.Contains(body, "database unreachable") {
		t.Errorf("/readyz without the database: %d %s, want 503", code, body)
	}
	if code, body := get("/healthz"); code != 200 || !strings.Contains(body, `"ok"`) {
		t.Errorf("/healthz without the database: %d %s, want 200", code, body)
	}
}
