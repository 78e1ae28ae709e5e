package app

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/ports"
)

// readCounts records what the poller counts of its reads, by way.
type readCounts struct {
	mu         sync.Mutex
	ok, failed map[string]int
}

func newReadCounts() *readCounts {
	return &readCounts{ok: map[string]int{}, failed: map[string]int{}}
}

func (c *readCounts) CountRead(source string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ok {
		c.ok[source]++
	} else {
		c.failed[source]++
	}
}

func (c *readCounts) SetRemaining(string, float64) {}

func (c *readCounts) get(source string) (ok, failed int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ok[source], c.failed[source]
}

// Reddit answers 503 to every way: keyless JSON rests for its hour and
// the feeds for most of each interval, sending nothing meanwhile. A
// failed read counts only the ways that were asked, so the failures of
// each way are the requests it made, not every read during its rest: an
// operator's graph would otherwise show reddit failing while earshot
// only leaves it alone.
func TestRedditRestingWayIsNotAFailedRead(t *testing.T) {
	t.Parallel()
	for _, archive := range []bool{false, true} {
		t.Run(fmt.Sprintf("archive=%v", archive), func(t *testing.T) {
			t.Parallel()
			w, c, o := newRedditWorld(t)
			w.phrase(t, o.ID, "acme", "saas")
			f := newFakeReddit(t, c)
			f.setRefuse(http.StatusServiceUnavailable)
			counts := newReadCounts()
			interval := 10 * time.Minute
			deps := w.pollerDeps(f.source(t, archive, interval, false), c, "r1", nil)
			deps.Sources = counts
			poller := NewReddit(deps)
			c.Advance(time.Second)
			const cycles = 5 // 50 minutes, inside keyless JSON's hour of rest
			for range cycles {
				start := c.Now()
				if _, err := poller.Cycle(context.Background(), interval); err != nil {
					t.Fatal(err)
				}
				c.Set(start.Add(interval))
			}
			json, feed := f.ways()
			if json != 1 {
				t.Errorf("keyless JSON asked %d times during its rest, want once", json)
			}
			if _, failed := counts.get(ports.RedditViaJSON); failed != json {
				t.Errorf("json counted failed %d times, asked %d", failed, json)
			}
			if _, failed := counts.get(ports.RedditViaFeed); failed != feed {
				t.Errorf("feed counted failed %d times, asked %d", failed, feed)
			}
			ok, failed := counts.get(ports.RedditViaArchive)
			if _, asked, _ := f.counts(); archive && (ok != cycles*len(ports.RedditListings) || failed != 0) {
				t.Errorf("archive counted %d answers and %d failures (asked %d), want %d answers", ok, failed, asked, cycles*len(ports.RedditListings))
			}
		})
	}
}

// JSON is asked and answers 503, and the feeds' turn would come only
// after the cycle's deadline (the keyless budget allows a request a
// minute): the read is left for a later slot, yet the request JSON made
// did fail, and is counted so.
func TestRedditDeferredReadCountsTheWayAsked(t *testing.T) {
	t.Parallel()
	w, c, o := newRedditWorld(t)
	w.phrase(t, o.ID, "acme", "saas")
	f := newFakeReddit(t, c)
	f.keylessPerMinute = 1
	f.setRefuse(http.StatusServiceUnavailable)
	counts := newReadCounts()
	interval := 10 * time.Second
	deps := w.pollerDeps(f.source(t, false, interval, false), c, "r1", nil)
	deps.Sources = counts
	poller := NewReddit(deps)
	c.Advance(time.Second)
	st, err := poller.Cycle(context.Background(), interval)
	if err != nil {
		t.Fatal(err)
	}
	json, feed := f.ways()
	if json != 1 || feed != 0 || st.Failed != 0 {
		t.Fatalf("json asked %d times, feeds %d, cycle %+v: want JSON once and the read left for later", json, feed, st)
	}
	if _, failed := counts.get(ports.RedditViaJSON); failed != json {
		t.Errorf("json counted failed %d times, asked %d", failed, json)
	}
}
