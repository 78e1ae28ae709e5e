package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A key without write:phrases is refused with 403 forbidden: the run
// must not take that for a phrase created, nor count the refused writes
// as served. Only the plan limit's 403 is an answer the load expects
// (the default plan allows one phrase a platform).
func TestForbiddenIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusForbidden)
		w.Write([]byte(`{"error":{"code":"forbidden","message":"this key lacks the write:phrases scope"}}`))
	}))
	defer srv.Close()
	err := run(srv.URL, "read-only", "ingest", 50, 100*time.Millisecond, "0:100:0", 100, 0)
	if err == nil || !strings.Contains(err.Error(), "cannot create the phrase acme") {
		t.Fatalf("run with a key refused 403 forbidden returned %v, want the phrase's failure", err)
	}
}

func TestPlanLimitIsServed(t *testing.T) {
	var writes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" && r.URL.Path == "/api/v1/keywords" {
			writes.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"error":{"code":"plan_limit","message":"your plan allows 1 phrase per platform (x has 1)"}}`))
			return
		}
		w.Write([]byte(`{"data":[]}`))
	}))
	defer srv.Close()
	if err := run(srv.URL, "api", "ingest", 50, 100*time.Millisecond, "0:100:0", 100, 0); err != nil {
		t.Fatalf("run under the plan limit: %v", err)
	}
	if writes.Load() < 2 {
		t.Fatalf("%d phrase writes, want the first and the timed run's", writes.Load())
	}
}
