package gormstore

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// A kept post's text reads back as written on both databases, whatever
// characters the JSON of its column has to escape.
func TestKeptPostReadsBack(t *testing.T) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			url := "sqlite://:memory:"
			if name == "postgres" {
				url = pgtest.URL(t)
			}
			db, ctx := openMigrated(t, url), context.Background()
			owner, _ := core.NewOwner("kept@example.com", "")
			if err := NewOwnerStore(db).CreateOwner(ctx, &owner); err != nil {
				t.Fatal(err)
			}
			at := time.UnixMicro(1_700_000_000_000_000).UTC()
			var batch []ports.PostMatches
			for i, s := range []string{"", "plain", `"quoted" \ back\slash`, "tab\tnew\nline\r\x01\x1f", "σοφία 🚀 \u2028", "</script>&<>"} {
				batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: string(rune('a' + i)), Author: s, Title: s, Text: s, URL: s,
					Likes: i, Comments: 2 * i, PostedAt: at}, Keep: &ports.RecentKeep{SeenAt: at}})
			}
			if _, err := NewMatchStore(db).SaveMatches(ctx, owner.ID, core.X, batch); err != nil {
				t.Fatal(err)
			}
			var got []core.Post
			if _, err := NewRecentStore(db).RecentPosts(ctx, ports.RecentQuery{OwnerID: owner.ID, Platform: core.X, Limit: 10},
				func(p core.RecentPost) bool { got = append([]core.Post{p.Post}, got...); return true }); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(batch) {
				t.Fatalf("%d posts read back, want %d", len(got), len(batch))
			}
			for i, p := range got {
				if p != batch[i].Post {
					t.Errorf("post %d = %+v\nwant %+v", i, p, batch[i].Post)
				}
			}
		})
	}
}

// A post twice in one batch, the second copy asking to be kept (a reddit
// read lists it under two communities, one of them kept), is kept once.
func TestKeptCopyAfterUnkeptOne(t *testing.T) {
	db, ctx := openMigrated(t, "sqlite://:memory:"), context.Background()
	owner, _ := core.NewOwner("copies@example.com", "")
	if err := NewOwnerStore(db).CreateOwner(ctx, &owner); err != nil {
		t.Fatal(err)
	}
	at := time.UnixMicro(1_700_000_000_000_000).UTC()
	p := core.Post{ExternalID: "t3_a", Title: "twice", PostedAt: at}
	batch := []ports.PostMatches{{Post: p}, {Post: p, Keep: &ports.RecentKeep{SeenAt: at}}, {Post: p, Keep: &ports.RecentKeep{SeenAt: at}}}
	if _, err := NewMatchStore(db).SaveMatches(ctx, owner.ID, core.Reddit, batch); err != nil {
		t.Fatal(err)
	}
	n := 0
	if _, err := NewRecentStore(db).RecentPosts(ctx, ports.RecentQuery{OwnerID: owner.ID, Platform: core.Reddit, Limit: 10},
		func(core.RecentPost) bool { n++; return true }); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d copies kept, want 1", n)
	}
}

