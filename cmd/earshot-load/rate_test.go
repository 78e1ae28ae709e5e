package main

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// req/s is requests answered over the time they took, from the first
// tick to the last answer: a server that answers long after the run's
// ticks have ended served fewer requests a second than were sent, and
// dividing by -duration reported the rate sent as the rate served. The
// clock is moved 10 s by every read the server answers, as a server
// that takes 10 s an answer would.
func TestRateCountsTheTimeAnswersTook(t *testing.T) {
	var offset atomic.Int64
	defer func(f func() time.Time) { now = f }(now)
	now = func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	// The API's answers as the fake server of main_test.go gives them.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			w.WriteHeader(http.StatusCreated)
			return
		}
		offset.Add(int64(10 * time.Second))
		w.Write([]byte(`{"data":[],"nextCursor":null}`))
	}))
	defer srv.Close()
	var err error
	out := output(t, func() { err = run(srv.URL, "api", "ingest", 50, 200*time.Millisecond, "100:0:0", 100, 0) })
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "all" {
			continue
		}
		rate, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			t.Fatalf("all line %q: %v", line, err)
		}
		// Every request answered cost 10 s: at most 0.1 a second.
		if rate > 0.1 {
			t.Errorf("all line %q: %v req/s, want at most 0.1 (each answer took 10 s)", line, rate)
		}
		return
	}
	t.Fatalf("no all line:\n%s", out)
}
