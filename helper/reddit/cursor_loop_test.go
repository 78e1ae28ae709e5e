package reddit_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/earshothq/earshot/helper/reddit"
)

// A listing whose after cursor leads back to the page already read (the
// same page, the same cursor) is not followed again: each repeat spends
// one of the account's paced requests and hands the same posts to the
// batches once more. The shape is reddit's Listing JSON as the fake
// serves it (fake_test.go); the loop is a cursor that repeats.
func TestCursorThatRepeatsIsNotFollowed(t *testing.T) {
	g := newRig(t)
	if err := g.runner.State.Set(map[string]string{
		reddit.Key("new", "golang"): "1767225000", reddit.Key("new", "sales"): "1767225000",
		reddit.Key("comments", "golang"): "1767225000", reddit.Key("comments", "sales"): "1767225000",
	}); err != nil {
		t.Fatal(err)
	}
	var children []map[string]any
	for i := range 100 { // all after the checkpoints
		id := fmt.Sprintf("l%03d", i)
		children = append(children, map[string]any{"kind": "t3", "data": map[string]any{
			"id": id, "name": "t3_" + id, "author": "ada", "subreddit": "golang", "title": "acme " + id, "selftext": "x",
			"permalink": "/r/golang/comments/" + id + "/x/", "score": 1, "num_comments": 0,
			"created_utc": float64(1767225199 - i), "removed_by_category": nil, "stickied": false}})
	}
	g.reddit.answer = func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasSuffix(r.URL.Path, "/new.json") {
			return false
		}
		writeJSON(w, 200, map[string]any{"kind": "Listing", "data": map[string]any{"after": "t3_l099", "dist": 100, "children": children}})
		return true
	}
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range g.reddit.paths(0) {
		if strings.HasSuffix(p, "/new.json") {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d requests of the new listing, want 2: the page, and the page its cursor led back to", n)
	}
	g.earshot.mu.Lock()
	received := g.earshot.received
	g.earshot.mu.Unlock()
	if posts, _, _ := g.earshot.snapshot(); len(posts) != 100 || received != 100 {
		t.Errorf("%d posts stored of %d sent, want 100 of 100", len(posts), received)
	}
}
