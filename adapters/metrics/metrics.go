// Package metrics exposes earshot's metrics in the Prometheus format:
// HTTP requests by route and status with their latency, the application's
// event counters, and gauges read at scrape time (queue depths).
package metrics

import (
	"fmt"
	"net/http"
	"net/url"
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

// RequestObserver returns what counts and times one answered request by
// route, method and status; the HTTP edge's one request middleware
// (httpapi.RequestLog) calls it. Each label comes from a closed set
// (routes, Method, Status): a series lives for the life of the process,
// so a label copied from the request would let any client grow memory
// and every scrape without bound.
func (r *Registry) RequestObserver(routes *Routes) func(method, path string, status int, d time.Duration) {
	return func(method, path string, status int, d time.Duration) {
		route, m := routes.Route(path), Method(method)
		r.requests.WithLabelValues(route, m, Status(status)).Inc()
		r.latency.WithLabelValues(route, m).Observe(d.Seconds())
	}
}

// methods are the request methods of RFC 9110 and PATCH (RFC 5789).
var methods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace,
}

// Method maps a request method to itself when it is a standard one and to
// "other" otherwise. Methods are case-sensitive (RFC 9110 9.1), so "get"
// is "other" too, as the router treats it.
func Method(m string) string {
	for _, k := range methods {
		if m == k {
			return k
		}
	}
	return "other"
}

// Status is the label of an answer's status code: the code when it is a
// valid three-digit one, else "other". Codes come from the server's own
// handlers, yet a handler that relays a number it was given must not be
// able to open new series either.
func Status(code int) string {
	if code < 100 || code > 599 {
		return "other"
	}
	return strconv.Itoa(code)
}

// Routes labels request paths with the route that serves them. The
// routes are the routers' own lists of net/http patterns, so a route
// added to a router has its label without a second list to keep.
type Routes struct {
	mux   *http.ServeMux
	known map[string]bool
}

// NewRoutes returns the labeller of the routes given as net/http
// patterns ("GET /api/v1/keywords/{id}", "/ingest"). The label of a
// route is its pattern without the method, so every method on a path is
// counted under one route, and the method has its own label. The error
// says two patterns conflict (as http.ServeMux.Handle would panic).
func NewRoutes(patterns ...string) (rs *Routes, err error) {
	rs = &Routes{mux: http.NewServeMux(), known: map[string]bool{}}
	defer func() {
		if p := recover(); p != nil {
			rs, err = nil, fmt.Errorf("metrics routes: %v", p)
		}
	}()
	for _, p := range patterns {
		if _, path, ok := strings.Cut(p, " "); ok {
			p = strings.TrimLeft(path, " \t")
		}
		if !rs.known[p] {
			rs.known[p] = true
			rs.mux.Handle(p, http.NotFoundHandler())
		}
	}
	return rs, nil
}

// Route maps a path to the pattern of the route that serves it, by the
// rules of http.ServeMux, or to "other" for paths no route serves, so
// scanners cannot grow the label set without bound.
func (rs *Routes) Route(path string) string {
	_, p := rs.mux.Handler(&http.Request{Method: http.MethodGet, URL: &url.URL{Path: path}})
	// The mux names a redirect by its target path: only a registered
	// pattern is a label.
	if !rs.known[p] {
		return "other"
	}
	return p
}
