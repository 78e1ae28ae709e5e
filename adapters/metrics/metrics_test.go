package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRoute(t *testing.T) {
	for path, want := range map[string]string{
		"/api/v1/keywords/0196abc":                "/api/v1/keywords/{id}",
		"/api/v1/matches":                         "/api/v1/matches",
		"/api/v1/webhooks/w1/deliveries/d1/retry": "/api/v1/webhooks/{id}/deliveries/{id}/retry",
		"/ingest":              "/ingest",
		"/wp-admin/setup.php":  "other",
		"/api/v1/keywords/a/b": "other",
	} {
		if got := Route(path); got != want {
			t.Errorf("Route(%q) = %q, want %q", path, got, want)
		}
	}
}

func TestMiddlewareAndCounters(t *testing.T) {
	r := New()
	r.Count("posts_ingested", 3)
	r.Count("posts_ingested", 0)
	r.Gauge("earshot_test_depth", "a test gauge", func() float64 { return 7 })
	h := r.Middleware(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if strings.HasSuffix(req.URL.Path, "nope") {
			w.WriteHeader(404)
		}
		w.Write([]byte("x"))
	}))
	for _, p := range []string{"/api/v1/keywords/k1", "/api/v1/keywords/k2", "/api/v1/keywords/nope", "/random"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", p, nil))
	}
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`earshot_http_requests_total{method="GET",route="/api/v1/keywords/{id}",status="200"} 2`,
		`earshot_http_requests_total{method="GET",route="/api/v1/keywords/{id}",status="404"} 1`,
		`earshot_http_requests_total{method="GET",route="other",status="200"} 1`,
		`earshot_events_total{event="posts_ingested"} 3`,
		`earshot_test_depth 7`,
		`earshot_http_request_duration_seconds_bucket`,
		`go_goroutines`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestRedditSources(t *testing.T) {
	r := New()
	r.CountRead("feed", true)
	r.CountRead("feed", true)
	r.CountRead("json", false)
	r.CountRead("/r/anything-a-caller-sends", true) // never a label of its own
	r.SetRemaining("oauth", 97)
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body := rec.Body.String()
	for _, want := range []string{
		`earshot_reddit_reads_total{result="ok",source="feed"} 2`,
		`earshot_reddit_reads_total{result="failed",source="json"} 1`,
		`earshot_reddit_reads_total{result="ok",source="other"} 1`,
		`earshot_reddit_ratelimit_remaining{source="oauth"} 97`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if strings.Contains(body, "anything-a-caller-sends") {
		t.Error("an unknown source became a label")
	}
}
