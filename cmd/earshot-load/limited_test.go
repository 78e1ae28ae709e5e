package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// output runs f with the standard output read into the string returned.
func output(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout := os.Stdout
	os.Stdout = w
	got := make(chan string)
	go func() { var b bytes.Buffer; io.Copy(&b, r); got <- b.String() }()
	defer func() { os.Stdout = stdout }()
	f()
	w.Close()
	return <-got
}

// Under the default plan (one phrase a platform) every phrase write of
// the timed run is refused with the plan limit's 403: stored nothing,
// it must not be reported as a write served, with the refusal's
// latency as a write's.
func TestPlanLimitIsNotAWrite(t *testing.T) {
	var writes atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" && r.URL.Path == "/api/v1/keywords" {
			if writes.Add(1) == 1 { // acme, the one phrase the plan allows
				w.WriteHeader(http.StatusCreated)
				return
			}
			// The API's answer past a plan limit (docs/helpers.md: 403 plan_limit).
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"error":{"code":"plan_limit","message":"your plan allows 1 phrase per platform (x has 1)"}}`))
			return
		}
		w.Write([]byte(`{"data":[]}`))
	}))
	defer srv.Close()
	var err error
	out := output(t, func() { err = run(srv.URL, "api", "ingest", 50, 100*time.Millisecond, "0:100:0", 100, 0) })
	if err != nil {
		t.Fatal(err)
	}
	if writes.Load() < 2 {
		t.Fatalf("%d phrase writes, want acme and the timed run's", writes.Load())
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "write ") {
			t.Errorf("refusals at the plan limit reported as writes: %q\n%s", line, out)
		}
	}
	if !strings.Contains(out, "\nlimited ") {
		t.Errorf("the refusals are not reported apart:\n%s", out)
	}
}
