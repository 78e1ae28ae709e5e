package app

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// A NUL in a post is removed from its text and author, and a post whose
// externalId holds one is skipped, whatever the source: the valid posts
// of the batch are stored, and both databases store the same text.
func TestIngestNUL(t *testing.T) { databases(t, testIngestNUL) }

func testIngestNUL(t *testing.T, w world) {
	ctx := context.Background()
	o := w.owner(t, "nul@example.com")
	p, err := core.NewPhrase(o.ID, "acme", "x", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 10}, ports.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	ingest := NewIngest(w.matches, gormstore.NewAccountStore(w.db), NewMatchers(w.phrases), nil, core.Limits{AccountsPerPlatform: 1}, quiet)
	_, ingested, skipped, err := ingest.Ingest(ctx, o.ID, "x", []core.IngestPost{
		{ExternalID: "plain", Body: []string{"acme one"}, URL: "https://x.com/1"},
		{ExternalID: "body", AuthorName: "a\x00da", Body: []string{"ac\x00me two\x00", "\x00"}, URL: "https://x.com/2"},
		{ExternalID: "id\x00", Body: []string{"acme three"}, URL: "https://x.com/3"},
		{ExternalID: "url", Body: []string{"acme four"}, URL: "https://x.com/\x00"},
		{ExternalID: "empty", Body: []string{"\x00", " \x00 "}, URL: "https://x.com/5"},
	})
	if err != nil || ingested != 2 || skipped != 3 {
		t.Fatalf("Ingest = %d ingested, %d skipped, %v; want 2, 3, nil", ingested, skipped, err)
	}
	ms, _, err := w.matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]core.Post{}
	for _, m := range ms {
		got[m.Post.ExternalID] = m.Post
	}
	if len(got) != 2 || got["plain"].Text != "acme one" || got["body"].Text != "acme two" || got["body"].Author != "ada" {
		t.Fatalf("stored posts: %+v", got)
	}

	// The same rule on posts read from reddit or an archive.
	rp := w.phrase(t, o.ID, "acme", "saas")
	src := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		children := []map[string]any{}
		if strings.HasSuffix(r.URL.Path, "/new.json") {
			for _, id := range []string{"n1", "n\x002"} {
				children = append(children, map[string]any{"kind": "t3", "data": map[string]any{
					"id": id, "name": "t3_" + id, "subreddit": "saas", "author": "b\x00ob", "title": "Ac\x00me?",
					"selftext": "is ac\x00me worth it", "permalink": "/r/saas/comments/" + id + "/x/", "created_utc": float64(time.Now().Unix()),
				}})
			}
		}
		json.NewEncoder(rw).Encode(map[string]any{"kind": "Listing", "data": map[string]any{"after": nil, "children": children}})
	}))
	defer src.Close()
	rs, err := reddit.New(reddit.Config{BaseURL: src.URL, UserAgent: "test", Interval: time.Minute, Logger: quiet, Sleep: noSleep})
	if err != nil {
		t.Fatal(err)
	}
	if err := NewReddit(w.phrases, w.matches, rs, w.leases, nil, ports.SystemClock{}, quiet, "r1").Cycle(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	ms, _, _ = w.matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Limit: 10, Platform: core.Reddit})
	if len(ms) != 1 || ms[0].PhraseID != rp.ID || ms[0].Post.Title != "Acme?" || ms[0].Post.Text != "is acme worth it" || ms[0].Post.Author != "bob" {
		t.Fatalf("reddit matches: %+v", ms)
	}
}
