package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/httpapi"
	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// BenchmarkMatchesPage measures GET /api/v1/matches?limit=25 through the
// whole stack (key check, rate limit, go-kit transport, SQLite store of
// 100,000 matches, JSON) beside a bare net/http handler that writes the
// same bytes from memory, over loopback HTTP in the same run, and reports
// both rates and their ratio.
//
//	go test -run '^$' -bench MatchesPage -benchtime 1x ./app
func BenchmarkMatchesPage(b *testing.B) {
	ctx := context.Background()
	db := dbtest.File(b)
	owners, keyStore := gormstore.NewOwnerStore(db), gormstore.NewKeyStore(db)
	keys := NewKeys(keyStore, owners, ports.SystemClock{})
	o, err := NewOwners(owners, keys).Create(ctx, "bench@example.com", "")
	if err != nil {
		b.Fatal(err)
	}
	secret, _, err := keys.CreateAPIKey(ctx, o.ID, "bench", nil)
	if err != nil {
		b.Fatal(err)
	}
	phrases := NewPhrases(gormstore.NewPhraseStore(db), core.Limits{PhrasesPerPlatform: 1}, ports.SystemClock{})
	p, _, err := phrases.Add(ctx, o.ID, "acme", "x", "", "")
	if err != nil {
		b.Fatal(err)
	}
	store := gormstore.NewMatchStore(db)
	for i := 0; i < 100_000; i += 1000 {
		batch := make([]ports.PostMatches, 1000)
		for j := range batch {
			n := i + j
			batch[j] = ports.PostMatches{Post: core.Post{
				ExternalID: fmt.Sprint(n), Author: "author", Title: "Looking for an acme alternative",
				Text: "We have used acme for two years and the pricing keeps going up. Any alternatives that handle invoices?",
				URL:  fmt.Sprintf("https://x.com/author/status/%d", n), Likes: n % 50, Comments: n % 7,
			}, PhraseIDs: []string{p.ID}}
		}
		if _, err := store.SaveMatches(ctx, o.ID, core.X, batch); err != nil {
			b.Fatal(err)
		}
	}
	api := httpapi.New(httpapi.Config{RateLimit: 1 << 30, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		httpapi.Deps{Keys: keys, Phrases: phrases, Matches: NewMatches(store), Limiter: ratelimit.NewMemory(nil)})
	apiSrv := httptest.NewServer(api)
	defer apiSrv.Close()

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	get := func(url string) []byte {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		return body
	}
	page := get(apiSrv.URL + "/api/v1/matches?limit=25")
	bareSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(page)
	}))
	defer bareSrv.Close()

	// Each side runs for the same fixed time with the same number of
	// concurrent clients; b.N is ignored (run with -benchtime 1x).
	rate := func(url string) float64 {
		const clients = 16
		var n atomic.Int64
		deadline := time.Now().Add(3 * time.Second)
		var wg sync.WaitGroup
		for range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(deadline) {
					get(url)
					n.Add(1)
				}
			}()
		}
		start := time.Now()
		wg.Wait()
		return float64(n.Load()) / time.Since(start).Seconds()
	}
	get(bareSrv.URL) // warm both connections pools
	bare := rate(bareSrv.URL + "/api/v1/matches?limit=25")
	full := rate(apiSrv.URL + "/api/v1/matches?limit=25")
	b.ReportMetric(bare, "bare-req/s")
	b.ReportMetric(full, "api-req/s")
	b.ReportMetric(full/bare, "ratio")
}
