package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// exportFixture is an owner with n matches on x, every third about
// invoices, over SQLite in memory.
func exportFixture(t *testing.T, n int) (ownerID string, db *gormstore.DB) {
	t.Helper()
	db = dbtest.Memory(t)
	ctx := context.Background()
	o, _ := core.NewOwner("export@example.com", "")
	if err := gormstore.NewOwnerStore(db).CreateOwner(ctx, &o); err != nil {
		t.Fatal(err)
	}
	p, _ := core.NewPhrase(o.ID, "acme", "x", "")
	if _, err := gormstore.NewPhraseStore(db).CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 1}, ports.Idempotency{}); err != nil {
		t.Fatal(err)
	}
	var batch []ports.PostMatches
	for i := range n {
		text := fmt.Sprint("acme post ", i)
		if i%3 == 0 {
			text += " about invoices"
		}
		batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: fmt.Sprint(i), Text: text}, PhraseIDs: []string{p.ID}})
	}
	if _, err := gormstore.NewMatchStore(db).SaveMatches(ctx, o.ID, core.X, batch); err != nil {
		t.Fatal(err)
	}
	return o.ID, db
}

// An export yields every match of the view once, newest first, in pages
// of at most app.ExportPage, with the list's filters and search; a bad
// filter or search is refused before anything is read.
func TestMatchesExport(t *testing.T) {
	n := 2*app.ExportPage + 17
	owner, db := exportFixture(t, n)
	matches := app.NewMatches(gormstore.NewMatchStore(db))
	ctx := context.Background()
	for _, c := range []struct {
		name string
		q    ports.MatchQuery
		want int
	}{
		{"all", ports.MatchQuery{}, n},
		{"search", ports.MatchQuery{Q: "invoices"}, (n + 2) / 3},
		{"platform", ports.MatchQuery{Platform: core.Facebook}, 0},
		{"a limit is no bound on an export", ports.MatchQuery{Limit: 5}, n},
	} {
		t.Run(c.name, func(t *testing.T) {
			pages, err := matches.Export(ctx, owner, c.q)
			if err != nil {
				t.Fatal(err)
			}
			seen, got, last := map[string]bool{}, 0, time.Time{}
			for page, err := range pages {
				if err != nil {
					t.Fatal(err)
				}
				if len(page) == 0 || len(page) > app.ExportPage {
					t.Fatalf("a page of %d", len(page))
				}
				for _, m := range page {
					if seen[m.ID] {
						t.Fatalf("match %s twice", m.ID)
					}
					if !last.IsZero() && !m.CreatedAt.Before(last) {
						t.Fatalf("not newest first: %v after %v", m.CreatedAt, last)
					}
					seen[m.ID], last = true, m.CreatedAt
					got++
				}
			}
			if got != c.want {
				t.Fatalf("exported %d, want %d", got, c.want)
			}
		})
	}
	for _, q := range []ports.MatchQuery{{Q: "-invoices"}, {MinScore: ptr(101)}, {Before: -1}} {
		if _, err := matches.Export(ctx, owner, q); !core.IsKind(err, core.KindInvalid) {
			t.Errorf("Export(%+v) = %v, want KindInvalid", q, err)
		}
	}
	// A reader that stops early stops the reading.
	pages, _ := matches.Export(ctx, owner, ports.MatchQuery{})
	for range pages {
		break
	}
}

// The inbox's export has the inbox's filters: triage and search.
func TestInboxExport(t *testing.T) {
	owner, db := exportFixture(t, 40)
	inbox := app.NewInbox(gormstore.NewTriageStore(db))
	ctx := context.Background()
	page, err := inbox.List(ctx, owner, ports.InboxQuery{Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, it := range page.Items {
		ids = append(ids, it.Match.ID)
	}
	yes, no := true, false
	if _, err := inbox.SetMany(ctx, owner, ids, core.TriageChange{Archived: &yes}); err != nil {
		t.Fatal(err)
	}
	count := func(q ports.InboxQuery) int {
		t.Helper()
		pages, err := inbox.Export(ctx, owner, q)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for items, err := range pages {
			if err != nil {
				t.Fatal(err)
			}
			n += len(items)
		}
		return n
	}
	// Posts 39, 38 and 37 are archived; of them only 39 is about invoices.
	if got := count(ports.InboxQuery{Archived: &no}); got != 37 {
		t.Errorf("not archived: %d", got)
	}
	if got := count(ports.InboxQuery{Archived: &no, Q: "invoices"}); got != 13 {
		t.Errorf("not archived, invoices: %d", got)
	}
	if _, err := inbox.Export(ctx, owner, ports.InboxQuery{Q: `""`}); !core.IsKind(err, core.KindInvalid) {
		t.Errorf("an empty phrase: %v", err)
	}
}

func ptr[T any](v T) *T { return &v }
