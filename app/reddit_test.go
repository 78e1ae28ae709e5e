package app

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/bus"
	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// poller returns a reddit poller over w's stores, on the clock.
func (w world) poller(src ports.RedditSource, c ports.Clock, holder string, pub ports.Publisher) *Reddit {
	return NewReddit(w.pollerDeps(src, c, holder, pub))
}

// pollerDeps are the ports of w.poller, for a test that changes one.
func (w world) pollerDeps(src ports.RedditSource, c ports.Clock, holder string, pub ports.Publisher) RedditDeps {
	return RedditDeps{Phrases: w.phrases, Matches: w.matches, Source: src, Checkpoints: gormstore.NewRedditStore(w.db),
		Leases: w.leases, Publisher: pub, Clock: c, Log: quiet, Holder: holder}
}

// newRedditWorld is a world with one owner, a@example.com, and a
// simulated clock set to the wall clock.
func newRedditWorld(t *testing.T) (world, *simClock, core.Owner) {
	t.Helper()
	w := newWorld(t)
	c := newSimClock()
	c.Set(time.Now())
	return w, c, w.owner(t, "a@example.com")
}

// matchedIDs returns the external ids of the owner's matches, one entry a
// match.
func (w world) matchedIDs(t *testing.T, owner string) []string {
	t.Helper()
	var out []string
	var before time.Time
	for {
		ms, more, err := w.matches.Matches(context.Background(), owner, ports.MatchFilter{MinScore: -1, Limit: 100, Before: before})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			out = append(out, m.Post.ExternalID)
		}
		if !more || len(ms) == 0 {
			break
		}
		before = ms[len(ms)-1].CreatedAt
	}
	slices.Sort(out)
	return out
}

func TestRedditCycle(t *testing.T) {
	t.Parallel()
	databases(t, testRedditCycle)
}

