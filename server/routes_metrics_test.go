package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.uber.org/fx"

	"github.com/earshothq/earshot/adapters/dashboard"
	"github.com/earshothq/earshot/adapters/httpapi"
)

// Every route the server serves has its own label in the request
// metrics: one request to each route of every router's own list (the
// API's, the helper's, the dashboard's, the server's own) leaves no
// series labelled route="other", and each route's path is a label.
func TestEveryRouteHasItsMetricsLabel(t *testing.T) {
	cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": "sqlite://:memory:", "EARSHOT_ADDR": "127.0.0.1:0", "EARSHOT_BOOTSTRAP": "false"})
	var (
		root   http.Handler
		api    *httpapi.API
		helper *httpapi.Helper
		dash   *dashboard.Dashboard
	)
	a := Serve(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard, fx.Populate(&root, &api, &helper, &dash))
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())

	patterns := slices.Concat(api.Patterns(), helper.Paths(), dash.Patterns(), []string{"GET /metrics", "GET /healthz", "GET /readyz"})
	wildcard := regexp.MustCompile(`\{[^}]*\}`)
	var want []string
	for _, p := range patterns {
		method, path, ok := strings.Cut(p, " ")
		if !ok {
			method, path = http.MethodGet, p
		}
		if !strings.HasSuffix(path, "/") { // a subtree's own path is a more specific route's
			want = append(want, path)
		}
		target := wildcard.ReplaceAllStringFunc(path, func(w string) string {
			switch {
			case w == "{$}":
				return ""
			case strings.HasSuffix(w, "...}"):
				return "a/b"
			}
			return "x1"
		})
		root.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, target, nil))
	}

	slices.Sort(want)
	want = slices.Compact(want)
	rec := httptest.NewRecorder()
	root.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	var labels []string
	for _, m := range regexp.MustCompile(`earshot_http_requests_total\{[^}]*route="([^"]*)"`).FindAllStringSubmatch(rec.Body.String(), -1) {
		labels = append(labels, m[1])
	}
	if slices.Contains(labels, "other") {
		t.Errorf("a served route is counted as route=\"other\"; labels: %q", labels)
	}
	for _, w := range want {
		if !slices.Contains(labels, w) {
			t.Errorf("no series labelled route=%q", w)
		}
	}
}
