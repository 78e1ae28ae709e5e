package app

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// While the matches waiting for a score reach the bound, a batch is
// refused whole with KindUnavailable and nothing of it is stored; once
// scoring brings them under the bound, the batch is taken.
func TestIngestBacklog(t *testing.T) {
	t.Parallel()
	databases(t, testIngestBacklog)
}

func testIngestBacklog(t *testing.T, w world) {
	ctx := context.Background()
	o := w.owner(t, "backlog@example.com")
	p, err := core.NewPhrase(o.ID, "acme", "x", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 10}, ports.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	counts := gormstore.NewMatchStore(w.db)
	newIngest := func(b *Backlog) *Ingest {
		return NewIngest(IngestDeps{Matches: w.matches, Accounts: gormstore.NewAccountStore(w.db), Matchers: NewMatchers(w.phrases),
			Log: quiet, Backlog: b}, core.Limits{AccountsPerPlatform: 1})
	}
	backlog := NewBacklog(counts, 5, quiet)
	ingest := newIngest(backlog)
	refresh := func(b *Backlog) {
		t.Helper()
		if err := b.Refresh(ctx); err != nil {
			t.Fatalf("Refresh: %v", err)
		}
	}
	batch := func(from, n int) []core.IngestPost {
		var ps []core.IngestPost
		for i := from; i < from+n; i++ {
			ps = append(ps, core.IngestPost{ExternalID: fmt.Sprint("p", i), Body: []string{"is acme any good"}, URL: fmt.Sprint("https://x.com/", i)})
		}
		return ps
	}
	stored := func() []core.Match {
		t.Helper()
		ms, _, err := w.matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	refused := func(posts []core.IngestPost) {
		t.Helper()
		_, ingested, skipped, err := ingest.Ingest(ctx, o.ID, "x", posts)
		if !core.IsKind(err, core.KindUnavailable) || ingested != 0 || skipped != 0 {
			t.Fatalf("Ingest over the bound = %d ingested, %d skipped, %v; want KindUnavailable", ingested, skipped, err)
		}
		if msg := core.Message(err); !strings.Contains(msg, "wait for a score") || !strings.Contains(msg, "Retry-After") {
			t.Fatalf("refusal says %q: it should name the wait and when to send again", msg)
		}
	}

	// Under the bound a batch is taken, even one that takes the backlog
	// over it.
	refresh(backlog)
	if _, n, _, err := ingest.Ingest(ctx, o.ID, "x", batch(0, 6)); err != nil || n != 6 {
		t.Fatalf("Ingest under the bound = %d ingested, %v; want 6", n, err)
	}
	// The next is refused at once, before the count is read again, and
	// after it is.
	refused(batch(6, 2))
	refresh(backlog)
	refused(batch(6, 2))
	if n := len(stored()); n != 6 {
		t.Fatalf("%d matches stored, want the 6 of the batch taken: a refused batch stores nothing", n)
	}

	// Scoring two brings the backlog to 4, under the bound: once the
	// count is read, the refused batch is taken whole.
	var scores []ports.ScoreUpdate
	for _, m := range stored()[:2] {
		scores = append(scores, ports.ScoreUpdate{Match: m, Score: core.Score{Value: 40, Intent: core.IntentDiscussion, Reason: "names it"}})
	}
	if got, err := w.matches.SetScores(ctx, scores, core.QueueMatchCreated); err != nil || len(got) != 2 {
		t.Fatalf("SetScores: %d scored, %v", len(got), err)
	}
	refused(batch(6, 2))
	refresh(backlog)
	if _, n, skipped, err := ingest.Ingest(ctx, o.ID, "x", batch(6, 2)); err != nil || n != 2 || skipped != 0 {
		t.Fatalf("Ingest once scored under the bound = %d ingested, %d skipped, %v; want 2, 0", n, skipped, err)
	}

	// A bound of 0 turns the check off, as does no watcher at all.
	off := NewBacklog(counts, 0, quiet)
	refresh(off)
	if _, n, _, err := newIngest(off).Ingest(ctx, o.ID, "x", batch(8, 1)); err != nil || n != 1 {
		t.Fatalf("Ingest with the bound 0 = %d ingested, %v; want 1", n, err)
	}
	if _, n, _, err := newIngest(nil).Ingest(ctx, o.ID, "x", batch(9, 1)); err != nil || n != 1 {
		t.Fatalf("Ingest without a watcher = %d ingested, %v; want 1", n, err)
	}
}