func testRedditCycle(t *testing.T, w world) {
	ctx := context.Background()
	c := newSimClock()
	a, b := w.owner(t, "a@example.com"), w.owner(t, "b@example.com")
	pa := w.phrase(t, a.ID, "generics", "golang")
	pb := w.phrase(t, b.ID, "go modules", "r/golang")
	paused := w.phrase(t, a.ID, "paused thing", "golang")
	w.phrases.SetPhraseStatus(ctx, a.ID, paused.ID, core.Paused)
	rust := w.phrase(t, b.ID, "borrow checker", "rust")

	f := newFakeReddit(t, c)
	// The phrases were made on the wall clock; posts go just after.
	c.Set(time.Now())
	made := c.Now().Add(time.Second)
	p1 := f.add("golang", ports.RedditPosts, "how do I use generics with go modules?", made, made, time.Time{})
	f.add("golang", ports.RedditPosts, "the paused thing should match nothing", made, made, time.Time{})
	p3 := f.add("golang", ports.RedditComments, strings.Repeat("é", 2500)+" generics", made, made, time.Time{})
	p4 := f.add("rust", ports.RedditComments, "the borrow checker again", made, made, time.Time{})
	f.add("rust", ports.RedditPosts, "generics belong to golang's phrase, not here", made, made, time.Time{})
	c.Advance(2 * time.Second)

	mem, _ := bus.Open("memory://", bus.Config{Logger: quiet})
	defer mem.Close()
	poller := w.poller(f.source(t, false, time.Minute, false), c, "replica-1", mem)
	st, err := poller.Cycle(ctx, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// Two quiet communities: one request per listing for both.
	if st.Communities != 2 || st.Read != 2 || st.Requests != 2 || st.Reads != 2 {
		t.Fatalf("cycle: %+v", st)
	}
	if got, want := w.matchedIDs(t, a.ID), []string{p3, p1}; !slices.Equal(got, sorted(want)) {
		t.Fatalf("A's matches %v, want %v", got, want)
	}
	if got, want := w.matchedIDs(t, b.ID), []string{p1, p4}; !slices.Equal(got, sorted(want)) {
		t.Fatalf("B's matches %v, want %v", got, want)
	}
	ma, _, _ := w.matches.Matches(ctx, a.ID, ports.MatchFilter{MinScore: -1, Limit: 10})
	for _, m := range ma {
		if m.PhraseID != pa.ID || m.Platform != core.Reddit || len([]rune(m.Post.Text)) > core.MaxPostText {
			t.Fatalf("A's match: %+v", m)
		}
	}
	for _, p := range []core.Phrase{pa, pb, rust} {
		got, _ := w.phrases.Phrase(ctx, p.OwnerID, p.ID)
		if got.LastSource != core.SourceReddit || !got.LastCheckedAt.After(p.LastCheckedAt) {
			t.Fatalf("phrase after the cycle: %+v", got)
		}
	}

	// Another replica in the same cycle leaves both alone; the next cycle
	// never stores a post twice.
	req, _, _ := f.counts()
	other := w.poller(f.source(t, false, time.Minute, false), c, "replica-2", mem)
	if st, err := other.Cycle(ctx, time.Minute); err != nil || st.Communities != 0 {
		t.Fatalf("second replica: %+v %v", st, err)
	}
	if r, _, _ := f.counts(); r != req {
		t.Fatal("a second replica read reddit in the same cycle")
	}
	c.Advance(time.Minute)
	if _, err := poller.Cycle(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	if got := w.matchedIDs(t, a.ID); len(got) != 2 {
		t.Fatalf("A has %d matches after a second cycle, want still 2", len(got))
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// Reddit refuses for several cycles while the archive lags behind it;
// then reddit answers again. Every post is matched, once.
func TestRedditNothingLostOnFallback(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, c, o := newRedditWorld(t)
	for _, comm := range []string{"saas", "startups"} {
		w.phrase(t, o.ID, "acme", comm)
	}
	f := newFakeReddit(t, c)
	interval := time.Minute
	poller := w.poller(f.source(t, true, interval, false), c, "r1", nil)
	cycle := func() RedditCycle {
		t.Helper()
		st, err := poller.Cycle(ctx, interval)
		if err != nil {
			t.Fatal(err)
		}
		c.Advance(interval)
		return st
	}
	var want []string
	add := func(comm string, l ports.RedditListing, archiveLag time.Duration) {
		now := c.Now()
		archived := now.Add(archiveLag)
		if archiveLag < 0 {
			archived = time.Time{} // the archive never gets it
		}
		want = append(want, f.add(comm, l, "is acme any good", now.Add(-time.Second), now, archived))
	}

	c.Advance(time.Second)
	cycle() // a first look while all is well
	f.setRefuse(http.StatusForbidden)
	for i := range 4 {
		// Some posts the archive has soon, some an hour late, some never.
		add("saas", ports.RedditPosts, 10*time.Second)
		add("startups", ports.RedditComments, time.Hour)
		add("saas", ports.RedditComments, -1)
		if i == 1 {
			add("startups", ports.RedditPosts, 0)
		}
		c.Advance(20 * time.Second)
		cycle()
	}
	got, _ := w.phrases.Phrases(ctx, o.ID, ports.PhraseFilter{})
	if got[0].LastSource != core.SourceMirror {
		t.Errorf("lastSource while reddit refused = %s, want mirror", got[0].LastSource)
	}
	if _, arch, _ := f.counts(); arch == 0 {
		t.Fatal("the archive was never read while reddit refused")
	}
	f.setRefuse(0)
	add("saas", ports.RedditPosts, -1)
	cycle()
	cycle()
	if got := w.matchedIDs(t, o.ID); !slices.Equal(got, sorted(want)) {
		t.Fatalf("matched %d posts %v, want each of %d once: %v", len(got), got, len(want), sorted(want))
	}
	got, _ = w.phrases.Phrases(ctx, o.ID, ports.PhraseFilter{})
	if got[0].LastSource != core.SourceReddit {
		t.Errorf("lastSource after reddit answered = %s, want reddit", got[0].LastSource)
	}
}

// A post that reddit lists only after the read that followed its making
// is matched by the next read, which overlaps the one before.
func TestRedditLatePost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, c, o := newRedditWorld(t)
	w.phrase(t, o.ID, "acme", "saas")
	f := newFakeReddit(t, c)
	interval := time.Minute
	poller := w.poller(f.source(t, false, interval, false), c, "r1", nil)

	c.Advance(10 * time.Second)
	made := c.Now().Add(-5 * time.Second)
	late := f.add("saas", ports.RedditPosts, "acme, held by the spam filter", made, c.Now().Add(30*time.Second), time.Time{})
	onTime := f.add("saas", ports.RedditPosts, "acme on time", made, made, time.Time{})
	if _, err := poller.Cycle(ctx, interval); err != nil {
		t.Fatal(err)
	}
	if got := w.matchedIDs(t, o.ID); !slices.Equal(got, []string{onTime}) {
		t.Fatalf("after the first read: %v", got)
	}
	c.Advance(interval)
	if _, err := poller.Cycle(ctx, interval); err != nil {
		t.Fatal(err)
	}
	if got, want := w.matchedIDs(t, o.ID), sorted([]string{late, onTime}); !slices.Equal(got, want) {
		t.Fatalf("after the second read: %v, want %v", got, want)
	}
}

// More reads than reddit's keyless budget allows in a cycle: the rest
// wait for the next cycle, go first there, and the archive is never read.
func TestRedditPacingNeverArchive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, c, o := newRedditWorld(t)
	var want []string
	f := newFakeReddit(t, c)
	f.perMinute = 10
	c.Advance(time.Second)
	for i := range 30 {
		comm := fmt.Sprintf("c%02d", i)
		p, _ := core.NewPhrase(o.ID, "acme", "reddit", comm)
		if _, err := w.phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 100}, ports.Idempotency{}); err != nil {
			t.Fatal(err)
		}
		want = append(want, f.add(comm, ports.RedditPosts, "acme", c.Now(), c.Now(), c.Now()),
			f.add(comm, ports.RedditComments, "acme too", c.Now(), c.Now(), c.Now()))
	}
	c.Advance(time.Second)
	interval := 15 * time.Second // the budget fits three requests a cycle
	// A small overlap, so that only the checkpoints keep the comments
	// that wait behind the posts.
	deps := w.pollerDeps(f.source(t, true, interval, false), c, "r1", nil)
	deps.Overlap = time.Second
	poller := NewReddit(deps)
	var deferred []int
	for range 5 {
		start := c.Now()
		st, err := poller.Cycle(ctx, interval)
		if err != nil {
			t.Fatal(err)
		}
		deferred = append(deferred, st.Deferred)
		c.Set(start.Add(interval))
	}
	// 30 new communities: 3 groups a listing, 6 reads; 3 fit a cycle.
	if deferred[0] == 0 || deferred[len(deferred)-1] != 0 {
		t.Errorf("reads left per cycle = %v, want some at first and none at the end", deferred)
	}
	if got := w.matchedIDs(t, o.ID); !slices.Equal(got, sorted(want)) {
		t.Fatalf("matched %d of %d posts", len(got), len(want))
	}
	if _, arch, tooMany := f.counts(); arch != 0 || tooMany != 0 {
		t.Errorf("archive requests %d (want 0), 429s %d (want 0)", arch, tooMany)
	}
}

