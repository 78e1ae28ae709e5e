package reddit_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/ports"
)

// A refusal says whether its way was asked: the poller counts only those
// as failed reads, so a way at rest, which sends nothing, does not show
// as reddit (or the archive) failing. Reddit answers 503 to every way and
// the archive 429 (as Arctic Shift says it is asked too often): the first
// read asks all three; the next, while all three rest, asks none, and
// still names each with the reason of its rest.
func TestRefusalSaysWhetherTheWayWasAsked(t *testing.T) {
	c := newClock()
	m := &mirror429{next: mirrorRoutes(t, reddit.MirrorArcticShift), n: 1, retryAfter: "120"}
	msrv, mrec := serve(t, c, m)
	rsrv, rrec := serve(t, c, status(503, `{"message": "Service Unavailable", "error": 503}`))
	src := newSource(t, c, nil, reddit.Config{BaseURL: rsrv.URL, MirrorURL: msrv.URL, Interval: 10 * time.Minute})
	q := ports.RedditQuery{Listing: ports.RedditPosts, Want: []ports.RedditWant{{Community: community, Since: since}}}

	r, err := src.Read(context.Background(), q)
	if err == nil {
		t.Fatal("the first read answered")
	}
	asked := []ports.RedditRefusal{
		{Via: ports.RedditViaJSON, Reason: "http 503"},
		{Via: ports.RedditViaFeed, Reason: "http 503"},
		{Via: ports.RedditViaArchive, Reason: "http 429, resting until " + c.Now().Add(120*time.Second).UTC().Format(time.RFC3339)},
	}
	if !slices.Equal(r.Refused, asked) || len(rrec.Hits()) != 2 || len(mrec.Hits()) != 1 {
		t.Fatalf("first read: refused %+v after %d reddit and %d archive requests; want %+v after 2 and 1",
			r.Refused, len(rrec.Hits()), len(mrec.Hits()), asked)
	}

	c.Set(c.Now().Add(30 * time.Second))
	r, err = src.Read(context.Background(), q)
	if err == nil {
		t.Fatal("a read while every way rests answered")
	}
	rested := slices.Clone(asked)
	for i := range rested {
		rested[i].NotAsked = true
	}
	if !slices.Equal(r.Refused, rested) || r.Requests != 0 || len(rrec.Hits()) != 2 || len(mrec.Hits()) != 1 {
		t.Errorf("read while resting: refused %+v, %d requests; want %+v and none", r.Refused, r.Requests, rested)
	}
}
