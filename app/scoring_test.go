package app

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
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
	o := w.owner(t, fmt.Sprintf("s%d@example.com", time.Now().UnixNano()))
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
// match scored.
func TestScoringWake(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sc := &gatedScorer{gate: make(chan struct{})}
	close(sc.gate)
	s := NewScoring(ScoringDeps{Matches: w.matches, Scorer: sc, Log: quiet}, ScoringConfig{Interval: time.Hour})
	ms := storeMatches(t, w, 3)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	defer func() { cancel(); <-done }()
	// Run sweeps once at start.
	waitScored(t, w, ms, func() {})
	if sc.calls.Load() == 0 {
		t.Fatal("scored without the scorer")
	}
	more := storeMatches(t, w, 2)
	waitScored(t, w, more, s.Wake)
}

// TestScoringAfterACrash: matches a killed process had claimed are
// scored one lease after the start, though the interval is an hour and
// nothing wakes the loop.
func TestScoringAfterACrash(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ms := storeMatches(t, w, 3)
	// The process before the crash claimed them and died.
	claimed, err := w.matches.ClaimUnscored(context.Background(), 10, 300*time.Millisecond)
	if err != nil || len(claimed) != len(ms) {
		t.Fatalf("ClaimUnscored = %d matches, %v", len(claimed), err)
	}
	s := NewScoring(ScoringDeps{Matches: w.matches, Scorer: score.Rules{}, Log: quiet},
		ScoringConfig{Interval: time.Hour, Lease: 300 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitScored(t, w, ms, func() {})
}

// waitScored waits until every match of ms is scored, calling poke
// while it waits.
func waitScored(t *testing.T, w world, ms []core.Match, poke func()) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for _, m := range ms {
		for {
			got, err := w.matches.Match(context.Background(), m.OwnerID, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Score != nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("match %s not scored after a minute", m.ID)
			}
			poke()
			time.Sleep(5 * time.Millisecond)
		}
	}
}

// TestScoringBacklogBounded keeps 100,000 stored matches waiting to be
// scored while their events go through the in-process bus: the number of
// goroutines stays under a bound that does not grow with the backlog,
// and once the scorer moves every match is scored. Not parallel: it
// counts the process's goroutines.
func TestScoringBacklogBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("stores 100,000 matches")
	}
	const n, capacity = 100_000, 256
	w := newWorld(t)
	ms := storeMatches(t, w, n)
	sc := &gatedScorer{gate: make(chan struct{})}
	s := NewScoring(ScoringDeps{Matches: w.matches, Scorer: sc, Log: quiet}, ScoringConfig{Interval: time.Hour, Workers: 4})
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
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Listen(ctx, b); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	defer func() { cancel(); <-done }()

	before := runtime.NumGoroutine()
	for i := 0; i < n; i += 100 {
		announce(ctx, b, quiet, ms[i:i+100])
	}
	if g, bound := runtime.NumGoroutine(), before+3*capacity+100; g > bound {
		t.Fatalf("%d goroutines with %d matches waiting, want at most %d", g, n, bound)
	}
	close(sc.gate)
	deadline := time.Now().Add(5 * time.Minute)
	for {
		left, err := w.matches.ClaimUnscored(ctx, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(left) == 0 && sc.calls.Load() >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d matches scored after 5 minutes", sc.calls.Load(), n)
		}
		s.Wake()
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%d events dropped by the bus", dropped.Load())
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