func TestRedditStatus(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, c, o := newRedditWorld(t)
	w.phrase(t, o.ID, "acme", "saas")
	w.phrase(t, o.ID, "acme", "startups")
	w.phrase(t, o.ID, "widget", "saas")
	f := newFakeReddit(t, c)
	f.add("saas", ports.RedditPosts, "acme", c.Now().Add(-2*time.Minute), c.Now(), c.Now())
	poller := w.poller(f.source(t, true, time.Minute, false), c, "r1", nil)
	if _, err := poller.Cycle(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	c.Advance(time.Minute)
	f.setRefuse(http.StatusForbidden)
	if _, err := poller.Cycle(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	health := NewRedditHealth(w.phrases, gormstore.NewRedditStore(w.db), c)
	rows, err := health.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Community != "saas" || rows[0].Phrases != 2 || rows[1].Community != "startups" {
		t.Fatalf("rows = %+v", rows)
	}
	s := rows[0]
	if s.LastVia != "archive" || s.LastSuccessAt.IsZero() || !strings.Contains(s.LastError, "feed: http 403") || s.ArchiveLag < 3*time.Minute || s.ArchiveLag > 4*time.Minute {
		t.Errorf("saas: %+v", s)
	}
}

// Without an archive, reads that reddit refuses keep the checkpoint, the
// status says why, and the posts come once reddit answers.
func TestRedditRefusedWithoutArchive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w, c, o := newRedditWorld(t)
	w.phrase(t, o.ID, "acme", "saas")
	w.phrase(t, o.ID, "acme", "startups")
	f := newFakeReddit(t, c)
	f.setRefuse(http.StatusTooManyRequests)
	interval := time.Minute
	poller := w.poller(f.source(t, false, interval, false), c, "r1", nil)
	var want []string
	for i := range 3 {
		c.Advance(time.Second)
		want = append(want, f.add("saas", ports.RedditListings[i%2], "acme", c.Now(), c.Now(), time.Time{}))
		st, err := poller.Cycle(ctx, interval)
		if err != nil || st.Failed != 2 || st.Read != 0 {
			t.Fatalf("cycle %d while refused: %+v %v", i, st, err)
		}
		c.Advance(interval)
	}
	rows, err := NewRedditHealth(w.phrases, gormstore.NewRedditStore(w.db), c).Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if !r.LastSuccessAt.IsZero() || r.LastError != "json: http 429, feed: http 429" || strings.Contains(r.LastError, "startups+") {
			t.Errorf("status while refused: %+v", r)
		}
	}
	f.setRefuse(0)
	if st, err := poller.Cycle(ctx, interval); err != nil || st.Read != 2 {
		t.Fatalf("cycle after reddit answers: %+v %v", st, err)
	}
	if got := w.matchedIDs(t, o.ID); !slices.Equal(got, sorted(want)) {
		t.Fatalf("matched %v, want %v", got, sorted(want))
	}
}

