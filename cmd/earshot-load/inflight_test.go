package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A server that answers nothing must not make the run hold a request,
// goroutine and connection for every tick until the client's timeout:
// at most maxInFlight wait, and the ticks beyond are reported skipped.
func TestStalledServerBoundsRequestsInFlight(t *testing.T) {
	defer func(n int) { maxInFlight = n }(maxInFlight)
	maxInFlight = 8
	var mu sync.Mutex
	inFlight, most := 0, 0
	over := make(chan struct{}) // closed once more than maxInFlight wait
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			w.WriteHeader(http.StatusCreated) // acme
			return
		}
		mu.Lock()
		inFlight++
		if inFlight > most {
			most = inFlight
			if most == maxInFlight+1 {
				close(over)
			}
		}
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		// Stalled: the answer waits for the client to give up, or for
		// the bound to be broken, which fails the test without the wait.
		select {
		case <-r.Context().Done():
		case <-over:
		}
	}))
	defer srv.Close()
	var err error
	out := output(t, func() { err = run(srv.URL, "api", "ingest", 200, 200*time.Millisecond, "100:0:0", 100, 0) })
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if most > maxInFlight {
		t.Fatalf("%d requests waited at once, want at most %d", most, maxInFlight)
	}
	if !strings.Contains(out, "skipped ") {
		t.Errorf("the ticks beyond the bound are not reported:\n%s", out)
	}
}
