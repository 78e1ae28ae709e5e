package app

import (
	"context"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/score"
)

// stopWhileScoring is the rule-based scorer of a process told to stop
// during its batch: the sweep's context ends at the first call.
type stopWhileScoring struct{ stop context.CancelFunc }

func (s stopWhileScoring) Score(ctx context.Context, m core.Match) (core.Score, error) {
	s.stop()
	return score.Rules{}.Score(ctx, m)
}

// A stop during a batch stores the scores the scorer gave before the
// sweep returns ("after the batch under way"): thrown away, each was
// made again after the restart, a model's call paid twice.
func TestScoresOfTheBatchUnderWayAreStoredAtStop(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ms := storeMatches(t, w, 3)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		s := NewScoring(ScoringDeps{Matches: w.matches, Scorer: stopWhileScoring{stop: cancel}, Log: quiet}, ScoringConfig{})
		n, _ := s.Sweep(ctx)
		if n != len(ms) {
			t.Fatalf("the sweep stored %d scores of the batch under way, want %d", n, len(ms))
		}
		if left, err := w.matches.ClaimUnscored(context.Background(), 10, 0); err != nil || len(left) != 0 {
			t.Fatalf("%d matches left unscored (%v)", len(left), err)
		}
	})
}
