package helper_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper"
)

// GET /proxy's 503 stops the helper only as the spec's "no proxy": the
// server's answer (helper.go's proxy endpoint) carries no Retry-After. A
// 503 that names a Retry-After (a reverse proxy in front of the
// deployment during a deploy, a server at capacity) says to come back,
// and a 429 likewise: both are waited and asked again, as every other
// request of the client is, rather than ending the helper with the exit
// status its service unit does not restart on.
func TestProxyWaitsABusyServer(t *testing.T) {
	var mu sync.Mutex
	answers := []func(w http.ResponseWriter){
		func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(503)
			io.WriteString(w, "<html><body>503 Service Temporarily Unavailable</body></html>")
		},
		func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(429)
			io.WriteString(w, `{"error":{"code":"rate_limited","message":"rate limit reached"}}`)
		},
		func(w http.ResponseWriter) { w.WriteHeader(502) },
		func(w http.ResponseWriter) {
			io.WriteString(w, `{"required":true,"proxy":{"server":"http://127.0.0.1:3128","username":"u","password":"p"}}`)
		},
		// The server's own answer without a proxy.
		func(w http.ResponseWriter) {
			w.WriteHeader(503)
			io.WriteString(w, `{"error":{"code":"service_unavailable","message":"this deployment has no proxy: the helper must stop"}}`)
		},
	}
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		next := answers[0]
		answers = answers[1:]
		n++
		mu.Unlock()
		next(w)
	}))
	defer srv.Close()
	c, err := helper.NewClient(srv.URL, "svc_ingest_k", nil)
	if err != nil {
		t.Fatal(err)
	}
	var waits []time.Duration
	c.Sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	p, err := c.Proxy(context.Background())
	if err != nil || p.Proxy.Server != "http://127.0.0.1:3128" || !p.Required {
		t.Fatalf("proxy %+v, %v; want the proxy once the server answers", p, err)
	}
	if len(waits) != 3 || waits[0] < 3*time.Second || waits[1] < 2*time.Second {
		t.Fatalf("waits %v, want Retry-After's 3s, 2s, then a backoff", waits)
	}
	if _, err := c.Proxy(context.Background()); !errors.Is(err, helper.ErrNoProxy) || n != 5 {
		t.Fatalf("the server's 503: %v after %d requests, want ErrNoProxy at once", err, n)
	}
}

// A 503 with Retry-After that never ends fails the call after the
// client's tries without being taken for the deployment having no proxy.
func TestProxyBusyToTheEndIsNotNoProxy(t *testing.T) {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(503)
	}))
	defer srv.Close()
	c, _ := helper.NewClient(srv.URL, "svc_ingest_k", nil)
	c.Sleep = func(context.Context, time.Duration) error { return nil }
	_, err := c.Proxy(context.Background())
	if err == nil || errors.Is(err, helper.ErrNoProxy) || n != helper.DefaultAttempts {
		t.Fatalf("%v after %d requests; want a failure that is not ErrNoProxy after %d", err, n, helper.DefaultAttempts)
	}
}
