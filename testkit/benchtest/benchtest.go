// Package benchtest holds what the request-rate benchmarks share: an
// owner with an API key and a phrase over a store of many matches, and a
// load of concurrent clients for a fixed time.
package benchtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Fixture is an owner with an API key of every scope and one phrase on x
// that n matches were stored for, and the services over them.
type Fixture struct {
	Owner   core.Owner
	APIKey  string
	Keys    *app.Keys
	Phrases *app.Phrases
	Matches *app.Matches
}

// Seed makes the fixture on db with n matches, stored 1,000 to a batch,
// each a post of its own.
func Seed(tb testing.TB, db *gormstore.DB, n int) Fixture {
	tb.Helper()
	ctx := context.Background()
	clock := ports.SystemClock{}
	owners := gormstore.NewOwnerStore(db)
	f := Fixture{Keys: app.NewKeys(gormstore.NewKeyStore(db), owners, clock)}
	var err error
	if f.Owner, err = app.NewOwners(owners, f.Keys).Create(ctx, "bench@example.com", ""); err != nil {
		tb.Fatal(err)
	}
	if f.APIKey, _, err = f.Keys.CreateAPIKey(ctx, f.Owner.ID, "bench", nil); err != nil {
		tb.Fatal(err)
	}
	f.Phrases = app.NewPhrases(gormstore.NewPhraseStore(db), core.Limits{PhrasesPerPlatform: 1}, clock)
	p, _, err := f.Phrases.Add(ctx, f.Owner.ID, "acme", "x", "", "")
	if err != nil {
		tb.Fatal(err)
	}
	store := gormstore.NewMatchStore(db)
	for i := 0; i < n; i += 1000 {
		batch := make([]ports.PostMatches, min(1000, n-i))
		for j := range batch {
			n := i + j
			batch[j] = ports.PostMatches{Post: core.Post{
				ExternalID: fmt.Sprint(n), Author: "author", Title: "Looking for an acme alternative",
				Text: "We have used acme for two years and the pricing keeps going up. Any alternatives that handle invoices?",
				URL:  fmt.Sprintf("https://x.com/author/status/%d", n), Likes: n % 50, Comments: n % 7,
			}, PhraseIDs: []string{p.ID}}
		}
		if _, err := store.SaveMatches(ctx, f.Owner.ID, core.X, batch); err != nil {
			tb.Fatal(err)
		}
	}
	f.Matches = app.NewMatches(store)
	return f
}

// Getter returns a function that fetches a URL as the fixture's owner
// (its API key and the cookies given) over keep-alive connections, fails
// tb unless the answer is 200, and returns the body.
func (f Fixture) Getter(tb testing.TB, cookies ...*http.Cookie) func(url string) []byte {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	return func(url string) []byte {
		req, _ := http.NewRequest("GET", url, nil)
		req.Header.Set("Authorization", "Bearer "+f.APIKey)
		for _, c := range cookies {
			req.AddCookie(c)
		}
		resp, err := client.Do(req)
		if err != nil {
			tb.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			tb.Fatalf("%s: status %d: %s", url, resp.StatusCode, body)
		}
		return body
	}
}

// Load has clients goroutines call request over and over until d has
// passed, and returns how many calls they made and the time they took.
func Load(clients int, d time.Duration, request func()) (calls int64, took time.Duration) {
	var n atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				request()
				n.Add(1)
			}
		})
	}
	start := time.Now()
	wg.Wait()
	return n.Load(), time.Since(start)
}
