package server

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/score"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/dbtest"
)

type countedEvents struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *countedEvents) Count(event string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[event] += n
}

// idleSignal closes idle the first time a claim finds no work.
type idleSignal struct {
	ports.MatchStore
	once sync.Once
	idle chan struct{}
}

func (s *idleSignal) ClaimUnscored(ctx context.Context, limit int, lease time.Duration) ([]core.Match, error) {
	ms, err := s.MatchStore.ClaimUnscored(ctx, limit, lease)
	if err == nil && len(ms) == 0 {
		s.once.Do(func() { close(s.idle) })
	}
	return ms, err
}

// A new-match event the bus drops is counted and wakes the scoring
// sweep at once: with an interval of an hour, the match is scored.
func TestBusDropWakesScoring(t *testing.T) {
	ctx := context.Background()
	db := dbtest.Memory(t)
	o, err := core.NewOwner("drop@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := gormstore.NewOwnerStore(db).CreateOwner(ctx, &o); err != nil {
		t.Fatal(err)
	}
	p, err := core.NewPhrase(o.ID, "acme", "x", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gormstore.NewPhraseStore(db).CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 1}, ports.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	matches := gormstore.NewMatchStore(db)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	idle := &idleSignal{MatchStore: matches, idle: make(chan struct{})}
	scored := make(chan core.Match, 1)
	scoring := app.NewScoring(app.ScoringDeps{Matches: idle, Scorer: score.Rules{}, Log: log,
		Scored: func(_ context.Context, m core.Match) { scored <- m }}, app.ScoringConfig{Interval: time.Hour})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); scoring.Run(runCtx) }()
	defer func() { cancel(); <-done }()
	// The first sweep has found nothing: from now on only a wake makes
	// the next one come before the hour.
	<-idle.idle

	res, err := matches.SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{{PhraseIDs: []string{p.ID},
		Post: core.Post{ExternalID: "1", Text: "should we buy acme?", URL: "https://x.com/a/status/1"}}})
	if err != nil || len(res.Matches) != 1 {
		t.Fatalf("SaveMatches: %+v %v", res, err)
	}
	m := res.Matches[0]
	counted := &countedEvents{n: map[string]int{}}
	dropped := app.BusDrops{Metrics: counted, Scoring: scoring}.Dropped
	dropped(app.TopicMatchStored, 1)
	select {
	case <-scored:
	case <-time.After(time.Minute):
		t.Fatal("the dropped event's match was not scored within a minute")
	}
	if got, err := matches.Match(ctx, o.ID, m.ID); err != nil || got.Score == nil {
		t.Fatalf("once scored, the match reads %+v, %v", got, err)
	}
	counted.mu.Lock()
	defer counted.mu.Unlock()
	if counted.n[ports.EventBusDropped] == 0 || len(counted.n) != 1 {
		t.Fatalf("counted %v, want only %s", counted.n, ports.EventBusDropped)
	}
}
