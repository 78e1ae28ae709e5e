package app

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/bus"
	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// leavingStore is the match store of a request whose client goes away
// while the batch commits: the matches are stored, and the request's
// context has ended by the time the store returns.
type leavingStore struct {
	ports.MatchStore
	leave context.CancelFunc
}

func (s leavingStore) SaveMatches(ctx context.Context, ownerID string, p core.Platform, batch []ports.PostMatches) (ports.SaveResult, error) {
	saved, err := s.MatchStore.SaveMatches(ctx, ownerID, p, batch)
	s.leave()
	return saved, err
}

// A helper that gives up on a slow answer while its batch commits still
// has the matches announced for scoring: stored, they would otherwise
// wait for the backstop sweep (EARSHOT_SCORING_INTERVAL, ten minutes),
// since the helper's resend of the batch finds its posts known and
// stores, and announces, nothing.
func TestIngestAnnouncesMatchesWhenTheClientLeavesDuringTheCommit(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	o := w.owner(t, "leave@example.com")
	w.phraseOn(t, o.ID, "acme", "x", "")
	mem, err := bus.Open("memory://", bus.Config{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	got := make(chan MatchEvent, 10)
	subCtx, stopSub := context.WithCancel(context.Background())
	defer stopSub()
	if err := mem.Subscribe(subCtx, TopicMatchStored, func(_ context.Context, e ports.Event) error {
		var ev MatchEvent
		if err := json.Unmarshal(e.Payload, &ev); err != nil {
			t.Error(err)
		}
		got <- ev
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	ctx, leave := context.WithCancel(context.Background())
	ingest := NewIngest(IngestDeps{Matches: leavingStore{w.matches, leave}, Accounts: gormstore.NewAccountStore(w.db), Matchers: NewMatchers(w.phrases),
		Publisher: mem, Log: quiet}, core.Limits{AccountsPerPlatform: 1})
	if _, n, _, err := ingest.Ingest(ctx, o.ID, "x", []core.IngestPost{{ExternalID: "1", Body: []string{"acme"}, URL: "https://x.com/1"}}); err != nil || n != 1 {
		t.Fatalf("Ingest: %d stored, %v", n, err)
	}
	select {
	case ev := <-got:
		if ev.OwnerID != o.ID || len(ev.MatchIDs) != 1 {
			t.Fatalf("event %+v", ev)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no event for the stored match")
	}
}
