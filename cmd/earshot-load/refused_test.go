package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// A run whose requests the server refused, an ingest key it does not
// know (401, never tried before the timed run without -seed) or a key
// past its rate limit (429, the default of 60 a minute), measured
// refusals: it prints its report and ends with a status that says so,
// where it used to end with 0 as if the figures were the server's.
func TestRefusalsEndTheRunWithAnError(t *testing.T) {
	for _, c := range []struct {
		name, mix string
		status    int
	}{
		{"ingest key unknown", "0:0:100", http.StatusUnauthorized},
		{"rate limited", "100:0:0", http.StatusTooManyRequests},
	} {
		t.Run(c.name, func(t *testing.T) {
			// The API's refusals (docs/helpers.md: 401 unauthorized, 429 rate_limited).
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/api/v1/keywords" {
					w.WriteHeader(http.StatusCreated) // acme
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(c.status)
				w.Write([]byte(`{"error":{"code":"refused","message":"refused"}}`))
			}))
			defer srv.Close()
			var err error
			out := output(t, func() { err = run(srv.URL, "api", "ingest", 50, 100*time.Millisecond, c.mix, 10, 0) })
			if !errors.Is(err, errRefused) || !strings.Contains(err.Error(), "refused") {
				t.Fatalf("run with every request refused %d returned %v, want the refusals", c.status, err)
			}
			if !strings.Contains(out, "\nall ") {
				t.Errorf("no report before the error:\n%s", out)
			}
		})
	}
}
