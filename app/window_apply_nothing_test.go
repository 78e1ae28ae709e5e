package app

import (
	"context"
	"fmt"
	"testing"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// An application whose matches to archive were all archived by hand
// after it read them archives nothing: it answers with no set (setId
// null), and the phrase's earlier set stays its last, with its undo.
func TestApplyFiltersArchivingNothingKeepsUndo(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		ww := newWindowWorld(t, w, week, false)
		o := w.owner(t, "nothing@example.com")
		p, _, err := ww.phrases.Add(ctx, o.ID, "acme", "x", "", "")
		if err != nil {
			t.Fatal(err)
		}
		save := func(ids ...string) []core.Match {
			var batch []ports.PostMatches
			for _, id := range ids {
				batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: id, Text: "acme hiring",
					URL: fmt.Sprintf("https://x.com/p/%s", id)}, PhraseIDs: []string{p.ID}})
			}
			res, err := w.matches.SaveMatches(ctx, o.ID, core.X, batch)
			if err != nil || len(res.Matches) != len(ids) {
				t.Fatalf("SaveMatches = %+v, %v", res, err)
			}
			return res.Matches
		}
		save("a", "b")
		hiring := []string{"hiring"}
		if _, err := ww.phrases.Update(ctx, o.ID, p.ID, nil, core.PhraseFiltersChange{Exclude: &hiring}); err != nil {
			t.Fatal(err)
		}
		first, err := ww.window.ApplyFilters(ctx, o.ID, p.ID)
		if err != nil || first.Set.ID == "" || first.Set.Matches != 2 {
			t.Fatalf("first application = %+v, %v", first, err)
		}
		// A later match, archived by hand between the second
		// application's read and its archiving.
		later := save("c")
		racing := &racingArchives{FilterArchiveStore: ww.window.d.Archives}
		ww.window.d.Archives = racing
		archived := true
		racing.race = func() {
			if _, err := gormstore.NewTriageStore(w.db).SetTriage(ctx, o.ID, []string{later[0].ID}, core.TriageChange{Archived: &archived}); err != nil {
				t.Error(err)
			}
		}
		second, err := ww.window.ApplyFilters(ctx, o.ID, p.ID)
		if err != nil || second.Set != (core.ArchiveSet{}) || second.Read != 1 {
			t.Fatalf("second application = %+v, %v; want no set, one match read", second, err)
		}
		last, err := ww.window.LastApplied(ctx, o.ID, p.ID)
		if err != nil || last.ID != first.Set.ID {
			t.Fatalf("last set = %+v, %v; want the first application's %s", last, err, first.Set.ID)
		}
		if n, err := ww.window.UndoApply(ctx, o.ID, p.ID, first.Set.ID); err != nil || n != 2 {
			t.Fatalf("undoing the first set restored %d, %v; want its 2", n, err)
		}
	})
}
