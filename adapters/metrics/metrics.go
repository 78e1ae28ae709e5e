// Package metrics exposes earshot's metrics in the Prometheus format:
// HTTP requests by route and status with their latency, the application's
// event counters, and gauges read at scrape time (queue depths).
package metrics

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/earshothq/earshot/ports"
)

// Registry holds every metric of one process.
type Registry struct {
	reg      *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	events   *prometheus.CounterVec

	redditReads     *prometheus.CounterVec
	redditRemaining *prometheus.GaugeVec
}

var (
	_ ports.Metrics       = (*Registry)(nil)
	_ ports.SourceMetrics = (*Registry)(nil)
)

// New returns a registry with the Go runtime and process collectors.
func New() *Registry {
	r := &Registry{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_http_requests_total", Help: "HTTP requests answered, by route and status.",
		}, []string{"route", "method", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "earshot_http_request_duration_seconds", Help: "Time to answer HTTP requests, by route.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"route", "method"}),
		events: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_events_total", Help: "Work done, by event: posts ingested and skipped, matches created and scored, deliveries, alerts, reddit reads.",
		}, []string{"event"}),
		redditReads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "earshot_reddit_reads_total", Help: "Reddit reads by the way they were answered (oauth, json, feed, archive) and result (ok, failed).",
		}, []string{"source", "result"}),
		redditRemaining: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "earshot_reddit_ratelimit_remaining", Help: "Requests left in reddit's window, from X-Ratelimit-Remaining on its last answer, by source.",
		}, []string{"source"}),
	}
	r.reg.MustRegister(r.requests, r.latency, r.events, r.redditReads, r.redditRemaining,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// Count implements ports.Metrics.
func (r *Registry) Count(event string, n int) {
	if n > 0 {
		r.events.WithLabelValues(event).Add(float64(n))
	}
}

// CountRead implements ports.SourceMetrics.
func (r *Registry) CountRead(source string, ok bool) {
	result := "ok"
	if !ok {
		result = "failed"
	}
	r.redditReads.WithLabelValues(redditSource(source), result).Inc()
}

// SetRemaining implements ports.SourceMetrics.
func (r *Registry) SetRemaining(source string, remaining float64) {
	r.redditRemaining.WithLabelValues(redditSource(source)).Set(remaining)
}

// redditSource keeps the source label to the fixed list of ports.RedditVias.
func redditSource(s string) string {
	if slices.Contains(ports.RedditVias, s) {
		return s
	}
	return "other"
}

// Gauge registers a gauge whose value f reads at scrape time.
func (r *Registry) Gauge(name, help string, f func() float64) {
	r.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}

// Handler serves the metrics.
func (r *Registry) Handler() http.Handler {
	return promhttp.HandlerFor(r.reg, promhttp.HandlerOpts{Registry: r.reg})
}

// Middleware counts and times every request by route template, so ids in
// paths never become labels.
func (r *Registry) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, req)
		route := Route(req.URL.Path)
		r.requests.WithLabelValues(route, req.Method, strconv.Itoa(sw.status)).Inc()
		r.latency.WithLabelValues(route, req.Method).Observe(time.Since(start).Seconds())
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the real writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// routes are the templates of every path the server answers.
var routes = []string{
	"/api/v1/me", "/api/v1/keywords", "/api/v1/keywords/{id}", "/api/v1/matches", "/api/v1/matches/{id}",
	"/api/v1/openapi.json", "/api/v1/webhooks", "/api/v1/webhooks/{id}", "/api/v1/webhooks/{id}/test",
	"/api/v1/webhooks/{id}/deliveries", "/api/v1/webhooks/{id}/deliveries/{id}/retry",
	"/ingest", "/phrases", "/session", "/proxy", "/healthz", "/readyz", "/metrics",
}

// Route maps a path to its template, or "other" for paths the server
// does not know, so scanners cannot grow the label set without bound.
func Route(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for _, tmpl := range routes {
		ts := strings.Split(strings.Trim(tmpl, "/"), "/")
		if len(ts) != len(segs) {
			continue
		}
		ok := true
		for i := range ts {
			if ts[i] != "{id}" && ts[i] != segs[i] {
				ok = false
				break
			}
		}
		if ok {
			return tmpl
		}
	}
	return "other"
}
