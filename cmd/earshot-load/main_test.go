package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer answers the three routes the load program uses and records
// the ingested posts.
type fakeServer struct {
	mu      sync.Mutex
	posts   map[string]bool
	batches int
	reads   int
	failAt  int // answer 500 to the ingest batch with this number (1-based), 0 never
	busy    int // answer this many ingest batches 503 with Retry-After: 0 first
}

func (f *fakeServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch r.Method + " " + r.URL.Path {
	case "POST /api/v1/keywords":
		w.WriteHeader(201)
	case "GET /api/v1/matches":
		f.reads++
		w.Write([]byte(`{"data":[],"nextCursor":null}`))
	case "POST /ingest":
		if r.Header.Get("Authorization") != "Bearer ingest" {
			w.WriteHeader(401)
			return
		}
		if f.busy > 0 {
			// The server's answer while scoring is behind (docs/operating.md,
			// "When scoring falls behind"), with no wait so the test is quick.
			f.busy--
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(503)
			return
		}
		f.batches++
		if f.batches == f.failAt {
			w.WriteHeader(500)
			return
		}
		var body struct {
			Posts []struct {
				ExternalID string   `json:"externalId"`
				Body       []string `json:"body"`
			} `json:"posts"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body.Posts) > 100 {
			w.WriteHeader(400)
			return
		}
		for _, p := range body.Posts {
			if strings.HasPrefix(p.ExternalID, "seed-") && strings.Contains(p.Body[0], "acme") {
				f.posts[p.ExternalID] = true
			}
		}
		w.Write([]byte(`{}`))
	default:
		w.WriteHeader(404)
	}
}

func TestSeedIngestsEveryPostOnce(t *testing.T) {
	f := &fakeServer{posts: map[string]bool{}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	if err := run(srv.URL, "api", "ingest", 50, 200*time.Millisecond, "100:0:0", 100, 1050); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.posts) != 1050 {
		t.Errorf("seeded %d distinct matching posts, want 1050", len(f.posts))
	}
	if f.batches != 11 {
		t.Errorf("seeding took %d batches, want 11 of at most 100", f.batches)
	}
	if f.reads == 0 {
		t.Error("the timed run read no pages")
	}
}

// A batch refused 503 with Retry-After because scoring is behind is
// sent again after the wait, as the helper does, not taken for a failed
// seed: with the default backlog bound a large seed met it every time.
func TestSeedWaitsForABusyServer(t *testing.T) {
	f := &fakeServer{posts: map[string]bool{}, busy: 5}
	srv := httptest.NewServer(f)
	defer srv.Close()
	if err := run(srv.URL, "api", "ingest", 50, 100*time.Millisecond, "100:0:0", 100, 1050); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.posts) != 1050 || f.busy != 0 {
		t.Errorf("seeded %d distinct matching posts (%d refusals left), want 1050", len(f.posts), f.busy)
	}
}

func TestSeedStopsOnAFailedBatch(t *testing.T) {
	f := &fakeServer{posts: map[string]bool{}, failAt: 3}
	srv := httptest.NewServer(f)
	defer srv.Close()
	err := run(srv.URL, "api", "ingest", 50, 100*time.Millisecond, "100:0:0", 100, 2000)
	if err == nil || !strings.Contains(err.Error(), "seeding failed") {
		t.Fatalf("run returned %v, want a seeding failure", err)
	}
}

func TestRunRefusesBadSettings(t *testing.T) {
	for _, c := range []struct {
		url, mix  string
		rate, sd  int
		wantInErr string
	}{
		{"http://example.com", "80:5:15", 10, 0, "loopback"},
		{"http://127.0.0.1:1", "80:5:10", 10, 0, "-mix"},
		{"http://127.0.0.1:1", "80:5:15", 0, 0, "-rate"},
		{"http://127.0.0.1:1", "80:5:15", 10, -1, "-seed"},
	} {
		err := run(c.url, "api", "ingest", c.rate, time.Second, c.mix, 100, c.sd)
		if err == nil || !strings.Contains(err.Error(), c.wantInErr) {
			t.Errorf("run(%s, mix %s, rate %d, seed %d) = %v, want an error naming %s", c.url, c.mix, c.rate, c.sd, err, c.wantInErr)
		}
	}
}

// A batch size the ingest route cannot take, or a mix with a share out of
// 0 to 100, is refused before any request: a negative batch would crash
// the run, and a batch over the route's 100 posts would make every
// ingest an error.
func TestRunRefusesBadBatchAndMix(t *testing.T) {
	for _, c := range []struct {
		mix       string
		batch     int
		wantInErr string
	}{
		{"0:0:100", -1, "-batch"},
		{"0:0:100", 0, "-batch"},
		{"0:0:100", 101, "-batch"},
		{"120:-10:-10", 100, "-mix"},
		{"50:60:-10", 100, "-mix"},
	} {
		err := run("http://127.0.0.1:1", "api", "ingest", 10, time.Second, c.mix, c.batch, 0)
		if err == nil || !strings.Contains(err.Error(), c.wantInErr) {
			t.Errorf("run(mix %s, batch %d) = %v, want an error naming %s", c.mix, c.batch, err, c.wantInErr)
		}
	}
}
