package app

import (
	"context"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// leavingCaller is the phrase store as a request sees it when its caller
// goes away just as the phrase is stored: the request's context ends
// once the phrase is in.
type leavingCaller struct {
	ports.PhraseStore
	leave context.CancelFunc
}

func (s leavingCaller) CreatePhrase(ctx context.Context, p *core.Phrase, l core.Limits, idem ports.Idempotency) (bool, error) {
	replayed, err := s.PhraseStore.CreatePhrase(ctx, p, l, idem)
	s.leave()
	return replayed, err
}

// A phrase stored is filled from the window even when the caller that
// added it goes away before the answer: the phrase is there, and a
// replay of the request (its Idempotency-Key) asks for no fill.
func TestPhraseAddedAsCallerLeavesIsFilled(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ww := newWindowWorld(t, w, week, false)
		o := w.owner(t, "leaving@example.com")
		ww.send(t, o.ID, "a: we need a new crm soon")
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		phrases := NewPhrases(leavingCaller{PhraseStore: w.phrases, leave: cancel}, core.Limits{PhrasesPerPlatform: 100}, ww.clock)
		phrases.OnAdd(ww.window.Added)
		p, _, err := phrases.Add(ctx, o.ID, "new crm", "x", "", "key-1")
		if err != nil {
			t.Fatal(err)
		}
		waiting, err := ww.recent.Backfills(context.Background(), 10, 50)
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range waiting {
			if q.ID == p.ID {
				return
			}
		}
		t.Fatalf("phrase %s was stored but is not waiting to be filled (%d waiting): it never will be", p.ID, len(waiting))
	})
}
