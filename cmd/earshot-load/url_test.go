package main

import (
	"net/http/httptest"
	"testing"
	"time"
)

// An address written with its final slash reaches the same routes: the
// server answers "//api/v1/..." with a redirect, so each request would
// cost two round trips and every latency measured would be doubled.
func TestURLWithFinalSlash(t *testing.T) {
	f := &fakeServer{posts: map[string]bool{}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	if err := run(srv.URL+"/", "api", "ingest", 50, 100*time.Millisecond, "100:0:0", 100, 0); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reads == 0 {
		t.Error("no read reached GET /api/v1/matches")
	}
}
