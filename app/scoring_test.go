package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/earshothq/earshot/adapters/bus"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/score"
	"github.com/earshothq/earshot/ports"
)

// storeMatches stores n matches of one owner in batches of 100 and
// returns them.
func storeMatches(t *testing.T, w world, n int) []core.Match {
	t.Helper()
	o := w.owner(t, "s"+randomHexT(t)+"@example.com")
	p := w.phrase(t, o.ID, "acme crm", "golang")
	var out []core.Match
	for i := 0; i < n; i += 100 {
		var batch []ports.PostMatches
		for j := i; j < min(i+100, n); j++ {
			batch = append(batch, ports.PostMatches{PhraseIDs: []string{p.ID}, Post: core.Post{
				ExternalID: fmt.Sprintf("t3_%d", j), Text: "where can I buy acme crm?", URL: "https://example.com/p"}})
		}
		res, err := w.matches.SaveMatches(context.Background(), o.ID, core.Reddit, batch)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res.Matches...)
	}
	return out
}

// countingStore counts the transactions that store scores and the
// claims.
type countingStore struct {
	ports.MatchStore
	mu      sync.Mutex
	batches []int
	claims  int
}

func (s *countingStore) ClaimUnscored(ctx context.Context, limit int, lease time.Duration) ([]core.Match, error) {
	s.mu.Lock()
	s.claims++
	s.mu.Unlock()
	return s.MatchStore.ClaimUnscored(ctx, limit, lease)
}

func (s *countingStore) SetScores(ctx context.Context, u []ports.ScoreUpdate, plan ports.DeliveryPlan) ([]core.Match, error) {
	s.mu.Lock()
	s.batches = append(s.batches, len(u))
	s.mu.Unlock()
	return s.MatchStore.SetScores(ctx, u, plan)
}

// gatedScorer scores by the rules once its gate opens, and records the
// most calls it saw at once.
type gatedScorer struct {
	gate     chan struct{}
	mu       sync.Mutex
	inFlight int
	most     int
	calls    atomic.Int64
}

func (g *gatedScorer) Score(ctx context.Context, m core.Match) (core.Score, error) {
	g.mu.Lock()
	g.inFlight++
	g.most = max(g.most, g.inFlight)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inFlight--
		g.mu.Unlock()
	}()
	select {
	case <-g.gate:
	case <-ctx.Done():
		return core.Score{}, ctx.Err()
	}
	g.calls.Add(1)
	return score.Rules{}.Score(ctx, m)
}

// TestScoringBatches: a backlog is scored many per transaction, with no
// more scorer calls at once than there are workers.
func TestScoringBatches(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ms := storeMatches(t, w, 1000)
	store := &countingStore{MatchStore: w.matches}
	sc := &gatedScorer{gate: make(chan struct{})}
	close(sc.gate)
	s := NewScoring(ScoringDeps{Matches: store, Scorer: sc, Log: quiet}, ScoringConfig{Batch: 100, Workers: 4})
	n, err := s.Sweep(context.Background())
	if err != nil || n != len(ms) {
		t.Fatalf("Sweep = %d, %v; want %d", n, err, len(ms))
	}
	if len(store.batches) != 10 {
		t.Fatalf("%d transactions stored the scores (%v), want 10", len(store.batches), store.batches)
	}
	if sc.most > 4 {
		t.Fatalf("%d scorer calls at once, want at most 4", sc.most)
	}
	for _, m := range ms[:10] {
		got, err := w.matches.Match(context.Background(), m.OwnerID, m.ID)
		if err != nil || got.Score == nil {
			t.Fatalf("match %s not scored: %+v %v", m.ID, got, err)
		}
	}
}

