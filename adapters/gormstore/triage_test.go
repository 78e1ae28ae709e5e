package gormstore

import (
	"context"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// An id no match can have, as a client may send in a bulk change (a NUL,
// or bytes that are not UTF-8), is skipped like any other id that is not
// the owner's match, on Postgres too, which refuses such text in a
// statement: the owner's matches among the ids are changed and counted.
func TestSetTriageSkipsIdsNoRowHolds(t *testing.T) {
	for name, url := range dialects(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := openMigrated(t, url)
			o, _, ms := trendFixture(t, db, 1)
			s, yes := NewTriageStore(db), true
			for _, bad := range []string{"a\x00b", "\xff"} {
				n, err := s.SetTriage(ctx, o.ID, []string{ms[0].ID, bad}, core.TriageChange{Starred: &yes})
				if err != nil || n != 1 {
					t.Fatalf("SetTriage with %q = %d, %v; want 1", bad, n, err)
				}
				if n, err := s.SetTriage(ctx, o.ID, []string{ms[0].ID, bad}, core.TriageChange{}); err != nil || n != 1 {
					t.Fatalf("an empty change with %q = %d, %v; want 1", bad, n, err)
				}
			}
			if tr, err := s.Triage(ctx, o.ID, ms[0].ID); err != nil || !tr.Starred {
				t.Fatalf("Triage = %+v, %v; want starred", tr, err)
			}
		})
	}
}

// An inbox filtered by a phrase id no phrase can have, as a page's
// address may carry, lists nothing, on Postgres too, which refuses such
// text in a statement.
func TestInboxOfAPhraseIdNoRowHolds(t *testing.T) {
	for name, url := range dialects(t) {
		t.Run(name, func(t *testing.T) {
			db := openMigrated(t, url)
			o, _, _ := trendFixture(t, db, 1)
			for _, bad := range []string{"a\x00b", "\xff"} {
				items, more, err := NewTriageStore(db).Inbox(context.Background(), o.ID, ports.InboxFilter{MinScore: -1, PhraseID: bad, Limit: 10})
				if err != nil || len(items) != 0 || more {
					t.Fatalf("Inbox of phrase %q = %d items, %v, %v; want none", bad, len(items), more, err)
				}
			}
		})
	}
}