// refusalRun drives a poller on the fake at one interval: each cycle
// starts where the last one began plus the interval, as Run does.
type refusalRun struct {
	t        *testing.T
	w        world
	c        *simClock
	f        *fakeReddit
	o        core.Owner
	poller   *Reddit
	interval time.Duration
	cycles   int
}

func newRefusalRun(t *testing.T, interval time.Duration) *refusalRun {
	w, c, o := newRedditWorld(t)
	w.phrase(t, o.ID, "acme", "saas")
	w.phrase(t, o.ID, "acme", "startups")
	f := newFakeReddit(t, c)
	return &refusalRun{t: t, w: w, c: c, f: f, o: o, interval: interval,
		poller: w.poller(f.source(t, true, interval, false), c, "r1", nil)}
}

func (r *refusalRun) cycle() {
	r.t.Helper()
	start := r.c.Now()
	if _, err := r.poller.Cycle(context.Background(), r.interval); err != nil {
		r.t.Fatal(err)
	}
	r.cycles++
	r.c.Set(start.Add(r.interval))
}

// until runs cycles until every id in want is matched, at most n.
func (r *refusalRun) until(n int, want ...string) bool {
	r.t.Helper()
	for range n {
		r.cycle()
		got := r.w.matchedIDs(r.t, r.o.ID)
		if !slices.ContainsFunc(want, func(id string) bool { return !slices.Contains(got, id) }) {
			return true
		}
	}
	return false
}

// post adds a post and a comment to saas, made a second ago; archived
// says whether the archive has them.
func (r *refusalRun) post(archived bool) []string {
	now := r.c.Now()
	at := time.Time{}
	if archived {
		at = now
	}
	return []string{
		r.f.add("saas", ports.RedditPosts, "is acme any good", now.Add(-time.Second), now, at),
		r.f.add("saas", ports.RedditComments, "acme, yes", now.Add(-time.Second), now, at),
	}
}

func (r *refusalRun) lastSource() core.Source {
	r.t.Helper()
	ps, err := r.w.phrases.Phrases(context.Background(), r.o.ID, ports.PhraseFilter{})
	if err != nil {
		r.t.Fatal(err)
	}
	return ps[0].LastSource
}

// reddit's settings in these tests: a 1 s interval as fast test settings
// poll, and the default 10 minutes.
var refusalIntervals = []time.Duration{time.Second, 10 * time.Minute}

// fewCycles is how many cycles a change of reddit's answers may take to
// show at interval: at 1 s, the keyless budget's pacing (a request every
// 6 s) spans several cycles.
func fewCycles(interval time.Duration) int {
	if interval < time.Minute {
		return 15
	}
	return 2
}