// TestSweepClaims: a sweep ends with the claim that finds less than a
// batch, and claims once more only after a full one.
func TestSweepClaims(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, c := range []struct{ stored, batch, claims int }{{3, 10, 1}, {4, 2, 3}, {0, 10, 1}} {
		ms := storeMatches(t, w, c.stored)
		store := &countingStore{MatchStore: w.matches}
		s := NewScoring(ScoringDeps{Matches: store, Scorer: score.Rules{}, Log: quiet}, ScoringConfig{Batch: c.batch})
		n, err := s.Sweep(context.Background())
		if err != nil || n != len(ms) || store.claims != c.claims {
			t.Fatalf("%d stored, batch %d: Sweep = %d, %v after %d claims; want %d after %d", c.stored, c.batch, n, err, store.claims, len(ms), c.claims)
		}
	}
}

// TestScoringWake: with an interval of an hour, a wake alone gets a new
// match scored. In a bubble: time stands still unless every goroutine
// waits, so no timer of the loop can score in its place.
func TestScoringWake(t *testing.T) {
	t.Parallel()
	w := newWorld(t) // outside the bubble: the store's statement cache keeps a goroutine for the database's life
	synctest.Test(t, func(t *testing.T) {
		sc := &gatedScorer{gate: make(chan struct{})}
		close(sc.gate)
		s := NewScoring(ScoringDeps{Matches: w.matches, Scorer: sc, Log: quiet}, ScoringConfig{Interval: time.Hour})
		ms := storeMatches(t, w, 3)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); s.Run(ctx) }()
		defer func() { cancel(); <-done }()
		// Run sweeps once at start, then waits.
		synctest.Wait()
		wantScored(t, w, ms)
		if sc.calls.Load() == 0 {
			t.Fatal("scored without the scorer")
		}
		more := storeMatches(t, w, 2)
		s.Wake()
		synctest.Wait()
		wantScored(t, w, more)
	})
}

// TestScoringAfterACrash: matches a killed process had claimed are
// scored one lease after the start, though the interval is an hour and
// nothing wakes the loop. In a bubble, whose clock moves as soon as
// every goroutine waits.
func TestScoringAfterACrash(t *testing.T) {
	t.Parallel()
	w := newWorld(t) // outside the bubble, as in TestScoringWake
	synctest.Test(t, func(t *testing.T) {
		const lease = 300 * time.Millisecond
		ms := storeMatches(t, w, 3)
		// The process before the crash claimed them and died.
		claimed, err := w.matches.ClaimUnscored(context.Background(), 10, lease)
		if err != nil || len(claimed) != len(ms) {
			t.Fatalf("ClaimUnscored = %d matches, %v", len(claimed), err)
		}
		scored := make(chan core.Match, len(ms))
		s := NewScoring(ScoringDeps{Matches: w.matches, Scorer: score.Rules{}, Log: quiet,
			Scored: func(_ context.Context, m core.Match) { scored <- m }},
			ScoringConfig{Interval: time.Hour, Lease: lease})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); s.Run(ctx) }()
		defer func() { cancel(); <-done }()
		deadline := time.After(time.Minute)
		for range ms {
			select {
			case <-scored:
			case <-deadline:
				t.Fatal("the claimed matches were not scored within a minute")
			}
		}
		wantScored(t, w, ms)
	})
}

