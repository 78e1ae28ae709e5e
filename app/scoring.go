package app

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// scoreLease is how long a replica holds a match it is scoring; if it
// dies meanwhile, the sweep takes the match again after this.
const scoreLease = time.Minute

// Scoring scores new matches: at once when the bus announces them, and in
// a sweep that finds whatever the bus lost.
type Scoring struct {
	matches ports.MatchStore
	scorer  ports.Scorer
	log     *slog.Logger
	// scored is told about every match this service scored, after the
	// score is stored (webhook deliveries hang off it).
	scored func(ctx context.Context, m core.Match) error
	// Metrics counts scores; NoMetrics until set.
	Metrics ports.Metrics
}

// NewScoring returns the scoring service.
func NewScoring(matches ports.MatchStore, scorer ports.Scorer, log *slog.Logger) *Scoring {
	return &Scoring{matches: matches, scorer: scorer, log: log, scored: func(context.Context, core.Match) error { return nil },
		Metrics: ports.NoMetrics{}}
}

// OnScored registers f to run after each score is stored.
func (s *Scoring) OnScored(f func(ctx context.Context, m core.Match) error) { s.scored = f }

// Handle scores the match an event names. It acknowledges events for
// matches gone or scored. It takes no lease: the bus hands each event to
// one replica, the store keeps only the first score, and a plain read
// costs the single writer of SQLite nothing.
func (s *Scoring) Handle(ctx context.Context, e ports.Event) error {
	var ev MatchEvent
	if err := json.Unmarshal(e.Payload, &ev); err != nil || ev.MatchID == "" {
		s.log.WarnContext(ctx, "dropping a malformed match event", "err", err)
		return nil
	}
	m, err := s.matches.Match(ctx, ev.OwnerID, ev.MatchID)
	switch {
	case core.IsKind(err, core.KindNotFound):
		return nil
	case err != nil:
		return err
	case m.Score != nil:
		return nil
	}
	return s.score(ctx, m)
}

// Sweep scores every unscored match whose lease ran out and returns how
// many it scored.
func (s *Scoring) Sweep(ctx context.Context) (int, error) {
	n := 0
	for {
		ms, err := s.matches.ClaimUnscored(ctx, 100, scoreLease)
		if err != nil || len(ms) == 0 {
			return n, err
		}
		for _, m := range ms {
			if err := s.score(ctx, m); err != nil {
				s.log.WarnContext(ctx, "scoring failed; the next sweep retries", "match", m.ID, "err", err)
				continue
			}
			n++
		}
	}
}

func (s *Scoring) score(ctx context.Context, m core.Match) error {
	sc, err := s.scorer.Score(ctx, m)
	if err != nil {
		s.Metrics.Count(ports.EventScoringFailed, 1)
		return err
	}
	got, stored, err := s.matches.SetScore(ctx, m.OwnerID, m.ID, sc)
	if err != nil || !stored {
		return err
	}
	s.Metrics.Count(ports.EventMatchesScored, 1)
	return s.scored(ctx, got)
}

// Run subscribes to new matches and sweeps at start and then every
// interval, until ctx ends.
func (s *Scoring) Run(ctx context.Context, sub ports.Subscriber, interval time.Duration) error {
	if err := sub.Subscribe(ctx, TopicMatchCreated, s.Handle); err != nil {
		return err
	}
	go every(ctx, interval, func() {
		if n, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.log.WarnContext(ctx, "scoring sweep failed", "err", err)
		} else if n > 0 {
			s.log.InfoContext(ctx, "scoring sweep", "scored", n)
		}
	})
	return nil
}

// every runs f now and then every interval until ctx ends.
func every(ctx context.Context, interval time.Duration, f func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		f()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
