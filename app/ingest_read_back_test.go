package app

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
)

// After the clock was set back an hour, a helper's batch still records
// its read of the phrases, at the present: the record of a read an hour
// "ahead" held off every record until the clock passed it, so a phrase
// showed as read at a time not come yet, and no helper stopping in that
// hour showed.
func TestIngestRecordsHelperReadAfterTheClockWentBack(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		o := w.owner(t, "back@example.com")
		p := w.phraseOn(t, o.ID, "acme", "x", "")
		ahead := p.CreatedAt.Add(2 * time.Hour)
		c := &handClock{now: ahead}
		ingest := NewIngest(IngestDeps{Matches: w.matches, Accounts: gormstore.NewAccountStore(w.db), Matchers: NewMatchers(w.phrases), Log: quiet, Clock: c},
			core.Limits{AccountsPerPlatform: 1})
		if _, _, _, err := ingest.Ingest(ctx, o.ID, "x", nil); err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		c.now = ahead.Add(-time.Hour + 2*time.Minute) // set back an hour, two minutes on
		c.mu.Unlock()
		if _, _, _, err := ingest.Ingest(ctx, o.ID, "x", nil); err != nil {
			t.Fatal(err)
		}
		got, err := w.phrases.Phrase(ctx, o.ID, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !got.LastCheckedAt.Equal(c.Now()) {
			t.Fatalf("checked at %v after the clock went back, want the present %v", got.LastCheckedAt, c.Now())
		}
	})
}
