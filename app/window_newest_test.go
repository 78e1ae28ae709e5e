package app

import (
	"context"
	"fmt"
	"testing"

	"github.com/earshothq/earshot/core"
)

// A phrase that matched posts live between its add and the sweep that
// fills it is filled with the newest MaxBackfill window matches it did
// not hold yet: the ones it held take no place among them, so older
// matches left in the window fill them.
func TestWindowBackfillNewestThousandPastLive(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		ww := newWindowWorld(t, w, WindowConfig{Days: 7, Posts: 2 * MaxBackfill}, false)
		o := w.owner(t, "newest@example.com")
		const old, live = MaxBackfill + 3, 5
		for i := 0; i < old; i += core.MaxIngestBatch {
			var batch []string
			for j := i; j < min(i+core.MaxIngestBatch, old); j++ {
				batch = append(batch, fmt.Sprintf("old-%d: acme %d", j, j))
			}
			ww.send(t, o.ID, batch...)
		}
		p, _, err := ww.phrases.Add(ctx, o.ID, "acme", "x", "", "")
		if err != nil {
			t.Fatal(err)
		}
		// Matched live, before the sweep fills the phrase.
		var batch []string
		for i := range live {
			batch = append(batch, fmt.Sprintf("new-%d: acme today", i))
		}
		ww.send(t, o.ID, batch...)
		if err := ww.window.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		all, filled, oldest := 0, 0, old
		if _, err := ww.window.d.Archives.PhraseMatches(ctx, o.ID, p.ID, 2*MaxBackfill, false, func(m core.Match, _ bool) bool {
			all++
			if !m.Backfilled {
				return true
			}
			filled++
			var n int
			if _, err := fmt.Sscanf(m.Post.ExternalID, "old-%d", &n); err != nil {
				t.Errorf("backfilled %s, not a post of before the add", m.Post.ExternalID)
			}
			oldest = min(oldest, n)
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if filled != MaxBackfill || oldest != old-MaxBackfill || all != MaxBackfill+live {
			t.Fatalf("the phrase holds %d matches, %d of them filled, the oldest old-%d; want %d filled, down to old-%d, beside the %d live",
				all, filled, oldest, MaxBackfill, old-MaxBackfill, live)
		}
	})
}
