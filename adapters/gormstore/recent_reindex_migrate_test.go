package gormstore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/match"
	"github.com/earshothq/earshot/ports"
)

// The window's text index holds each kept post's words as the matcher
// cut them when the post was indexed. The builds before 445dc81 and
// 5c300a8 (schema 26 to 32) cut them another way: a full-width letter
// was its upper-case form (simple case folding alone), and a run of Han
// or kana was one word. A database they left at migration 32 keeps
// those words; after the upgrade a preview or a backfill of "acme crm"
// or "東京" must still find the posts the matcher finds.
func TestRecentIndexRebuiltForTheMatchersWords(t *testing.T) {
	for dialect, url := range dialects(t) {
		t.Run(dialect, func(t *testing.T) {
			ctx := context.Background()
			db := openAt(t, url, 32)
			owner, _ := core.NewOwner("reindex@example.com", "")
			if err := NewOwnerStore(db).CreateOwner(ctx, &owner); err != nil {
				t.Fatal(err)
			}
			at := time.UnixMicro(1_700_000_000_000_000).UTC()
			// Each post's words as the builds before indexed them.
			posts := []struct{ id, text, oldWords string }{
				{"wide", "ＡＣＭＥ ｃｒｍ is here", "ＡＣＭＥ ＣＲＭ is here"},
				{"kanji", "東京タワーで会おう", "東京タワーで会おう"},
				{"plain", "plain acme crm", "plain acme crm"},
			}
			var batch []ports.PostMatches
			for _, p := range posts {
				batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: p.id, Text: p.text, PostedAt: at},
					Keep: &ports.RecentKeep{SeenAt: at}})
			}
			if _, err := NewMatchStore(db).SaveMatches(ctx, owner.ID, core.X, batch); err != nil {
				t.Fatal(err)
			}
			recent := NewRecentStore(db)
			kept, err := recent.Unindexed(ctx, 10)
			if err != nil || len(kept) != len(posts) {
				t.Fatalf("Unindexed = %d posts, %v", len(kept), err)
			}
			var old []ports.RecentWords
			for i, p := range kept {
				old = append(old, ports.RecentWords{Seq: p.Seq, Words: posts[i].oldWords})
			}
			if err := recent.IndexRecent(ctx, old); err != nil {
				t.Fatal(err)
			}

			if err := db.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			// The window's sweep, as app.Window indexes (wordsOf).
			for {
				ps, err := recent.Unindexed(ctx, 2)
				if err != nil {
					t.Fatal(err)
				}
				if len(ps) == 0 {
					break
				}
				words := make([]ports.RecentWords, len(ps))
				for i, p := range ps {
					words[i] = ports.RecentWords{Seq: p.Seq, Words: string(match.AppendWords(match.AppendWords(nil, p.Post.Title), p.Post.Text))}
				}
				if err := recent.IndexRecent(ctx, words); err != nil {
					t.Fatal(err)
				}
			}
			for phrase, want := range map[string][]string{"acme crm": {"plain", "wide"}, "東京": {"kanji"}} {
				var got []string
				if _, err := recent.RecentPosts(ctx, ports.RecentQuery{OwnerID: owner.ID, Platform: core.X, Words: match.Words(phrase), Limit: 10},
					func(p core.RecentPost) bool { got = append(got, p.Post.ExternalID); return true }); err != nil {
					t.Fatal(err)
				}
				slices.Sort(got)
				if !slices.Equal(got, want) {
					t.Errorf("the window's posts for %q after the upgrade: %v, want %v", phrase, got, want)
				}
			}
		})
	}
}
