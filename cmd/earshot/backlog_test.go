package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper"
)

// While EARSHOT_INGEST_BACKLOG or more matches wait for a score, POST
// /ingest answers 503 service_unavailable with Retry-After and stores
// nothing of the batch; once scoring has caught up, the same batch is
// taken whole. Scoring is held back by a model that answers only when
// the test lets it: the LLM scorer falls back to the rules after its
// 10 s time-out, so the test stays serial, as a loaded machine could
// let that time-out pass before the refusal is seen.
func TestIngestWaitsForScoring(t *testing.T) {
	gate := make(chan struct{})
	release := sync.OnceFunc(func() { close(gate) })
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": `{"score": 40, "intent": "discussion", "reason": "names the product"}`}}}})
	}))
	t.Cleanup(model.Close)
	t.Cleanup(release) // before the model server closes: it waits for the calls held
	s := start(t, "EARSHOT_INGEST_BACKLOG=200", "EARSHOT_LLM_URL="+model.URL, "EARSHOT_LLM_MODEL=test")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")

	batch := func(n int) []helper.Post {
		var posts []helper.Post
		for i := range 100 {
			id := fmt.Sprintf("b%d-%d", n, i)
			posts = append(posts, helper.Post{ExternalID: id, Body: []string{"is acme any good"}, URL: "https://x.com/ada/status/" + id})
		}
		return posts
	}
	// Batches of posts that all match, until one is refused: two of 100
	// reach the bound of 200, one more may pass before the count is read.
	var refused response
	n := 0
	for ; n < 10; n++ {
		r := s.call("POST", "/ingest", s.IngestKey, map[string]any{"platform": "x", "posts": batch(n)})
		if r.Status == http.StatusServiceUnavailable {
			refused = r
			break
		}
		if got := r.want(t, 200, "").JSON(t); got["ingested"] != 100.0 {
			t.Fatalf("batch %d under the bound: %v", n, got)
		}
	}
	if n < 2 || n == 10 {
		t.Fatalf("%d batches of 100 taken before a refusal (none when 10); want 2 or 3 with a bound of 200", n)
	}
	refused.want(t, 503, "service_unavailable")
	if ra := refused.Header.Get("Retry-After"); ra != "1" && ra != "2" {
		t.Fatalf("Retry-After %q, want 1 or 2 seconds", ra)
	}
	if _, msg := refused.errorCode(t); !strings.Contains(msg, "wait for a score") {
		t.Fatalf("the refusal does not name the wait: %q", msg)
	}
	// The operator is told once, not for each batch refused.
	said := func(msg string) func(_, logs string) bool {
		return func(_, logs string) bool { return strings.Count(logs, msg) == 1 }
	}
	if !s.waitOutput(5*time.Second, said(`"msg":"scoring is behind: POST /ingest refuses batches`)) {
		t.Fatalf("no warning that ingest refuses batches; logs:\n%s", s.logs)
	}

	// The helper program sends the refused batch again after each
	// Retry-After. Scoring catches up once the model answers (from the
	// helper's first wait on), and the batch is then taken, every post of
	// it new: nothing of it was stored when it was refused.
	c, err := helper.NewClient(s.URL, s.IngestKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Attempts = 60 // a minute at a second each: ample on a loaded machine
	var waits []time.Duration
	c.Sleep = func(ctx context.Context, d time.Duration) error {
		waits = append(waits, d)
		release()
		return helper.Sleep(ctx, d)
	}
	res, err := c.Ingest(context.Background(), "x", batch(n))
	if err != nil || res.Ingested != 100 || res.Skipped != 0 {
		t.Fatalf("the refused batch sent again by the helper: %+v, %v; want all 100 posts ingested", res, err)
	}
	if len(waits) == 0 || waits[0] < time.Second || waits[0] > 3*time.Second {
		t.Fatalf("the helper waited %v; want Retry-After's second before sending again", waits)
	}
	if !s.waitOutput(5*time.Second, said(`"msg":"scoring has caught up: POST /ingest takes batches again`)) {
		t.Fatalf("no word that ingest takes batches again; logs:\n%s", s.logs)
	}
}
