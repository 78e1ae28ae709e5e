package app

import (
	"context"
	"strings"
	"testing"
	"unicode"

	"github.com/earshothq/earshot/core"
)

// byPostScorer answers with the verdict set for the match's post.
type byPostScorer map[string]core.Score

func (s byPostScorer) Score(_ context.Context, m core.Match) (core.Score, error) {
	return s[m.Post.ExternalID], nil
}

// A scorer is a port an embedder may fill: a verdict outside the spec's
// shape (a score outside 0 to 100, an intent not among core.Intents, an
// empty reason or one of several lines) is not stored, and the match
// stays unscored for a later sweep; a reason past core.MaxReasonLen is
// cut, as the model scorer cuts one.
func TestScoringRefusesVerdictsOutOfShape(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	bad := []core.Score{
		{Value: 101, Intent: core.IntentBuying, Reason: "too high"},
		{Value: -1, Intent: core.IntentBuying, Reason: "too low"},
		{Value: 50, Intent: "shopping", Reason: "unknown intent"},
		{Value: 50, Intent: "", Reason: "no intent"},
		{Value: 50, Intent: core.IntentBuying, Reason: ""},
		{Value: 50, Intent: core.IntentBuying, Reason: "two\nlines"},
		{Value: 50, Intent: core.IntentBuying, Reason: "two\u2028lines"},
	}
	good := []core.Score{
		{Value: 0, Intent: core.IntentPromotion, Reason: "spam"},
		{Value: 100, Intent: core.IntentBuying, Reason: strings.Repeat("é", core.MaxReasonLen+40)},
		{Value: 60, Intent: core.IntentBuying, Reason: "asks about \u202eacme\u202c pricing"},
	}
	all := append(append([]core.Score{}, bad...), good...)
	ms := storeMatches(t, w, len(all))
	sc := byPostScorer{}
	for i, m := range ms {
		sc[m.Post.ExternalID] = all[i]
	}
	s := NewScoring(ScoringDeps{Matches: w.matches, Scorer: sc, Log: quiet}, ScoringConfig{Batch: 100})
	n, err := s.Sweep(context.Background())
	if err != nil || n != len(good) {
		t.Fatalf("Sweep = %d, %v; want the %d verdicts in shape stored", n, err, len(good))
	}
	for i, m := range ms {
		got, err := w.matches.Match(context.Background(), m.OwnerID, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if i < len(bad) {
			if got.Score != nil {
				t.Errorf("verdict %+v stored as %+v", bad[i], *got.Score)
			}
			continue
		}
		if got.Score == nil {
			t.Fatalf("verdict %+v not stored", all[i])
		}
		if r := []rune(got.Score.Reason); len(r) > core.MaxReasonLen {
			t.Errorf("reason of %d characters stored, want at most %d", len(r), core.MaxReasonLen)
		}
		// A direction override left open in a one-line reason turns the
		// rest of the line where it is shown (an alert, a chat message).
		if strings.ContainsFunc(got.Score.Reason, func(r rune) bool { return unicode.Is(unicode.Bidi_Control, r) }) {
			t.Errorf("reason %q stored with a bidirectional control", got.Score.Reason)
		}
	}
}