// wantScored fails t unless every match of ms is scored.
func wantScored(t *testing.T, w world, ms []core.Match) {
	t.Helper()
	for _, m := range ms {
		got, err := w.matches.Match(context.Background(), m.OwnerID, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Score == nil {
			t.Fatalf("match %s not scored", m.ID)
		}
	}
}

// TestScoringBacklogBounded keeps 100,000 stored matches waiting to be
// scored while their events go through the in-process bus: the number of
// goroutines stays under a bound that does not grow with the backlog,
// and once the scorer moves every match is scored. It counts only the
// goroutines it started, and those they started (they carry its
// profiler label), so other tests may run beside it.
func TestScoringBacklogBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("stores 100,000 matches")
	}
	t.Parallel()
	const n, capacity = 100_000, 256
	w := newWorld(t)
	ms := storeMatches(t, w, n)
	sc := &gatedScorer{gate: make(chan struct{})}
	var scored atomic.Int64
	all := make(chan struct{})
	s := NewScoring(ScoringDeps{Matches: w.matches, Scorer: sc, Log: quiet, Scored: func(context.Context, core.Match) {
		if scored.Add(1) == n {
			close(all)
		}
	}}, ScoringConfig{Interval: time.Hour, Workers: 4})
	label := pprof.Labels("test", t.Name())
	ctx, cancel := context.WithCancel(pprof.WithLabels(context.Background(), label))
	pprof.SetGoroutineLabels(ctx)
	defer pprof.SetGoroutineLabels(context.Background())
	var dropped atomic.Int64
	b, err := bus.Open("memory://", bus.Config{Logger: quiet, MemoryCapacity: capacity, Dropped: func(topic string, k int) {
		dropped.Add(int64(k))
		if topic == TopicMatchStored {
			s.Wake()
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := s.Listen(ctx, b); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	defer func() { cancel(); <-done }()

	before := labelled(t, "test", t.Name())
	for i := 0; i < n; i += 100 {
		announce(ctx, b, quiet, ms[i:i+100])
	}
	if g, bound := labelled(t, "test", t.Name()), before+3*capacity+100; g > bound {
		t.Fatalf("%d goroutines with %d matches waiting, want at most %d", g, n, bound)
	}
	close(sc.gate)
	select {
	case <-all:
	case <-time.After(5 * time.Minute):
		t.Fatalf("%d of %d matches scored after 5 minutes", sc.calls.Load(), n)
	}
	if left, err := w.matches.ClaimUnscored(ctx, 1, 0); err != nil || len(left) != 0 {
		t.Fatalf("once %d scores were stored, ClaimUnscored = %d matches, %v", n, len(left), err)
	}
	t.Logf("%d events dropped by the bus", dropped.Load())
}

// labelled counts the goroutines that carry the profiler label key=value.
func labelled(t *testing.T, key, value string) int {
	t.Helper()
	var out bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&out, 1); err != nil {
		t.Fatal(err)
	}
	// Records of the form "N @ pc...", then "# labels: {...}" when the
	// goroutines have labels, then their stack, then a blank line.
	want, _ := json.Marshal(map[string]string{key: value})
	total := 0
	for _, rec := range strings.Split(out.String(), "\n\n") {
		head, rest, _ := strings.Cut(rec, "\n")
		var k int
		if _, err := fmt.Sscanf(head, "%d @", &k); err != nil {
			continue
		}
		labels, _, _ := strings.Cut(rest, "\n")
		if l, ok := strings.CutPrefix(labels, "# labels: "); ok && strings.Contains(l, strings.Trim(string(want), "{}")) {
			total += k
		}
	}
	return total
}

// cancelOnFirst cancels a context at its first call and scores by the
// rules whatever the context says, as a scorer that never looks at it.
type cancelOnFirst struct {
	cancel context.CancelFunc
	once   sync.Once
}

func (c *cancelOnFirst) Score(ctx context.Context, m core.Match) (core.Score, error) {
	c.once.Do(c.cancel)
	return score.Rules{}.Score(ctx, m)
}

// TestScoringSweepStops: a sweep whose context ends stops after the batch
// under way, not at the end of the backlog, so a stop never waits for
// the backlog.
func TestScoringSweepStops(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	storeMatches(t, w, 500)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s := NewScoring(ScoringDeps{Matches: w.matches, Scorer: &cancelOnFirst{cancel: cancel}, Log: quiet}, ScoringConfig{Batch: 10})
	n, err := s.Sweep(ctx)
	if n > 10 || err == nil {
		t.Fatalf("Sweep after its context ended = %d, %v; want at most one batch of 10 and the context's error", n, err)
	}
}
