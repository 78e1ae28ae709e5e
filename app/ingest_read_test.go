package app

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// A helper's batch records that it read the owner's listening phrases of
// its platform: their lastCheckedAt moves past their creation, from
// helper, even when the batch holds no post. It once stayed at creation
// forever, so the dashboard could not tell a phrase no helper had read.
// Other platforms' phrases are untouched, and a second batch within the
// minute writes nothing.
func TestIngestRecordsHelperRead(t *testing.T) {
	t.Parallel()
	databases(t, testIngestRecordsHelperRead)
}

func testIngestRecordsHelperRead(t *testing.T, w world) {
	ctx := context.Background()
	o := w.owner(t, "read@example.com")
	var x, fb core.Phrase
	for _, ph := range []*core.Phrase{&x, &fb} {
		plat := "x"
		if ph == &fb {
			plat = "facebook"
		}
		p, err := core.NewPhrase(o.ID, "acme", plat, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 10}, ports.Idempotency{}); err != nil {
			t.Fatal(err)
		}
		*ph = p
	}
	c := newSimClock()
	c.Set(x.CreatedAt.Add(time.Hour))
	ingest := NewIngest(IngestDeps{Matches: w.matches, Accounts: gormstore.NewAccountStore(w.db), Matchers: NewMatchers(w.phrases), Log: quiet, Clock: c},
		core.Limits{AccountsPerPlatform: 1})
	checked := func(id string) core.Phrase {
		t.Helper()
		p, err := w.phrases.Phrase(ctx, o.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if _, _, _, err := ingest.Ingest(ctx, o.ID, "x", nil); err != nil {
		t.Fatal(err)
	}
	if got := checked(x.ID); !got.LastCheckedAt.Equal(c.Now()) || got.LastSource != core.SourceHelper {
		t.Fatalf("after a helper's batch the x phrase was checked at %v from %s, want %v from helper", got.LastCheckedAt, got.LastSource, c.Now())
	}
	if got := checked(fb.ID); !got.LastCheckedAt.Equal(fb.CreatedAt) {
		t.Fatalf("an x batch marked the facebook phrase checked at %v", got.LastCheckedAt)
	}
	first := c.Now()
	c.Set(first.Add(30 * time.Second))
	if _, _, _, err := ingest.Ingest(ctx, o.ID, "x", nil); err != nil {
		t.Fatal(err)
	}
	if got := checked(x.ID); !got.LastCheckedAt.Equal(first) {
		t.Fatalf("a second batch within the minute wrote %v", got.LastCheckedAt)
	}
	c.Set(first.Add(2 * time.Minute))
	if _, _, _, err := ingest.Ingest(ctx, o.ID, "x", nil); err != nil {
		t.Fatal(err)
	}
	if got := checked(x.ID); !got.LastCheckedAt.Equal(c.Now()) {
		t.Fatalf("a batch a minute later left %v", got.LastCheckedAt)
	}
}
