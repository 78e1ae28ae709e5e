package reddit_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// reddit503 answers every read, JSON or feed, 503: each of reddit's ways
// rests after one try, and the reads go to the archive.
func reddit503(t *testing.T, c *fakeClock) string {
	srv, _ := serve(t, c, status(http.StatusServiceUnavailable, `{"message": "Service Unavailable", "error": 503}`))
	return srv.URL
}

// shops are the communities of the archive tests, one item each in the
// Arctic Shift fake (mirror_cut_test.go).
func shops(n int) (*arcticShift, []ports.RedditWant) {
	arch := &arcticShift{}
	var want []ports.RedditWant
	for i := range n {
		name := fmt.Sprintf("shop%d", i)
		p := selfPost(fmt.Sprintf("s%d", i), t0-100)
		p["subreddit"], p["subreddit_name_prefixed"] = name, "r/"+name
		arch.items = append(arch.items, p)
		want = append(want, ports.RedditWant{Community: name, Since: since})
	}
	return arch, want
}

// shopsArchive is a source whose reddit answers 503 (reddit503), so
// that it reads the n shops from the Arctic Shift fake, with cfg's
// settings of the archive. It returns the source's clock, the source,
// the archive's hits and the wants of every shop.
func shopsArchive(t *testing.T, n int, cfg reddit.Config) (*fakeClock, *reddit.Source, *recorder, []ports.RedditWant) {
	c := newClock()
	arch, want := shops(n)
	arch.t = t
	msrv, hits := serve(t, c, arch)
	cfg.BaseURL, cfg.MirrorURL = reddit503(t, c), msrv.URL
	return c, newSource(t, c, nil, cfg), hits, want
}

func covered(r ports.RedditRead) []string {
	var out []string
	for _, cv := range r.Covered {
		out = append(out, cv.Community)
	}
	return out
}

// The archive is asked one community at a time: a read of many sent its
// requests back to back, up to MaxPages for each. Past a few at once
// (MirrorBurst), they are spaced by the archive's own budget, as
// reddit's are by reddit's.
func TestArchiveRequestsArePaced(t *testing.T) {
	_, src, mrec, want := shopsArchive(t, 10, reddit.Config{})
	r, err := src.Read(context.Background(), ports.RedditQuery{Listing: ports.RedditPosts, Want: want})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Covered) != 10 || r.Via != ports.RedditViaArchive {
		t.Fatalf("read via %s covered %v, want the archive and all ten", r.Via, covered(r))
	}
	hits := mrec.Hits()
	if len(hits) != 10 {
		t.Fatalf("%d archive requests, want 10", len(hits))
	}
	gap := time.Minute / reddit.DefaultMirrorPerMinute
	for i := reddit.MirrorBurst; i < len(hits); i++ {
		if d := hits[i].At.Sub(hits[i-1].At); d < gap {
			t.Errorf("archive requests %d and %d %s apart, want at least %s", i, i+1, d, gap)
		}
	}
	if d := hits[len(hits)-1].At.Sub(hits[0].At); d < time.Duration(len(hits)-reddit.MirrorBurst)*gap {
		t.Errorf("10 archive requests within %s, want them to take the budget's %s", d, time.Duration(len(hits)-reddit.MirrorBurst)*gap)
	}
}

// mirror429 answers its n-th request (from 1) 429 with retryAfter (none
// when ""), and the others with next. The archives say little of their
// limits (Arctic Shift's api/README.md names none; it reports trouble as
// {"error": "..."}); a 429's status and Retry-After are what is read.
type mirror429 struct {
	next       http.Handler
	n          int
	retryAfter string

	mu   sync.Mutex
	seen int
}

func (m *mirror429) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.seen++
	refuse := m.seen == m.n
	m.mu.Unlock()
	if !refuse {
		m.next.ServeHTTP(w, r)
		return
	}
	if m.retryAfter != "" {
		w.Header().Set("Retry-After", m.retryAfter)
	}
	writeJSON(w, http.StatusTooManyRequests, []byte(`{"error": "Too many requests"}`))
}

// A 429 from the archive rests it until the time it names: the read that
// met it keeps the communities it had read and leaves the others for
// later, and no read asks the archive again before that time. Before, the
// read failed whole and the next read asked the archive at once.
func TestArchive429RestsTheArchive(t *testing.T) {
	for _, api := range []string{reddit.MirrorArcticShift, reddit.MirrorPullPush} {
		t.Run(api, func(t *testing.T) {
			c := newClock()
			// Each community is one short page: both mirrors' fixtures
			// answer every community with the same three items.
			m := &mirror429{next: mirrorRoutes(t, api), n: 2, retryAfter: "120"}
			msrv, mrec := serve(t, c, m)
			src := newSource(t, c, nil, reddit.Config{BaseURL: reddit503(t, c), MirrorURL: msrv.URL, MirrorAPI: api})
			_, want := shops(3)
			q := ports.RedditQuery{Listing: ports.RedditPosts, Want: want}
			ctx := context.Background()

			r, err := src.Read(ctx, q)
			if err != nil {
				t.Fatalf("the read that met the 429: %v", err)
			}
			if got := covered(r); !slices.Equal(got, []string{"shop0"}) {
				t.Errorf("covered %v, want shop0, read before the 429", got)
			}
			if n := len(mrec.Hits()); n != 2 {
				t.Errorf("%d archive requests, want 2: none after the 429", n)
			}
			refusedAt := mrec.Hits()[1].At

			c.Set(refusedAt.Add(119 * time.Second))
			r, err = src.Read(ctx, q)
			if !core.IsKind(err, core.KindUnavailable) || len(mrec.Hits()) != 2 {
				t.Fatalf("a read while the archive rests: %v after %d requests; want unavailable, no request", err, len(mrec.Hits()))
			}
			if i := slices.IndexFunc(r.Refused, func(rf ports.RedditRefusal) bool { return rf.Via == ports.RedditViaArchive }); i < 0 ||
				!strings.Contains(r.Refused[i].Reason, "429") {
				t.Errorf("refusals %+v, want the archive's naming its 429", r.Refused)
			}

			c.Set(refusedAt.Add(121 * time.Second))
			r, err = src.Read(ctx, q)
			if err != nil || len(r.Covered) != 3 || len(mrec.Hits()) != 5 {
				t.Errorf("after the rest: %v, covered %v, %d requests; want all three read in 3 more", err, covered(r), len(mrec.Hits()))
			}
		})
	}
}

