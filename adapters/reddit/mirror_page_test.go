package reddit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/ports"
)

// An archive page of a full hundred items is not the archive's end
// because one of them did not decode (a field of an odd type): older
// items follow, and a read that stopped there covered a span it never
// saw, so the checkpoint moved over them.
func TestArchivePageWithAnUndecodableItemIsNotTheEnd(t *testing.T) {
	c := newClock()
	rsrv, _ := serve(t, c, failingReddit(status(http.StatusForbidden, `{"message": "Forbidden", "error": 403}`)))
	var first, second []map[string]any
	for i := range 100 {
		first = append(first, selfPost(fmt.Sprintf("a%03d", i), t0-100-int64(i)))
	}
	first[50]["score"] = "lots"
	for i := range 20 {
		second = append(second, selfPost(fmt.Sprintf("b%03d", i), t0-1000-int64(i)))
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+mirrorPaths[reddit.MirrorArcticShift][0], func(w http.ResponseWriter, r *http.Request) {
		page := first
		if r.URL.Query().Get("before") != "" {
			page = second
		}
		body, err := json.Marshal(map[string]any{"data": page})
		if err != nil {
			t.Error(err)
		}
		writeJSON(w, http.StatusOK, body)
	})
	msrv, mrec := serve(t, c, mux)
	src := newSource(t, c, nil, reddit.Config{BaseURL: rsrv.URL, MirrorURL: msrv.URL})
	r, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts,
		Want: []ports.RedditWant{{Community: community, Since: time.Unix(t0-5000, 0)}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Covered) != 1 {
		t.Fatalf("cover %+v", r.Covered)
	}
	if cv := r.Covered[0]; cv.Complete && !slices.Contains(ids(r.Posts), "t3_b000") {
		t.Errorf("cover %+v complete after %d archive requests, but t3_b000, made after since, was never read",
			cv, len(mrec.Hits()))
	}
}
