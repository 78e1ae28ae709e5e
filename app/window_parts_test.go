package app

import (
	"context"
	"slices"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// sendParts ingests, for the owner on x, one post of several body parts,
// as a helper sends a post and its replies (the spec's body: a list of
// strings).
func (ww *windowWorld) sendParts(t *testing.T, owner, id string, body ...string) {
	t.Helper()
	p := core.IngestPost{ExternalID: id, AuthorName: "ada", Body: body, URL: "https://x.com/ada/" + id, Likes: 5}
	if _, n, _, err := ww.ingest.Ingest(context.Background(), owner, "x", []core.IngestPost{p}); err != nil || n != 1 {
		t.Fatalf("Ingest = %d, %v", n, err)
	}
}

// A phrase that runs from the end of one body part into the next is not
// in the post: ingest does not match it, and neither do a preview, a
// backfill or an application of filters, whether the post is in the text
// index yet or not. A phrase inside the second part is found by all.
func TestWindowSearchesPartsApart(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		ww := newWindowWorld(t, w, week, false)
		listening, filling := w.owner(t, "parts-live@example.com"), w.owner(t, "parts-fill@example.com")
		live, _, err := ww.phrases.Add(ctx, listening.ID, "big deal", "x", "", "")
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range []string{listening.ID, filling.ID} {
			ww.sendParts(t, o, "across", "we signed a big", "deal with acme")
			ww.sendParts(t, o, "inside", "first part", "a big deal today", "third part")
			ww.sendParts(t, o, "split-in-three", "big", "deal")
		}
		ms, _, _ := w.matches.Matches(ctx, listening.ID, ports.MatchFilter{MinScore: -1, Limit: 100})
		if got := ids(ms, matchPostID); !slices.Equal(got, []string{"inside"}) {
			t.Fatalf("ingest matched %v, want [inside]", got)
		}
		preview := func(when string) {
			t.Helper()
			pv, err := ww.window.Preview(ctx, filling.ID, "big deal", "x", "", core.PhraseFilters{})
			if err != nil || pv.Window.Count != 1 || !slices.Equal(ids(pv.Window.First, postID), []string{"inside"}) {
				t.Fatalf("preview %s = %+v, %v; want [inside]", when, pv.Window, err)
			}
			ch, err := ww.window.PreviewChange(ctx, listening.ID, live.ID, core.PhraseFiltersChange{})
			if err != nil || !slices.Equal(ids(ch.Window.First, postID), []string{"inside"}) || ch.Dropped.Count != 0 {
				t.Fatalf("preview of the phrase's filters %s = %+v, dropped %+v, %v", when, ch.Window, ch.Dropped, err)
			}
		}
		preview("before the posts are indexed")
		if n, err := ww.window.Index(ctx); err != nil || n != 6 {
			t.Fatalf("Index = %d, %v", n, err)
		}
		preview("once the index, which holds every part's words, passes them")

		fill, _, err := ww.phrases.Add(ctx, filling.ID, "big deal", "x", "", "")
		if err != nil {
			t.Fatal(err)
		}
		if err := ww.window.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		ms, _, _ = w.matches.Matches(ctx, filling.ID, ports.MatchFilter{MinScore: -1, Limit: 100})
		if got := ids(ms, matchPostID); !slices.Equal(got, []string{"inside"}) || !ms[0].Backfilled || ms[0].PhraseID != fill.ID {
			t.Fatalf("backfill made %v, want [inside] backfilled", got)
		}
		// What a match stores is the post as before: its parts joined.
		if ms[0].Post.Text != "first part\n\na big deal today\n\nthird part" {
			t.Fatalf("the backfilled match's text = %q", ms[0].Post.Text)
		}

		absent := []string{"nowhere"}
		if _, err := ww.phrases.Update(ctx, listening.ID, live.ID, nil, core.PhraseFiltersChange{Exclude: &absent}); err != nil {
			t.Fatal(err)
		}
		applied, err := ww.window.ApplyFilters(ctx, listening.ID, live.ID)
		if err != nil || applied.Read != 1 || applied.Set.ID != "" {
			t.Fatalf("applying filters = %+v, %v; want the one match read and kept", applied, err)
		}
	})
}
