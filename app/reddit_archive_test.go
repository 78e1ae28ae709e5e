package app

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/ports"
)

// A busy community read from the archive alone, with more items since its
// checkpoint than one read takes (1,100, against 10 pages of 100): the
// first cycle reads the oldest part and moves the checkpoint only over
// it, the second reads the rest, and every item is stored once, with no
// last error claiming a span was lost.
func TestRedditArchiveBusyCommunityLosesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, c, o := newRedditWorld(t)
	w.phrase(t, o.ID, "acme", "saas")
	f := newFakeReddit(t, c)
	f.setRefuse(http.StatusForbidden)
	start := c.Now()
	var want []string
	for i := range 1100 {
		made := start.Add(time.Second + time.Duration(i)*2*time.Second)
		want = append(want, f.add("saas", ports.RedditPosts, fmt.Sprintf("acme number %d", i), made, made, made))
	}
	c.Advance(time.Hour)
	interval := 10 * time.Minute
	poller := w.poller(f.source(t, true, interval, false), c, "r1", nil)
	store := gormstore.NewRedditStore(w.db)
	health := NewRedditHealth(w.phrases, store, c)
	for cycle := 1; cycle <= 2; cycle++ {
		if _, err := poller.Cycle(ctx, interval); err != nil {
			t.Fatal(err)
		}
		rows, err := health.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 || rows[0].LastVia != "archive" {
			t.Fatalf("cycle %d: status %+v", cycle, rows)
		}
		cps, err := store.RedditCheckpoints(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, cp := range cps {
			if strings.Contains(cp.LastError, "could not be read") {
				t.Errorf("cycle %d: %s says %q, though the archive holds it all", cycle, cp.Listing, cp.LastError)
			}
		}
		got := w.matchedIDs(t, o.ID)
		if cycle == 1 && (len(got) < 900 || len(got) >= len(want)) {
			t.Fatalf("cycle 1 matched %d of %d: want the first read cut near 1,000", len(got), len(want))
		}
		if cycle == 2 && !slices.Equal(got, sorted(want)) {
			t.Fatalf("after two cycles matched %d posts, want each of %d once", len(got), len(want))
		}
		c.Advance(interval)
	}
}