// A Retry-After past a day, in either of its forms, is not trusted, as
// reddit's is not: the archive rests as for a 429 that names no time, most
// of one interval.
func TestArchiveAbsurdRetryAfterIsBounded(t *testing.T) {
	for _, ra := range []string{"", "86400000", time.Unix(t0, 0).AddDate(1, 0, 0).UTC().Format(http.TimeFormat)} {
		t.Run(ra, func(t *testing.T) {
			c := newClock()
			m := &mirror429{next: mirrorRoutes(t, reddit.MirrorArcticShift), n: 1, retryAfter: ra}
			msrv, mrec := serve(t, c, m)
			src := newSource(t, c, nil, reddit.Config{BaseURL: reddit503(t, c), MirrorURL: msrv.URL, Interval: 10 * time.Minute})
			q := ports.RedditQuery{Listing: ports.RedditPosts, Want: []ports.RedditWant{{Community: community, Since: since}}}
			ctx := context.Background()
			if _, err := src.Read(ctx, q); err == nil {
				t.Fatal("read an archive that answered 429")
			}
			refusedAt := mrec.Hits()[0].At
			// Nine tenths of the interval, as reddit's ways rest.
			c.Set(refusedAt.Add(9*time.Minute - time.Second))
			if _, err := src.Read(ctx, q); err == nil || len(mrec.Hits()) != 1 {
				t.Fatalf("read while resting: %v, %d requests", err, len(mrec.Hits()))
			}
			c.Set(refusedAt.Add(9*time.Minute + time.Second))
			if r, err := src.Read(ctx, q); err != nil || len(mrec.Hits()) != 2 {
				t.Errorf("after the rest: %v, covered %v, %d requests; want the archive asked again", err, covered(r), len(mrec.Hits()))
			}
		})
	}
}

// A read whose next archive request would wait past the query's deadline
// stops there: what it read is kept, and the rest is left for later. A
// read that can send none waits for the archive's budget, as for
// reddit's, and sends nothing.
func TestArchiveBudgetEndsTheReadCleanly(t *testing.T) {
	c, src, mrec, want := shopsArchive(t, 10, reddit.Config{MirrorPerMinute: 6})
	ctx := context.Background()
	// Keyless JSON is asked at t0 and the feeds 6 s later (10 a
	// minute); the archive then five at once (MirrorBurst) at 6 s, one
	// at 16 and one at 26, and 36 s is past the deadline.
	r, err := src.Read(ctx, ports.RedditQuery{Listing: ports.RedditPosts, Want: want, Deadline: time.Unix(t0+31, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if got := covered(r); !slices.Equal(got, []string{"shop0", "shop1", "shop2", "shop3", "shop4", "shop5", "shop6"}) || len(mrec.Hits()) != 7 {
		t.Errorf("covered %v after %d archive requests, want shop0 to shop6 after 7", got, len(mrec.Hits()))
	}
	_, err = src.Read(ctx, ports.RedditQuery{Listing: ports.RedditPosts, Want: want[7:], Deadline: c.Now().Add(5 * time.Second)})
	if !core.IsKind(err, core.KindRateLimited) || !strings.Contains(err.Error(), "archive's budget") || len(mrec.Hits()) != 7 {
		t.Errorf("a read the archive's budget leaves no slot for: %v after %d requests; want rate limited, none sent", err, len(mrec.Hits()))
	}
}

// A read the archive's budget stopped part way leaves the communities it
// did not come to first for the next read, even when the others keep the
// older checkpoint (a quiet community's does not move): none is left
// behind read after read.
func TestArchiveStoppedReadResumesWithTheOthers(t *testing.T) {
	c, src, mrec, want := shopsArchive(t, 8, reddit.Config{MirrorPerMinute: 6})
	ctx := context.Background()
	seen := map[string]bool{}
	for range 3 {
		r, _ := src.Read(ctx, ports.RedditQuery{Listing: ports.RedditPosts, Want: want, Deadline: c.Now().Add(5 * time.Second)})
		for _, name := range covered(r) {
			seen[name] = true
		}
		c.Set(c.Now().Add(time.Minute))
	}
	if len(seen) != 8 {
		t.Errorf("three reads stopped by the budget read %d of the 8 communities (%d requests)", len(seen), len(mrec.Hits()))
	}
}
