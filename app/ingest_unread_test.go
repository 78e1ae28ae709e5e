package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// A reddit batch naming the communities its helper could not read
// (unreadCommunities) records the read of the other phrases only: the
// phrases of a closed community keep their lastCheckedAt, so the owner
// is not shown them as read. A later batch that read the community
// records it at once, within the minute that holds back repeated writes
// of the others. Bad values refuse the batch whole, store none of its
// posts and record nothing; on x the field is ignored, whatever it holds.
func TestIngestLeavesUnreadCommunitiesUnread(t *testing.T) {
	t.Parallel()
	databases(t, testIngestLeavesUnreadCommunitiesUnread)
}

func testIngestLeavesUnreadCommunitiesUnread(t *testing.T, w world) {
	ctx := context.Background()
	o := w.owner(t, "unread@example.com")
	add := func(phrase, platform, community string) core.Phrase {
		t.Helper()
		p, err := core.NewPhrase(o.ID, phrase, platform, community)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 10}, ports.Idempotency{}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	golang, closed, sales, x := add("acme", "reddit", "golang"), add("acme", "reddit", "secretclub"), add("acme crm", "reddit", "sales"), add("acme", "x", "")
	c := newSimClock()
	c.Set(golang.CreatedAt.Add(time.Hour))
	ingest := NewIngest(IngestDeps{Matches: w.matches, Accounts: gormstore.NewAccountStore(w.db), Matchers: NewMatchers(w.phrases), Log: quiet, Clock: c},
		core.Limits{AccountsPerPlatform: 1})
	checked := func(p core.Phrase) time.Time {
		t.Helper()
		got, err := w.phrases.Phrase(ctx, o.ID, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got.LastCheckedAt
	}
	want := func(step string, ps map[string]time.Time) {
		t.Helper()
		for name, p := range map[string]core.Phrase{"golang": golang, "secretclub": closed, "sales": sales, "x": x} {
			if at, ok := ps[name]; ok && !checked(p).Equal(at) {
				t.Errorf("%s: the phrase of %s was checked at %v, want %v", step, name, checked(p), at)
			}
		}
	}
	post := func(id string) core.IngestPost {
		return core.IngestPost{ExternalID: id, Body: []string{"acme is great"}, URL: "https://www.reddit.com/r/golang/comments/" + id + "/t/", Community: "golang"}
	}

	// The helper's pass could not read r/secretclub (a 403, private).
	first := c.Now()
	if _, n, _, err := ingest.IngestBatch(ctx, o.ID, core.IngestBatch{Platform: "reddit", Posts: []core.IngestPost{post("p1")},
		Unread: core.UnreadCommunities{Names: []string{"/r/SecretClub/", "r/nosuchphrase"}}}); err != nil || n != 1 {
		t.Fatalf("IngestBatch = %d, %v", n, err)
	}
	want("a batch leaving r/secretclub unread", map[string]time.Time{"golang": first, "sales": first, "secretclub": closed.CreatedAt, "x": x.CreatedAt})

	// Bad values: refused whole, nothing stored, nothing recorded.
	c.Set(first.Add(2 * time.Minute))
	over := make([]string, core.MaxUnreadCommunities)
	for i := range over {
		over[i] = "community" + strings.Repeat("a", i%10)
	}
	for name, u := range map[string]core.UnreadCommunities{
		"not an array":     {Invalid: true},
		"too many":         {Over: true},
		"a bad name":       {Names: []string{"golang", "no spaces allowed"}},
		"a name too long":  {Names: []string{strings.Repeat("a", 22)}},
		"a name too short": {Names: []string{"ab"}},
		"an empty name":    {Names: []string{""}},
	} {
		_, n, _, err := ingest.IngestBatch(ctx, o.ID, core.IngestBatch{Platform: "reddit", Posts: []core.IngestPost{post("p2")}, Unread: u})
		if !core.IsKind(err, core.KindInvalid) || !strings.Contains(core.Message(err), "unreadCommunities") || n != 0 {
			t.Errorf("%s: IngestBatch = %d, %v; want the batch refused naming unreadCommunities", name, n, err)
		}
	}
	want("after refused batches", map[string]time.Time{"golang": first, "sales": first, "secretclub": closed.CreatedAt})
	if _, n, _, err := ingest.IngestBatch(ctx, o.ID, core.IngestBatch{Platform: "reddit", Posts: []core.IngestPost{post("p2")},
		Unread: core.UnreadCommunities{Names: over}}); err != nil || n != 1 {
		t.Fatalf("a batch of %d names: %d, %v; want the post stored (a refused batch stored it already?)", len(over), n, err)
	}
	second := c.Now()
	want("a batch at the limit of names", map[string]time.Time{"golang": second, "sales": second, "secretclub": second})

	// Left unread, then read within the minute: recorded at once, while
	// the others are not written again.
	c.Set(second.Add(2 * time.Minute))
	third := c.Now()
	if _, _, _, err := ingest.IngestBatch(ctx, o.ID, core.IngestBatch{Platform: "reddit", Unread: core.UnreadCommunities{Names: []string{"secretclub", "sales"}}}); err != nil {
		t.Fatal(err)
	}
	want("sales and r/secretclub left unread", map[string]time.Time{"golang": third, "sales": second, "secretclub": second})
	c.Set(third.Add(20 * time.Second))
	if _, _, _, err := ingest.IngestBatch(ctx, o.ID, core.IngestBatch{Platform: "reddit"}); err != nil {
		t.Fatal(err)
	}
	want("the next batch read them", map[string]time.Time{"golang": third, "sales": c.Now(), "secretclub": c.Now()})

	// x has no communities: the field is ignored there, whatever it holds.
	if _, _, _, err := ingest.IngestBatch(ctx, o.ID, core.IngestBatch{Platform: "x", Unread: core.UnreadCommunities{Invalid: true, Over: true}}); err != nil {
		t.Fatalf("an x batch with a bad unreadCommunities: %v", err)
	}
	want("an x batch", map[string]time.Time{"x": c.Now()})
}
