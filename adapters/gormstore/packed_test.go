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

func testPacked(t *testing.T, url string) {
	ctx := context.Background()
	db, err := Open(url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
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
	if _, err := db.SQL().Exec("UPDATE matches SET score = 70, intent = 'question', reason = '12:34 - ✓' WHERE external_id IN ('1', 'ü')"); err != nil {
		t.Fatal(err)
	}
	var rows, differ int
	expr := packedExprOf(db.postgres, "", fixedColumns)
	q := fmt.Sprintf("SELECT COUNT(*), COUNT(*) FILTER (WHERE packed IS DISTINCT FROM %s) FROM matches", expr)
	if !db.postgres {
		q = fmt.Sprintf("SELECT COUNT(*), COUNT(*) FILTER (WHERE packed IS NOT %s) FROM matches", expr)
	}
	if err := db.SQL().QueryRow(q).Scan(&rows, &differ); err != nil {
		t.Fatal(err)
	}
	if rows != 2*len(posts) || differ != 0 {
		t.Fatalf("%d of %d rows hold a packed column unlike the database's own packing", differ, rows)
	}
	stmt, err := db.SQL().Query("SELECT " + matchColumns + ", packed FROM matches")
	if err != nil {
		t.Fatal(err)
	}
	for stmt.Next() {
		var packed string
		r, err := scanRow(stmt, &packed)
		if err != nil {
			t.Fatal(err)
		}
		if want := packRow(r); packed != want {
			t.Errorf("match of post %q: packed column\n%q\nGo packs it as\n%q", r.ExternalID, packed, want)
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
	if db.postgres {
		// A row stored before Postgres wrote the packed column has none
		// until migration 15 packs it; from then on the column is
		// required.
		for _, q := range []string{"ALTER TABLE matches ALTER COLUMN packed DROP NOT NULL", "UPDATE matches SET packed = NULL",
			"DELETE FROM schema_migrations WHERE version = 15"} {
			if _, err := db.SQL().Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		if got := page(); !reflect.DeepEqual(got, stored) {
			t.Fatalf("after migration 15 packed the rows the page reads\n%+v\nbefore\n%+v", got, stored)
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
			for _, v := range []string{fmt.Sprint(score), intent, reason} {
				packed += fmt.Sprintf("%d:%s", len(v), v)
			}
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
