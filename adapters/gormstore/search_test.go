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
