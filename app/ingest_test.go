package app

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// A NUL in a post is removed from its text and author, and a post whose
// externalId holds one is skipped, whatever the source: the valid posts
// of the batch are stored, and both databases store the same text.
func TestIngestNUL(t *testing.T) {
	t.Parallel()
	databases(t, testIngestNUL)
}

func testIngestNUL(t *testing.T, w world) {
	ctx := context.Background()
	o := w.owner(t, "nul@example.com")
	p, err := core.NewPhrase(o.ID, "acme", "x", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 10}, ports.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	ingest := NewIngest(IngestDeps{Matches: w.matches, Accounts: gormstore.NewAccountStore(w.db), Matchers: NewMatchers(w.phrases), Log: quiet},
		core.Limits{AccountsPerPlatform: 1})
	_, ingested, skipped, err := ingest.Ingest(ctx, o.ID, "x", []core.IngestPost{
		{ExternalID: "plain", Body: []string{"acme one"}, URL: "https://x.com/1"},
		{ExternalID: "body", AuthorName: "a\x00da", Body: []string{"ac\x00me two\x00", "\x00"}, URL: "https://x.com/2"},
		{ExternalID: "id\x00", Body: []string{"acme three"}, URL: "https://x.com/3"},
		{ExternalID: "url", Body: []string{"acme four"}, URL: "https://x.com/\x00"},
		{ExternalID: "empty", Body: []string{"\x00", " \x00 "}, URL: "https://x.com/5"},
	})
	if err != nil || ingested != 2 || skipped != 3 {
		t.Fatalf("Ingest = %d ingested, %d skipped, %v; want 2, 3, nil", ingested, skipped, err)
	}
	ms, _, err := w.matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]core.Post{}
	for _, m := range ms {
		got[m.Post.ExternalID] = m.Post
	}
	if len(got) != 2 || got["plain"].Text != "acme one" || got["body"].Text != "acme two" || got["body"].Author != "ada" {
		t.Fatalf("stored posts: %+v", got)
	}

	// The same rule on posts read from reddit or an archive.
	rp := w.phrase(t, o.ID, "acme", "saas")
	c := newSimClock()
	f := newFakeReddit(t, c)
	c.Set(time.Now())
	made := c.Now().Add(time.Second)
	id := f.add("saas", ports.RedditPosts, "is ac\x00me worth it\x00", made, made, time.Time{})
	c.Advance(2 * time.Second)
	if _, err := w.poller(f.source(t, false, time.Minute, false), c, "r1", nil).Cycle(ctx, time.Minute); err != nil {
		t.Fatal(err)
	}
	ms, _, _ = w.matches.Matches(ctx, o.ID, ports.MatchFilter{MinScore: -1, Limit: 10, Platform: core.Reddit})
	if len(ms) != 1 || ms[0].PhraseID != rp.ID || ms[0].Post.ExternalID != id || ms[0].Post.Text != "is acme worth it" {
		t.Fatalf("reddit matches: %+v", ms)
	}
}

// recordBus keeps what is published.
type recordBus struct{ events []ports.Event }

func (b *recordBus) Publish(_ context.Context, events ...ports.Event) error {
	b.events = append(b.events, events...)
	return nil
}

// TestAnnounceABatch: the matches a batch stored go out as one event for
// each run of one owner's matches, naming them all, and each event wakes
// the scoring loop.
func TestAnnounceABatch(t *testing.T) {
	t.Parallel()
	var ms []core.Match
	for i, owner := range []string{"a", "a", "a", "b", "a"} {
		ms = append(ms, core.Match{ID: fmt.Sprintf("m%d", i), OwnerID: owner})
	}
	b := &recordBus{}
	announce(context.Background(), b, quiet, ms)
	want := []MatchEvent{{"a", "m0", []string{"m0", "m1", "m2"}}, {"b", "m3", []string{"m3"}}, {"a", "m4", []string{"m4"}}}
	if len(b.events) != len(want) {
		t.Fatalf("%d events for 3 runs of matches: %+v", len(b.events), b.events)
	}
	s := NewScoring(ScoringDeps{Log: quiet}, ScoringConfig{})
	for i, e := range b.events {
		var got MatchEvent
		if err := json.Unmarshal(e.Payload, &got); err != nil || e.Topic != TopicMatchStored || e.Key != want[i].MatchID ||
			!reflect.DeepEqual(got, want[i]) {
			t.Fatalf("event %d = %s %s %s (%v), want %+v", i, e.Topic, e.Key, e.Payload, err, want[i])
		}
		if err := s.Handle(context.Background(), e); err != nil {
			t.Fatal(err)
		}
		select {
		case <-s.wake:
		default:
			t.Fatalf("event %d did not wake the scoring loop", i)
		}
	}
}

// deadlineBus records the deadline its Publish was given.
type deadlineBus struct {
	has  bool
	left time.Duration
}

func (b *deadlineBus) Publish(ctx context.Context, _ ...ports.Event) error {
	d, ok := ctx.Deadline()
	b.has, b.left = ok, time.Until(d)
	return ctx.Err()
}

// TestAnnounceBoundsItsWait: a broker that blocks publishers confirms
// nothing, and an ingest request's context has no deadline; announce
// gives the bus one, so the request answers while the sweep finds the
// matches.
func TestAnnounceBoundsItsWait(t *testing.T) {
	t.Parallel()
	b := &deadlineBus{}
	announce(context.Background(), b, quiet, []core.Match{{ID: "m1", OwnerID: "o1"}})
	if !b.has || b.left > publishWait {
		t.Fatalf("publish given deadline %v (left %v), want one within %v", b.has, b.left, publishWait)
	}
}
