package gormstore

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// On SQLite a search walks an owner's matches by rowid, newest first
// (search.go): rowids must follow created_us within each owner, however
// the owner's batches and other owners' interleave, from several
// connections at once.
func TestRowidsFollowCreated(t *testing.T) {
	db, err := Open("sqlite://" + filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	owners, phrases, matches := NewOwnerStore(db), NewPhraseStore(db), NewMatchStore(db)
	var ids []string
	var wg sync.WaitGroup
	for o := range 3 {
		owner, _ := core.NewOwner(fmt.Sprintf("o%d@example.com", o), "")
		if err := owners.CreateOwner(ctx, &owner); err != nil {
			t.Fatal(err)
		}
		p, _ := core.NewPhrase(owner.ID, "acme", "x", "")
		if _, err := phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 1}, ports.Idempotency{}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, owner.ID)
		for w := range 4 {
			wg.Go(func() {
				for b := range 10 {
					var batch []ports.PostMatches
					for i := range 1 + (w+b)%5 {
						batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: fmt.Sprint(w, "-", b, "-", i), Text: "acme"}, PhraseIDs: []string{p.ID}})
					}
					if _, err := matches.SaveMatches(ctx, owner.ID, core.X, batch); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	for _, id := range ids {
		var byRowid, byCreated []string
		for order, out := range map[string]*[]string{"rowid": &byRowid, "created_us": &byCreated} {
			rows, err := scanAll(db.gorm.Raw("SELECT id FROM matches WHERE owner_id = ? ORDER BY "+order, id), func(s *string) []any { return []any{s} })
			if err != nil {
				t.Fatal(err)
			}
			*out = rows
		}
		if len(byRowid) != 4*(1+2+3+4+5+1+2+3+4+5) || strings.Join(byRowid, ",") != strings.Join(byCreated, ",") {
			t.Fatalf("owner %s: %d matches; by rowid and by created_us they differ", id, len(byRowid))
		}
	}
}

// On SQLite each owner's matches are indexed in a partition of their own
// (migration 30), so a search reads its owner's lists only: each
// partition holds its owner's matches, none of another's, through
// stores, edits and deletes, and the index stays in step with matches
// (FTS4's integrity-check compares the two).
func TestSearchPartitionByOwner(t *testing.T) {
	db, err := Open("sqlite://" + filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	owners, phrases, matches := NewOwnerStore(db), NewPhraseStore(db), NewMatchStore(db)
	var ids []string
	saved := map[string][]core.Match{}
	for o, n := range []int{3, 5} {
		owner, _ := core.NewOwner(fmt.Sprintf("o%d@example.com", o), "")
		if err := owners.CreateOwner(ctx, &owner); err != nil {
			t.Fatal(err)
		}
		p, _ := core.NewPhrase(owner.ID, "acme", "x", "")
		if _, err := phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 1}, ports.Idempotency{}); err != nil {
			t.Fatal(err)
		}
		var batch []ports.PostMatches
		for i := range n {
			batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: fmt.Sprint(i), Text: "acme rocks"}, PhraseIDs: []string{p.ID}})
		}
		res, err := matches.SaveMatches(ctx, owner.ID, core.X, batch)
		if err != nil {
			t.Fatal(err)
		}
		ids, saved[owner.ID] = append(ids, owner.ID), res.Matches
	}
	hits := func(ownerID, word string) int {
		t.Helper()
		var n int
		if err := db.SQL().QueryRow("SELECT count(*) FROM match_search WHERE match_search MATCH ? AND lid = "+searchLid, word, ownerID).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	check := func(want ...int) {
		t.Helper()
		for i, id := range ids {
			if got := hits(id, "acme"); got != want[i] {
				t.Errorf("owner %d: %d hits in its partition, want %d", i, got, want[i])
			}
		}
		if _, err := db.SQL().Exec("INSERT INTO match_search (match_search) VALUES ('integrity-check')"); err != nil {
			t.Errorf("index out of step with matches: %v", err)
		}
	}
	check(3, 5)
	// An edited match leaves its words and takes its new ones, in its
	// owner's partition.
	if _, err := db.SQL().Exec("UPDATE matches SET body = 'nothing here' WHERE id = ?", saved[ids[1]][0].ID); err != nil {
		t.Fatal(err)
	}
	check(3, 4)
	if got := hits(ids[1], "nothing"); got != 1 {
		t.Errorf("edited match: %d hits for its new word, want 1", got)
	}
	// An owner's matches leave its partition with the owner.
	if _, err := db.SQL().Exec("DELETE FROM owners WHERE id = ?", ids[1]); err != nil {
		t.Fatal(err)
	}
	check(3, 0)
	// A new owner gets a partition of its own, past the gone owner's.
	owner, _ := core.NewOwner("o2@example.com", "")
	if err := owners.CreateOwner(ctx, &owner); err != nil {
		t.Fatal(err)
	}
	var lids []int64
	for _, id := range append(ids, owner.ID) {
		var l int64
		if err := db.SQL().QueryRow(searchLid[1:len(searchLid)-1], id).Scan(&l); err != nil {
			t.Fatal(err)
		}
		lids = append(lids, l)
	}
	if !(lids[0] < lids[1] && lids[1] < lids[2]) {
		t.Errorf("partitions %v: want each owner's own, none reused", lids)
	}
}
