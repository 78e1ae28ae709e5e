package reddit_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/ports"
)

// Reddit's listings hold about the newest 1,000 items: the page that
// reaches that cap comes with no after cursor, as the true end of a
// listing does. A community with more items since its checkpoint is not
// read whole, and the cover must not say it was, or the checkpoint moves
// over posts that were never read and the status names no gap.
func TestListingCapIsNotTheListingsEnd(t *testing.T) {
	c := newClock()
	things := minutely("c", 1500)
	const capped = 100 * reddit.MaxPages // what reddit's listing holds
	mux := http.NewServeMux()
	mux.HandleFunc("GET /r/"+community+"/new.json", func(w http.ResponseWriter, r *http.Request) {
		start := 0
		if after := r.URL.Query().Get("after"); after != "" {
			for i, th := range things {
				if th["name"] == after {
					start = i + 1
				}
			}
		}
		end := min(start+100, capped)
		next := ""
		if end < capped {
			next = things[end-1]["name"].(string)
		}
		writeJSON(w, http.StatusOK, listing(t, next, things[start:end]...))
	})
	srv, _ := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})

	from := time.Unix(t0-60*1500, 0) // before every post
	r, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
		Want: []ports.RedditWant{{Community: community, Since: from}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Posts) != capped || len(r.Covered) != 1 {
		t.Fatalf("%d posts, cover %+v", len(r.Posts), r.Covered)
	}
	oldest := time.Unix(t0-60*(capped-1), 0)
	if cv := r.Covered[0]; cv.Complete || !cv.From.Equal(oldest) {
		t.Errorf("cover %+v, want incomplete from the oldest post read, %v: posts %d to 1499 were never read",
			cv, oldest.UTC(), capped)
	}
}
