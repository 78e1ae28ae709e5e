package gormstore

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/match"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// An indexed post that holds a phrase's words one after another is
// passed however often its words come before: Postgres's text search
// document keeps 255 places of one word, so there the phrase lies past
// what the document says of its words. The Thai post is one near 4,000
// characters, every one a word, as a post of a script written without
// spaces is to the matcher. A post that lacks a word of the phrase, or
// whose words of the phrase are apart and each placed fully (another
// word may come often), is still left out.
func TestRecentPhrasePastManyPlaces(t *testing.T) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			url := "sqlite://:memory:"
			if name == "postgres" {
				url = pgtest.URL(t)
			}
			db, ctx := openMigrated(t, url), context.Background()
			owner, _ := core.NewOwner("places@example.com", "")
			if err := NewOwnerStore(db).CreateOwner(ctx, &owner); err != nil {
				t.Fatal(err)
			}
			posts := []core.Post{
				{ExternalID: "repeated", Text: strings.Repeat("acme ", 300) + "crm"},
				{ExternalID: "thai", Title: strings.Repeat("กข", 1000), Text: strings.Repeat("ขก", 998) + "กขค"},
				{ExternalID: "short-words", Text: strings.Repeat("x ", 256) + "y"}, // about as short as such a post can be
				{ExternalID: "no-crm", Text: strings.Repeat("acme ", 300)},
				{ExternalID: "apart", Text: "crm " + strings.Repeat("other ", 300) + "acme"},
				{ExternalID: "thai-apart", Title: strings.Repeat("งจ", 1000), Text: "คกข"},
			}
			at := time.UnixMicro(1_700_000_000_000_000).UTC()
			var batch []ports.PostMatches
			for _, p := range posts {
				batch = append(batch, ports.PostMatches{Post: p, Keep: &ports.RecentKeep{SeenAt: at}})
			}
			if _, err := NewMatchStore(db).SaveMatches(ctx, owner.ID, core.X, batch); err != nil {
				t.Fatal(err)
			}
			recent := NewRecentStore(db)
			kept, err := recent.Unindexed(ctx, 10)
			if err != nil || len(kept) != len(posts) {
				t.Fatalf("Unindexed = %d, %v", len(kept), err)
			}
			var words []ports.RecentWords
			for _, p := range kept {
				words = append(words, ports.RecentWords{Seq: p.Seq, Words: string(match.AppendWords(match.AppendWords(nil, p.Post.Title), p.Post.Text))})
			}
			if err := recent.IndexRecent(ctx, words); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				phrase string
				want   []string
			}{
				{"acme crm", []string{"repeated"}},
				{"กขค", []string{"thai"}},
				{"x y", []string{"short-words"}},
			} {
				var got []string
				if _, err := recent.RecentPosts(ctx, ports.RecentQuery{OwnerID: owner.ID, Platform: core.X, Words: match.Words(c.phrase), Limit: 10},
					func(p core.RecentPost) bool { got = append(got, p.Post.ExternalID); return true }); err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got, c.want) {
					t.Errorf("%q passed %v, want %v", c.phrase, got, c.want)
				}
			}
		})
	}
}
