package app

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// A phrase stored before NormalizePhrase trimmed invisible characters
// from its edges (here a zero-width space a paste brought along) keeps
// them: GET /phrases gives its text with them, and a helper names it
// unread in that form. The server must leave it unread, not compare the
// text it normalises with the stored one it does not and record the
// read.
func TestIngestLeavesStoredUntrimmedPhraseUnread(t *testing.T) {
	t.Parallel()
	databases(t, testIngestLeavesStoredUntrimmedPhraseUnread)
}

func testIngestLeavesStoredUntrimmedPhraseUnread(t *testing.T, w world) {
	ctx := context.Background()
	o := w.owner(t, "untrimmed@example.com")
	p, err := core.NewPhrase(o.ID, "acme", "x", "")
	if err != nil {
		t.Fatal(err)
	}
	// As the phrase was stored before the trim: NewPhrase no longer
	// makes one.
	p.Phrase = "\u200bacme"
	if _, err := w.phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 10}, ports.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	c := newSimClock()
	c.Set(p.CreatedAt.Add(time.Hour))
	ingest := NewIngest(IngestDeps{Matches: w.matches, Accounts: gormstore.NewAccountStore(w.db), Matchers: NewMatchers(w.phrases), Log: quiet, Clock: c},
		core.Limits{AccountsPerPlatform: 1})
	if _, _, _, err := ingest.IngestBatch(ctx, o.ID, core.IngestBatch{Platform: "x",
		UnreadPhrases: core.UnreadPhrases{Texts: []string{p.Phrase}}}); err != nil {
		t.Fatal(err)
	}
	got, err := w.phrases.Phrase(ctx, o.ID, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.LastCheckedAt.Equal(p.CreatedAt) {
		t.Errorf("the phrase named unread was checked at %v, want %v (as created)", got.LastCheckedAt, p.CreatedAt)
	}
}
