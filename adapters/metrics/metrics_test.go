package metrics

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// servedRoutes are patterns in the shapes the routers list them (the
// API's, the helper's, the dashboard's).
var servedRoutes = []string{
	"GET /api/v1/me", "GET /api/v1/keywords/{id}", "PATCH /api/v1/keywords/{id}", "GET /api/v1/matches",
	"GET /api/v1/matches/{id}/triage", "POST /api/v1/triage", "POST /api/v1/webhooks/{id}/deliveries/{deliveryId}/retry",
	"/ingest", "GET /healthz", "GET /{$}", "/app/", "GET /app/{$}", "GET /app/events", "GET /app/login/{token}",
	"POST /app/login/link", "GET /app/files/{path...}",
}

func testRoutes(t *testing.T) *Routes {
	t.Helper()
	rs, err := NewRoutes(servedRoutes...)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func TestRoute(t *testing.T) {
	rs := testRoutes(t)
	for path, want := range map[string]string{
		"/api/v1/keywords/0196abc":                "/api/v1/keywords/{id}",
		"/api/v1/matches":                         "/api/v1/matches",
		"/api/v1/matches/m1/triage":               "/api/v1/matches/{id}/triage",
		"/api/v1/triage":                          "/api/v1/triage",
		"/api/v1/webhooks/w1/deliveries/d1/retry": "/api/v1/webhooks/{id}/deliveries/{deliveryId}/retry",
		"/ingest":                 "/ingest",
		"/":                       "/{$}",
		"/app/":                   "/app/{$}",
		"/app/events":             "/app/events",
		"/app/login/link":         "/app/login/link",
		"/app/login/t0k3n":        "/app/login/{token}",
		"/app/files/a/b/c":        "/app/files/{path...}",
		"/app/no/such/page":       "/app/",
		"/app":                    "/app/{$}", // redirected to /app/
		"/wp-admin/setup.php":     "other",
		"/api/v1/keywords/a/b":    "other",
		"/api/v1/matches/m1/nope": "other",
	} {
		if got := rs.Route(path); got != want {
			t.Errorf("Route(%q) = %q, want %q", path, got, want)
		}
	}
}

// Patterns from different routers that net/http could not tell apart
// are an error, not a panic.
func TestRoutesConflict(t *testing.T) {
	if _, err := NewRoutes("GET /a/{x}/b", "POST /a/c/{y}"); err == nil {
		t.Fatal("conflicting patterns accepted")
	}
}

// observed serves next and hands what it answered to r, as the HTTP
// edge's request middleware does.
func observed(r *Registry, routes *Routes, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, req)
		r.RequestObserver(routes)(req.Method, req.URL.Path, rec.Code, time.Millisecond)
	})
}

func TestObserveRequestAndCounters(t *testing.T) {
	r := New()
	r.Count("posts_ingested", 3)
	r.Count("posts_ingested", 0)
	r.Gauge("earshot_test_depth", "a test gauge", func() float64 { return 7 })
	h := observed(r, testRoutes(t), http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
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

// Any client can send any method, so a label copied from it would add a
// series for good per request; the series count must stay fixed whatever
// arrives.
func TestRequestLabelsFromClosedSets(t *testing.T) {
	r := New()
	h := observed(r, testRoutes(t), http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/healthz" {
			w.WriteHeader(799) // net/http lets a handler write it; no HTTP status has it
		}
	}))
	for i := range 200 {
		req := httptest.NewRequest("GET", "/api/v1/me", nil)
		req.Method = strings.Repeat("X", 100) + strconv.Itoa(i)
		h.ServeHTTP(httptest.NewRecorder(), req)
		req = httptest.NewRequest("GET", "/ingest", nil)
		req.Method = "get" // methods are case-sensitive: not GET
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("PATCH", "/api/v1/keywords/k1", nil))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/healthz", nil))

	families, err := r.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var series []string
	for _, f := range families {
		if f.GetName() != "earshot_http_requests_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			series = append(series, strings.Join(labels, ","))
		}
	}
	slices.Sort(series)
	want := []string{
		"method=GET,route=/healthz,status=other",
		"method=PATCH,route=/api/v1/keywords/{id},status=200",
		"method=other,route=/api/v1/me,status=200",
		"method=other,route=/ingest,status=200",
	}
	if !slices.Equal(series, want) {
		t.Errorf("series %q, want %q", series, want)
	}
}

func TestMethod(t *testing.T) {
	for in, want := range map[string]string{
		"GET": "GET", "DELETE": "DELETE", "OPTIONS": "OPTIONS", "PATCH": "PATCH",
		"get": "other", "": "other", "PROPFIND": "other", strings.Repeat("A", 65536): "other",
	} {
		if got := Method(in); got != want {
			t.Errorf("Method(%.20q) = %q, want %q", in, got, want)
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
