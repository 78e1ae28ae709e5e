package reddit_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/ports"
)

// A listing whose after cursor names a page already read hands out that
// page again, and its cursor again: following it spends the whole page
// cap of reddit's budget on one page, and a read of one community that
// ends so short of its checkpoint is taken for one cut by reddit's
// 1,000-item cap, so the checkpoint moves over posts never read. The
// shape is reddit's Listing JSON (listing() in helpers_test.go, as
// testdata/listing_new.json); the loop is a cursor that repeats, as
// public reports of cursor-paged APIs show it.
func TestListingWhoseCursorLoopsIsNotFollowed(t *testing.T) {
	c := newClock()
	page := minutely("l", 100)
	last := page[len(page)-1]["name"].(string)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /r/"+community+"/new.json", func(w http.ResponseWriter, r *http.Request) {
		// Whatever the cursor, the same page and the same cursor.
		writeJSON(w, http.StatusOK, listing(t, last, page...))
	})
	srv, rec := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: srv.URL})

	from := time.Unix(t0-60*1000, 0) // well before the page's oldest post
	r, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
		Want: []ports.RedditWant{{Community: community, Since: from}}})
	n := 0
	for _, h := range rec.Hits() {
		if strings.HasSuffix(h.Path, ".json") {
			n++
		}
	}
	if n > 2 {
		t.Errorf("%d requests for one page whose cursor loops, want at most 2", n)
	}
	if err == nil && len(r.Covered) == 1 && r.Via == ports.RedditViaJSON {
		t.Errorf("read answered %+v from a listing whose cursor loops: its cover would move the checkpoint over the posts it never reached", r.Covered[0])
	}
}
