package reddit_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/ports"
)

// arcticShift plays Arctic Shift's /api/posts/search over its items, in
// the shape of its API (github.com/ArthurHeitmann/arctic_shift,
// api/README.md, and testdata/arcticshift_posts.json): subreddit, after
// and before (epoch seconds, both exclusive), sort asc|desc by
// created_utc, limit 1 to 100 (25 by default), and {"data": [...]}.
type arcticShift struct {
	t     testing.TB
	mu    sync.Mutex
	items []map[string]any
	sorts []string // the sort of each request, in order
}

func (a *arcticShift) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	after, _ := strconv.ParseInt(q.Get("after"), 10, 64)
	before, _ := strconv.ParseInt(q.Get("before"), 10, 64)
	limit := 25
	if l := q.Get("limit"); l != "" {
		limit, _ = strconv.Atoi(l)
	}
	if limit < 1 || limit > 100 {
		writeJSON(w, http.StatusBadRequest, []byte(`{"error": "limit must be between 1 and 100"}`))
		return
	}
	a.mu.Lock()
	a.sorts = append(a.sorts, q.Get("sort"))
	var page []map[string]any
	for _, it := range a.items {
		c := int64(it["created_utc"].(float64))
		if it["subreddit"] != q.Get("subreddit") || (q.Has("after") && c <= after) || (q.Has("before") && c >= before) {
			continue
		}
		page = append(page, it)
	}
	a.mu.Unlock()
	slices.SortStableFunc(page, func(x, y map[string]any) int {
		if q.Get("sort") == "asc" {
			return cmp.Compare(x["created_utc"].(float64), y["created_utc"].(float64))
		}
		return cmp.Compare(y["created_utc"].(float64), x["created_utc"].(float64))
	})
	body, err := json.Marshal(map[string]any{"data": page[:min(limit, len(page))]})
	if err != nil {
		a.t.Error(err)
	}
	writeJSON(w, http.StatusOK, body)
}

func (a *arcticShift) Sorts() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.sorts)
}

// A community read alone from the archive with more items since its
// checkpoint than one read takes (10 pages of 100): the read covers from
// the checkpoint up to where it stopped, so moving the checkpoint there
// passes over nothing, and the next read from there gets the rest. Read
// newest first, the first read covered only its newest 1,000 items, and
// the 100 between the checkpoint and them were never read.
func TestArchiveCutReadCoversFromSince(t *testing.T) {
	c := newClock()
	rsrv, _ := serve(t, c, failingReddit(status(http.StatusForbidden, `{"message": "Forbidden", "error": 403}`)))
	arch := &arcticShift{t: t}
	since := time.Unix(t0-20000, 0).UTC()
	const total = 1100
	want := map[string]bool{}
	for i := range total {
		id := fmt.Sprintf("c%04d", i)
		// Two items a second, some seconds with three, so page ends
		// fall inside seconds.
		created := since.Unix() + 1 + int64(i)/2
		if i%7 == 0 {
			created = since.Unix() + 1 + int64(i-1)/2
		}
		arch.items = append(arch.items, selfPost(id, max(created, since.Unix()+1)))
		want["t3_"+id] = true
	}
	msrv, _ := serve(t, c, arch)
	src := newSource(t, c, nil, reddit.Config{BaseURL: rsrv.URL, MirrorURL: msrv.URL})
	ctx := context.Background()

	got := map[string]bool{}
	from := since
	for read := 1; read <= 3 && len(got) < total; read++ {
		r, err := src.Read(ctx, ports.RedditQuery{Listing: ports.RedditPosts,
			Want: []ports.RedditWant{{Community: community, Since: from}}})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Covered) != 1 {
			t.Fatalf("read %d: cover %+v", read, r.Covered)
		}
		cv := r.Covered[0]
		if !cv.Complete || !cv.From.Equal(from) {
			t.Fatalf("read %d: cover %+v, want complete from %s", read, cv, from)
		}
		for _, p := range r.Posts {
			if p.CreatedAt.After(from) && !p.CreatedAt.After(cv.Until) {
				got[p.Post.ExternalID] = true
			}
		}
		// Every item the archive holds in (from, Until] was read.
		for _, it := range arch.items {
			at := time.Unix(int64(it["created_utc"].(float64)), 0)
			if id := it["name"].(string); at.After(from) && !at.After(cv.Until) && !got[id] {
				t.Fatalf("read %d: covered %s to %s, but %s of %s was not read", read, from, cv.Until, id, at.UTC())
			}
		}
		if read == 1 {
			if len(r.Posts) < 900 || len(r.Posts) > 1000 || !cv.Until.Before(time.Unix(since.Unix()+total/2, 0)) {
				t.Errorf("first read: %d posts, covered to %s: want about 1,000, short of the newest", len(r.Posts), cv.Until)
			}
			if _, ok := r.ArchiveLag[community]; ok {
				t.Errorf("a cut read reports archive lag %s, which it cannot know", r.ArchiveLag[community])
			}
		}
		if !cv.Until.After(from) {
			t.Fatalf("read %d: covered to %s, no further than %s", read, cv.Until, from)
		}
		from = cv.Until
	}
	if len(got) != total {
		t.Errorf("read %d of the %d items the archive holds", len(got), total)
	}
	for _, s := range arch.Sorts() {
		if s != "asc" {
			t.Errorf("archive asked with sort=%s; a read from a checkpoint goes oldest first: %v", s, arch.Sorts())
			break
		}
	}
}

// An archive that answers a full page newest first although asked oldest
// first would make the next page, after that page's newest item, skip
// what lies between: the read fails and nothing is covered.
func TestArchiveIgnoringSortFails(t *testing.T) {
	c := newClock()
	rsrv, _ := serve(t, c, failingReddit(status(http.StatusForbidden, `{"message": "Forbidden", "error": 403}`)))
	var page []map[string]any
	for i := range 100 {
		page = append(page, selfPost(fmt.Sprintf("d%03d", i), t0-100-int64(i)))
	}
	body, err := json.Marshal(map[string]any{"data": page})
	if err != nil {
		t.Fatal(err)
	}
	msrv, _ := serve(t, c, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, body) }))
	src := newSource(t, c, nil, reddit.Config{BaseURL: rsrv.URL, MirrorURL: msrv.URL})
	r, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
		Want: []ports.RedditWant{{Community: community, Since: time.Unix(t0-5000, 0)}}})
	if err == nil {
		t.Fatalf("read an archive that ignores sort=asc: cover %+v", r.Covered)
	}
	if len(r.Covered) != 0 || len(r.Posts) != 0 {
		t.Errorf("failed read still covered %+v with %d posts", r.Covered, len(r.Posts))
	}
}
