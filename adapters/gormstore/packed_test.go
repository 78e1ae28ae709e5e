package gormstore

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// TestPackedColumnIsWhatSQLitePacks stores matches of awkward posts and
// checks that the packed column is byte for byte what packRow makes of
// the row in Go and what the SQL expression of migration 11 makes of it
// in the database, and that a page reads the same whether a row carries
// its packed column or not (on Postgres: before migration 15 packs it).
// On SQLite the column is written in Go; on Postgres by the insert's own
// SQL.
func TestPackedColumnIsWhatSQLitePacks(t *testing.T) {
	urls := map[string]string{"sqlite": "sqlite://:memory:"}
	if os.Getenv(pgtest.Env) != "" {
		urls["postgres"] = pgtest.URL(t)
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) { testPacked(t, url) })
	}
}

// openMigrated opens url at the latest schema, closed when t ends.
func openMigrated(t *testing.T, url string) *DB {
	t.Helper()
	db, err := Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

func testPacked(t *testing.T, url string) {
	ctx := context.Background()
	db := openMigrated(t, url)
	o := testOwner(t, db, "packed@example.com")
	var ids []string
	for _, text := range []string{"acme", "ünïcödé ✓"} {
		p, err := core.NewPhrase(o.ID, text, "x", "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := NewPhraseStore(db).CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 2}, ports.Idempotency{}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	posts := []core.Post{
		{ExternalID: "1", Text: "plain", URL: "https://x.com/a/status/1"},
		{ExternalID: "2:3-", Author: "", Title: "", Text: "", URL: ""},
		{ExternalID: "ü", Author: "Zoë ✓", Title: "title: with - and 12:", Text: "Ünïcödé ✓ and 3:abc and -", URL: "https://x.com/ü", Likes: 1 << 40, Comments: 7,
			PostedAt: time.Date(1969, 7, 20, 20, 17, 0, 0, time.UTC)},
		{ExternalID: "4", Title: "-", Text: "-", Likes: 0, PostedAt: time.Date(2026, 11, 23, 1, 2, 3, 456789000, time.UTC)},
	}
	batch := make([]ports.PostMatches, len(posts))
	for i, p := range posts {
		batch[i] = ports.PostMatches{Post: p, PhraseIDs: ids}
	}
	st := NewMatchStore(db)
	if _, err := st.SaveMatches(ctx, o.ID, core.X, batch); err != nil {
		t.Fatal(err)
	}
	unscored, _, err := st.Matches(ctx, o.ID, ports.MatchFilter{Limit: 100, MinScore: -1})
	if err != nil {
		t.Fatal(err)
	}
	var scores []ports.ScoreUpdate
	for _, m := range unscored {
		if m.Post.ExternalID == "1" || m.Post.ExternalID == "ü" {
			scores = append(scores, ports.ScoreUpdate{Match: m, Score: core.Score{Value: 70 + len(scores), Intent: core.IntentQuestion, Reason: "12:34 - ✓"}})
		}
	}
	if got, err := st.SetScores(ctx, scores, nil); err != nil || len(got) != 4 {
		t.Fatalf("SetScores = %d scored, %v; want 4", len(got), err)
	}
	var rows, differ int
	expr := packedExprOf(db.postgres, "", fixedColumns)
	scoreExpr := packedExprOf(db.postgres, "", scoredColumns)
	q := fmt.Sprintf("SELECT COUNT(*), COUNT(*) FILTER (WHERE packed IS DISTINCT FROM %s OR packed_score IS DISTINCT FROM %s) FROM matches", expr, scoreExpr)
	if !db.postgres {
		q = fmt.Sprintf("SELECT COUNT(*), COUNT(*) FILTER (WHERE packed IS NOT %s OR packed_score IS NOT %s) FROM matches", expr, scoreExpr)
	}
	if err := db.SQL().QueryRow(q).Scan(&rows, &differ); err != nil {
		t.Fatal(err)
	}
	if rows != 2*len(posts) || differ != 0 {
		t.Fatalf("%d of %d rows hold a packed column unlike the database's own packing", differ, rows)
	}
	stmt, err := db.SQL().Query("SELECT " + matchColumns + ", packed, packed_score FROM matches")
	if err != nil {
		t.Fatal(err)
	}
	for stmt.Next() {
		var packed, packedScore string
		r, err := scanRow(stmt, &packed, &packedScore)
		if err != nil {
			t.Fatal(err)
		}
		if want := packRow(r); packed != want {
			t.Errorf("match of post %q: packed column\n%q\nGo packs it as\n%q", r.ExternalID, packed, want)
		}
		want := "---"
		if m := r.match(); m.Score != nil {
			want = packScore(*m.Score)
		}
		if packedScore != want {
			t.Errorf("match of post %q: packed score %q, Go packs it as %q", r.ExternalID, packedScore, want)
		}
	}
	if err := stmt.Err(); err != nil {
		t.Fatal(err)
	}
	stmt.Close()

	page := func() []core.Match {
		t.Helper()
		ms, _, err := st.Matches(ctx, o.ID, ports.MatchFilter{Limit: 100, MinScore: -1})
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	stored := page()
	if len(stored) != rows {
		t.Fatalf("page of %d matches, want %d", len(stored), rows)
	}
	// A page reads each match as a read of that match alone does.
	for _, m := range stored {
		one, err := st.Match(ctx, o.ID, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(one, m) {
			t.Fatalf("a page reads\n%+v\nthe match alone\n%+v", m, one)
		}
	}
	// A match scored before migration 16 gets its packed score from the
	// migration; on Postgres, a row stored before the insert wrote its
	// packed column gets it from migration 15. From then on Postgres
	// requires both.
	// Migration 18, which runs again too, is undone as well.
	redo := []string{"ALTER TABLE matches DROP COLUMN packed_score", "DROP TABLE email_changes", "DELETE FROM schema_migrations WHERE version >= 16"}
	if !db.postgres { // and undo migration 17, to run again
		redo = append(redo, "DROP TRIGGER api_keys_packed_new", "DROP TRIGGER api_keys_packed", "ALTER TABLE api_keys DROP COLUMN packed")
	}
	if db.postgres {
		redo = append(redo, "ALTER TABLE matches ALTER COLUMN packed DROP NOT NULL", "UPDATE matches SET packed = NULL",
			"DELETE FROM schema_migrations WHERE version >= 15")
	}
	for _, q := range redo {
		if _, err := db.SQL().Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if got := page(); !reflect.DeepEqual(got, stored) {
		t.Fatalf("after the migrations packed the rows the page reads\n%+v\nbefore\n%+v", got, stored)
	}
	if db.postgres {
		if _, err := db.SQL().Exec("UPDATE matches SET packed_score = '---' WHERE score IS NOT NULL"); err == nil {
			t.Fatal("a scored match was stored with its score unpacked")
		}
		if _, err := db.SQL().Exec("UPDATE matches SET packed = NULL"); err == nil {
			t.Fatal("a match without its packed column was stored")
		}
	} else {
		// A row written before migration 11 has no packed column until the
		// migration fills it; the read packs it afresh meanwhile.
		if _, err := db.SQL().Exec("UPDATE matches SET packed = NULL"); err != nil {
			t.Fatal(err)
		}
		if got := page(); !reflect.DeepEqual(got, stored) {
			t.Fatalf("without packed columns the page reads\n%+v\nwith them\n%+v", got, stored)
		}
		if _, err := db.SQL().Exec("UPDATE matches SET packed = " + expr); err != nil {
			t.Fatal(err)
		}
		if got := page(); !reflect.DeepEqual(got, stored) {
			t.Fatalf("after the migration's packing the page reads\n%+v\nbefore\n%+v", got, stored)
		}
	}
	var title *string
	for _, m := range stored {
		if m.Post.ExternalID == "4" {
			title = &m.Post.Title
		}
	}
	if title == nil || *title != "-" {
		t.Fatalf("a title of one dash did not survive packing: %v", title)
	}
}

// FuzzPackRow checks that any row packed in Go unpacks to itself.
func FuzzPackRow(f *testing.F) {
	f.Add("id", "phrase", "ext", "author", "title", true, "body", "url", int64(3), int64(-1), 50, "question", "reason")
	f.Add("", "", "1:2", "-", "", false, "", "", int64(1<<62), int64(0), -1, "", "")
	f.Fuzz(func(t *testing.T, id, phrase, ext, author, title string, hasTitle bool, body, url string, likes, posted int64, score int, intent, reason string) {
		r := matchRow{ID: id, OwnerID: "o", PhraseID: "p", Phrase: phrase, Platform: "x", CreatedUs: posted ^ 1, ExternalID: ext,
			Author: author, Body: body, URL: url, Likes: likes, Comments: likes / 3, PostedAt: posted}
		if hasTitle {
			r.Title = &title
		}
		packed := packRow(r)
		if score >= 0 {
			r.Score, r.Intent, r.Reason = &score, &intent, &reason
			packed += packScore(core.Score{Value: score, Intent: core.Intent(intent), Reason: reason})
		} else {
			packed += "---"
		}
		got, err := unpack(packed)
		if err != nil {
			t.Fatalf("unpack(%q): %v", packed, err)
		}
		if !reflect.DeepEqual(got, r.match()) {
			t.Fatalf("unpack(packRow(r)) = %+v, want %+v", got, r.match())
		}
		// A page is its rows one after the other: the first row splits
		// off whole, its title NULL exactly when the row has none.
		var vals [packedFields]string
		var nulls [packedFields]bool
		rest, err := splitPacked(packed+packed, vals[:], nulls[:])
		if err != nil || rest != packed {
			t.Fatalf("splitPacked of two rows: rest %q, %v", rest, err)
		}
		if nulls[8] != (r.Title == nil) || !nulls[8] && vals[8] != *r.Title {
			t.Fatalf("title split as %q (NULL %v), want %v", vals[8], nulls[8], r.Title)
		}
	})
}

// TestPackedKeyFollowsEveryWrite checks that SQLite keeps a key's packed
// column (migration 17) equal to its columns packed afresh after each
// kind of write, its own and another process's alike, and that a lookup
// by hash sees each.
func TestPackedKeyFollowsEveryWrite(t *testing.T) {
	ctx := context.Background()
	url := "sqlite://" + t.TempDir() + "/keys.db"
	db := openMigrated(t, url)
	o := testOwner(t, db, "keys@example.com")
	ks := NewKeyStore(db)
	k := core.Key{ID: newID(), OwnerID: o.ID, Kind: core.APIKey, Name: "näme: 3:-", Hash: "h1", Scopes: []core.Scope{core.ScopeRead}}
	if err := ks.CreateKey(ctx, &k, 5); err != nil {
		t.Fatal(err)
	}
	check := func(step string, want func(k *core.Key)) {
		t.Helper()
		var differ int
		if err := db.SQL().QueryRow("SELECT COUNT(*) FROM api_keys WHERE packed IS NOT " + packedKey).Scan(&differ); err != nil {
			t.Fatal(err)
		}
		if differ != 0 {
			t.Fatalf("after %s, %d keys hold a packed column unlike their columns", step, differ)
		}
		want(&k)
		got, err := ks.KeyByHash(ctx, k.Hash)
		if err != nil {
			t.Fatal(err)
		}
		plain := func(k core.Key) core.Key {
			k.CreatedAt, k.RevokedAt, k.LastUsedAt = k.CreatedAt.UTC().Round(0), k.RevokedAt.UTC().Round(0), k.LastUsedAt.UTC().Round(0)
			return k
		}
		if !reflect.DeepEqual(plain(got), plain(k)) {
			t.Fatalf("after %s the key by hash reads\n%+v\nwant\n%+v", step, got, k)
		}
	}
	check("its creation", func(*core.Key) {})
	used := time.Unix(1795000100, 0)
	if err := ks.MarkKeyUsed(ctx, k.ID, used); err != nil {
		t.Fatal(err)
	}
	check("its use", func(k *core.Key) { k.LastUsedAt = used })
	other := openMigrated(t, url)
	if _, err := other.SQL().Exec("UPDATE api_keys SET name = 'renamed', scopes = 'read,webhooks' WHERE id = ?", k.ID); err != nil {
		t.Fatal(err)
	}
	check("another process's change", func(k *core.Key) { k.Name, k.Scopes = "renamed", []core.Scope{core.ScopeRead, core.ScopeWebhooks} })
	revoked := time.Unix(1795000200, 0)
	if err := NewKeyStore(other).RevokeKey(ctx, o.ID, k.ID, revoked); err != nil {
		t.Fatal(err)
	}
	check("its revocation", func(k *core.Key) { k.RevokedAt = revoked })
}
