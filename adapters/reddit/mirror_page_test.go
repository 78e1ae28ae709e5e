package reddit_test

import (
	"context"
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
	// The oldest hundred, one of them undecodable, then twenty newer.
	arch := &arcticShift{t: t}
	for i := range 100 {
		arch.items = append(arch.items, selfPost(fmt.Sprintf("a%03d", i), t0-1100+int64(i)))
	}
	arch.items[50]["score"] = "lots"
	for i := range 20 {
		arch.items = append(arch.items, selfPost(fmt.Sprintf("b%03d", i), t0-100+int64(i)))
	}
	msrv, mrec := serve(t, c, arch)
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
