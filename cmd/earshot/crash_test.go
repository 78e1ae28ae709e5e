package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// SIGKILL in the middle of ingest batches loses nothing acknowledged:
// after a restart every post a 200 answered for is there as a match, and
// the scoring sweep finishes every match left unscored.
func TestCrashDuringIngest(t *testing.T) {
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=100000", "EARSHOT_SCORING_INTERVAL=1h")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")

	var mu sync.Mutex
	acked := map[string]bool{}
	stop := make(chan struct{})
	batches := make(chan struct{}, 1) // a send after each acknowledged batch; never blocks
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 5 * time.Second}
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				var posts []any
				var urls []string
				for i := 0; i < 20; i++ {
					id := fmt.Sprintf("w%d-b%d-p%d", w, n, i)
					p := ingestPost(id, "acme is great")
					posts = append(posts, p)
					urls = append(urls, p["url"].(string))
				}
				body, _ := json.Marshal(map[string]any{"platform": "x", "posts": posts})
				req, _ := http.NewRequest("POST", s.URL+"/ingest", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+s.IngestKey)
				resp, err := client.Do(req)
				if err != nil {
					return // the server is gone
				}
				resp.Body.Close()
				if resp.StatusCode == 200 {
					mu.Lock()
					for _, u := range urls {
						acked[u] = true
					}
					mu.Unlock()
					select {
					case batches <- struct{}{}:
					default:
					}
				}
			}
		}()
	}
	// Killed under load: once some batches are acknowledged, with the
	// writers still sending.
	within := time.NewTimer(10 * time.Second)
	for n := 0; n < 10; n++ {
		select {
		case <-batches:
		case <-within.C:
			t.Fatalf("%d batches acknowledged in 10s", n)
		}
	}
	within.Stop()
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.done
	close(stop)
	wg.Wait()
	if len(acked) == 0 {
		t.Fatal("no batch was acknowledged before the kill")
	}
	s.launch()

	found, unscored := 0, 0
	waitUntil(t, 15*time.Second, 200*time.Millisecond, func() bool {
		found, unscored = 0, 0
		for _, m := range allMatches(t, s) {
			if acked[m["post"].(map[string]any)["url"].(string)] {
				found++
			}
			if m["score"] == nil {
				unscored++
			}
		}
		if found < len(acked) {
			t.Fatalf("%d of %d acknowledged posts survived the kill", found, len(acked))
		}
		return unscored == 0
	}, func() string { return fmt.Sprintf("%d matches still unscored 15 s after the restart", unscored) })
	t.Logf("%d acknowledged posts, all stored and scored after the restart", found)
}

// A process killed between two tries of a delivery loses nothing: after
// the restart the queued try is made at its time, with the same delivery
// id.
func TestCrashBetweenWebhookTries(t *testing.T) {
	s := start(t, "EARSHOT_PLAN_WEBHOOKS_PER_PERSON=1", "EARSHOT_WEBHOOK_ALLOW_PRIVATE=true",
		"EARSHOT_WEBHOOK_RETRY_SCHEDULE=2s,2s,2s", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	created, rcv := hook(t, s, s.APIKey, map[string]any{"min_score": 0})
	rcv.SetStatus(500)
	s.call("POST", "/ingest", s.IngestKey, map[string]any{"platform": "x", "posts": []any{ingestPost("1", "acme rocks")}}).want(t, 200, "")
	first := rcv.WaitFor(1, 10*time.Second)
	// Kill between tries: once the failed first try is recorded. (A try
	// cut off in flight waits for its lease, 90 s, before it is made again.)
	logOf := func() []any {
		return s.call("GET", "/api/v1/webhooks/"+created["id"].(string)+"/deliveries", s.APIKey, nil).want(t, 200, "").JSON(t)["data"].([]any)
	}
	waitUntil(t, 5*time.Second, 20*time.Millisecond, func() bool {
		l := logOf()
		return len(l) == 1 && l[0].(map[string]any)["tries"] == 1.0 && l[0].(map[string]any)["status"] == "queued"
	}, func() string { return fmt.Sprintf("the first try was not recorded: %v", logOf()) })
	if err := s.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.done
	rcv.SetStatus(204)
	s.launch()
	got := rcv.WaitFor(2, 15*time.Second)
	if len(got) < 2 || got[1].DeliveryID != first[0].DeliveryID || !got[1].Timestamp.After(first[0].Timestamp.Add(-time.Second)) {
		t.Fatalf("after the restart: %d messages", len(got))
	}
	var log []any
	waitUntil(t, 5*time.Second, 100*time.Millisecond, func() bool {
		log = logOf()
		return len(log) == 1 && log[0].(map[string]any)["status"] == "delivered" && log[0].(map[string]any)["tries"] == 2.0
	}, func() string { return fmt.Sprintf("delivery log after the restart: %v", log) })
}