// A post indexed on Postgres while RecentPosts passes it among those
// not indexed yet, which the walk of the index then meets again, takes
// no room of the limit: the walk reads past it, so the posts passed
// reach the limit and more says that older ones are left.
func TestPostIndexedDuringRecentPosts(t *testing.T) {
	db, ctx := openMigrated(t, pgtest.URL(t)), context.Background()
	owner, _ := core.NewOwner("indexed-meanwhile@example.com", "")
	if err := NewOwnerStore(db).CreateOwner(ctx, &owner); err != nil {
		t.Fatal(err)
	}
	at := time.UnixMicro(1_700_000_000_000_000).UTC()
	var batch []ports.PostMatches
	for _, id := range []string{"a", "b", "c", "d"} { // kept in this order: d is the newest
		batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: id, Text: "acme " + id}, Keep: &ports.RecentKeep{SeenAt: at}})
	}
	if _, err := NewMatchStore(db).SaveMatches(ctx, owner.ID, core.X, batch); err != nil {
		t.Fatal(err)
	}
	recent := NewRecentStore(db)
	kept, err := recent.Unindexed(ctx, 10)
	if err != nil || len(kept) != 4 {
		t.Fatalf("Unindexed = %d, %v", len(kept), err)
	}
	var words []ports.RecentWords
	for _, p := range kept[:3] { // a, b and c indexed; d not yet
		words = append(words, ports.RecentWords{Seq: p.Seq, Words: p.Post.Text})
	}
	if err := recent.IndexRecent(ctx, words); err != nil {
		t.Fatal(err)
	}
	var got []string
	more, err := recent.RecentPosts(ctx, ports.RecentQuery{OwnerID: owner.ID, Platform: core.X, Words: []string{"acme"}, Limit: 2},
		func(p core.RecentPost) bool {
			got = append(got, p.Post.ExternalID)
			if p.Post.ExternalID == "d" { // the indexer, meanwhile
				if _, err := db.SQL().Exec("UPDATE recent_posts SET words = to_tsvector('simple', $1) WHERE id = $2", p.Post.Text, p.Seq); err != nil {
					t.Error(err)
				}
			}
			return true
		})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != "d" || got[1] != "c" || !more {
		t.Fatalf("RecentPosts passed %v, more %v; want [d c], more true", got, more)
	}
}

// A post kept with its parts' bounds reads back with them, and one kept
// with the JSON of before bounds were (no "bounds") reads back as one
// part, as it was matched then, on both databases.
func TestKeptPostBounds(t *testing.T) {
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			url := "sqlite://:memory:"
			if name == "postgres" {
				url = pgtest.URL(t)
			}
			db, ctx := openMigrated(t, url), context.Background()
			owner, _ := core.NewOwner("bounds@example.com", "")
			if err := NewOwnerStore(db).CreateOwner(ctx, &owner); err != nil {
				t.Fatal(err)
			}
			at := time.UnixMicro(1_700_000_000_000_000).UTC()
			ip := core.IngestPost{ExternalID: "new", Body: []string{"we signed a big", " ", "deal with acme"}, URL: "https://x.com/a/new"}
			post, err := ip.Post()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := NewMatchStore(db).SaveMatches(ctx, owner.ID, core.X, []ports.PostMatches{{Post: post,
				Keep: &ports.RecentKeep{SeenAt: at, Bounds: ip.Bounds()}}}); err != nil {
				t.Fatal(err)
			}
			old := `{"id":"old","author":"","title":"","text":"we signed a big\n\ndeal with acme","url":"https://x.com/a/old","likes":0,"comments":0,"posted":0}`
			q := "INSERT INTO recent_posts (owner_id, lid, platform, community, seen_at, post) VALUES (?, ?, 'x', '', ?, ?)"
			args := []any{owner.ID, lid(owner.ID), micros(at), old}
			if db.postgres {
				q, args = "INSERT INTO recent_posts (owner_id, platform, community, seen_at, post) VALUES (?, 'x', '', ?, ?)", []any{owner.ID, micros(at), old}
			}
			if err := db.write(ctx).Exec(q, args...).Error; err != nil {
				t.Fatal(err)
			}
			got := map[string][]string{}
			if _, err := NewRecentStore(db).RecentPosts(ctx, ports.RecentQuery{OwnerID: owner.ID, Platform: core.X, Limit: 10},
				func(p core.RecentPost) bool { got[p.Post.ExternalID] = p.Body(); return true }); err != nil {
				t.Fatal(err)
			}
			if b := got["new"]; len(b) != 2 || b[0] != "we signed a big" || b[1] != "deal with acme" {
				t.Errorf("the post kept with bounds reads back as %q", b)
			}
			if b := got["old"]; len(b) != 1 || b[0] != "we signed a big\n\ndeal with acme" {
				t.Errorf("the post kept before bounds reads back as %q", b)
			}
		})
	}
}