// Reddit answers every request with 429, 403 or 503: posts and comments
// come from the archive within a few cycles, a refused way is not asked
// again every cycle, and once reddit answers, reads return to it.
func TestRedditRefusedReadsArchive(t *testing.T) {
	t.Parallel()
	for _, interval := range refusalIntervals {
		for _, status := range []int{http.StatusTooManyRequests, http.StatusForbidden, http.StatusServiceUnavailable} {
			t.Run(fmt.Sprintf("%s/%d", interval, status), func(t *testing.T) {
				t.Parallel()
				r := newRefusalRun(t, interval)
				r.c.Advance(time.Second)
				r.cycle() // a first look while all is well
				before, _, _ := r.f.counts()
				r.f.setRefuse(status)
				if status == http.StatusTooManyRequests {
					r.f.retryAfter = "120" // reddit names the pause it wants
				}
				want := r.post(true)
				if !r.until(fewCycles(interval), want...) {
					_, arch, _ := r.f.counts()
					t.Fatalf("after %d cycles the posts were not matched; archive asked %d times", r.cycles, arch)
				}
				if got := r.lastSource(); got != core.SourceMirror {
					t.Errorf("lastSource = %s, want mirror", got)
				}
				// Keep refusing for three more cycles: a refused way costs
				// no request while it rests.
				asked, _, _ := r.f.counts()
				for range 3 {
					r.cycle()
				}
				after, _, _ := r.f.counts()
				if status == http.StatusTooManyRequests && asked-before > 1 {
					t.Errorf("%d requests to reddit within the pause its 429 named, want 1", asked-before)
				}
				if interval < time.Minute && after != asked {
					t.Errorf("%d requests to reddit in 3 cycles while it refused and its ways rest, want 0", after-asked)
				}
				if interval >= time.Minute && after-asked > 3 {
					t.Errorf("%d requests to reddit in 3 cycles while it refused, want at most one a cycle", after-asked)
				}

				r.f.setRefuse(0)
				r.f.retryAfter = ""
				back := r.post(false)       // only reddit has these
				if !r.until(200, back...) { // past the 120 s pause and the feeds' one-minute rest
					js, fd := r.f.ways()
					t.Fatalf("reddit answers again, yet its posts were not matched after %d cycles (json %d, feed %d)", r.cycles, js, fd)
				}
				if got := r.lastSource(); got != core.SourceReddit {
					t.Errorf("lastSource after reddit answers = %s, want reddit", got)
				}
			})
		}
	}
}

// Reddit refuses keyless JSON with its block page, as it does for server
// addresses, while the feeds answer: posts and comments come through the
// feeds, JSON is not asked every cycle, and when JSON answers again
// (after the refused rest) reads return to it.
func TestRedditKeylessJSONRefused(t *testing.T) {
	t.Parallel()
	for _, interval := range refusalIntervals {
		t.Run(interval.String(), func(t *testing.T) {
			t.Parallel()
			r := newRefusalRun(t, interval)
			r.f.refuseKeylessJSON(http.StatusForbidden)
			r.c.Advance(time.Second)
			want := r.post(false)
			if !r.until(fewCycles(interval), want...) {
				json, feed := r.f.ways()
				t.Fatalf("after %d cycles the posts were not matched; json asked %d times, feeds %d", r.cycles, json, feed)
			}
			for range 5 {
				r.cycle()
			}
			if json, _ := r.f.ways(); json != 1 {
				t.Errorf("keyless JSON asked %d times in %d cycles, want once", json, r.cycles)
			}
			if _, arch, _ := r.f.counts(); arch != 0 {
				t.Errorf("archive asked %d times while the feeds answered", arch)
			}
			if got := r.lastSource(); got != core.SourceReddit {
				t.Errorf("lastSource = %s, want reddit", got)
			}
			rows, _ := NewRedditHealth(r.w.phrases, gormstore.NewRedditStore(r.w.db), r.c).Status(context.Background())
			if len(rows) == 0 || rows[0].LastVia != ports.RedditViaFeed {
				t.Errorf("status: %+v, want read through the feeds", rows)
			}

			r.f.refuseKeylessJSON(0)
			r.c.Advance(reddit.DefaultRefusedRest)
			jsonBefore, _ := r.f.ways()
			back := r.post(false)
			if !r.until(fewCycles(interval)*2, back...) {
				t.Fatalf("JSON answers again, yet the posts were not matched after %d cycles", r.cycles)
			}
			if json, _ := r.f.ways(); json == jsonBefore {
				t.Error("JSON answers again but is never asked")
			}
			rows, _ = NewRedditHealth(r.w.phrases, gormstore.NewRedditStore(r.w.db), r.c).Status(context.Background())
			if len(rows) == 0 || rows[0].LastVia != ports.RedditViaJSON {
				t.Errorf("status: %+v, want read through JSON again", rows)
			}
		})
	}
}
