package app

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// A helper's post keeps its title and time, a phrase found only in the
// title matches, and a reddit post is matched against the phrases of its
// own community only, as the server's reddit reader matches the posts it
// reads; a reddit post that names no community (or not a valid one) is
// skipped, so it can be sent again with one.
func TestIngestTitleTimeCommunity(t *testing.T) {
	t.Parallel()
	databases(t, testIngestTitleTimeCommunity)
}

func testIngestTitleTimeCommunity(t *testing.T, w world) {
	ctx := context.Background()
	o := w.owner(t, "fields@example.com")
	x, err := core.NewPhrase(o.ID, "acme", "x", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.phrases.CreatePhrase(ctx, &x, core.Limits{PhrasesPerPlatform: 10}, ports.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	saas := w.phrase(t, o.ID, "acme", "saas")
	crm := w.phrase(t, o.ID, "acme", "crm")
	ingest := NewIngest(IngestDeps{Matches: w.matches, Accounts: gormstore.NewAccountStore(w.db), Matchers: NewMatchers(w.phrases), Log: quiet},
		core.Limits{AccountsPerPlatform: 1})

	posted := 1767225600123.456 // ms since 1970, with a microsecond fraction
	_, ingested, skipped, err := ingest.Ingest(ctx, o.ID, "x", []core.IngestPost{
		{ExternalID: "t1", Title: " Acme, anyone? ", Body: []string{"which tool do you use"}, URL: "https://x.com/1", PostedAt: &posted, Community: "ignored on x"},
	})
	if err != nil || ingested != 1 || skipped != 0 {
		t.Fatalf("x: Ingest = %d ingested, %d skipped, %v; want 1, 0, nil", ingested, skipped, err)
	}
	ms, _, err := w.matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Limit: 10, Platform: core.X})
	if err != nil {
		t.Fatal(err)
	}
	want := time.UnixMicro(1767225600123456).UTC()
	if len(ms) != 1 || ms[0].PhraseID != x.ID || ms[0].Post.Title != "Acme, anyone?" || !ms[0].Post.PostedAt.Equal(want) {
		t.Fatalf("x matches: %+v; want one of %s with its title and postedAt %v", ms, x.ID, want)
	}

	_, ingested, skipped, err = ingest.Ingest(ctx, o.ID, "reddit", []core.IngestPost{
		{ExternalID: "t3_a", Body: []string{"acme in r/saas"}, URL: "https://www.reddit.com/r/SaaS/comments/a/", Community: "r/SaaS"},
		{ExternalID: "t3_b", Title: "acme", Body: []string{"in a community nobody watches"}, URL: "https://www.reddit.com/r/other/comments/b/", Community: "other"},
		{ExternalID: "t3_c", Body: []string{"acme with no community"}, URL: "https://www.reddit.com/comments/c/"},
		{ExternalID: "t3_d", Body: []string{"acme in a bad name"}, URL: "https://www.reddit.com/comments/d/", Community: "no such name!"},
	})
	if err != nil || ingested != 2 || skipped != 2 {
		t.Fatalf("reddit: Ingest = %d ingested, %d skipped, %v; want 2, 2, nil", ingested, skipped, err)
	}
	ms, _, err = w.matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Limit: 10, Platform: core.Reddit})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].PhraseID != saas.ID || ms[0].Post.ExternalID != "t3_a" {
		t.Fatalf("reddit matches: %+v; want t3_a on r/saas's phrase %s only (not r/crm's %s)", ms, saas.ID, crm.ID)
	}
}
