package app

import (
	"context"
	"fmt"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Applying a phrase's filters reads at most its bound of the matches
// not archived; applying again goes on past those it archived, to the
// older ones, while the preview still counts the archived among the
// phrase's newest matches.
func TestApplyFiltersAgainReachesOlder(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		const bound = 5
		ww := newWindowWorld(t, w, WindowConfig{Days: 7, Posts: 1000, MatchReads: bound}, false)
		o := w.owner(t, "older@example.com")
		p, _, err := ww.phrases.Add(ctx, o.ID, "acme", "x", "", "")
		if err != nil {
			t.Fatal(err)
		}
		var batch []ports.PostMatches
		for i := range bound + 2 {
			batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: fmt.Sprint(i), Text: "acme hiring",
				URL: fmt.Sprintf("https://x.com/p/%d", i)}, PhraseIDs: []string{p.ID}})
		}
		if _, err := w.matches.SaveMatches(ctx, o.ID, core.X, batch); err != nil {
			t.Fatal(err)
		}
		hiring := []string{"hiring"}
		if _, err := ww.phrases.Update(ctx, o.ID, p.ID, nil, core.PhraseFiltersChange{Exclude: &hiring}); err != nil {
			t.Fatal(err)
		}
		first, err := ww.window.ApplyFilters(ctx, o.ID, p.ID)
		if err != nil || first.Set.Matches != bound || first.Read != bound || !first.Partial {
			t.Fatalf("first application = %+v, %v", first, err)
		}
		pv, err := ww.window.PreviewChange(ctx, o.ID, p.ID, core.PhraseFiltersChange{})
		if err != nil || pv.Dropped.Read != bound || pv.Dropped.Count != bound || !pv.Dropped.Partial || pv.Archivable != 0 {
			t.Fatalf("preview after the first application = %+v, archivable %d, %v", pv.Dropped, pv.Archivable, err)
		}
		again, err := ww.window.ApplyFilters(ctx, o.ID, p.ID)
		if err != nil || again.Set.Matches != 2 || again.Read != 2 || again.Partial {
			t.Fatalf("applying again archived %d (set %q), want the 2 older ones: %+v, %v", again.Set.Matches, again.Set.ID, again, err)
		}
		if third, err := ww.window.ApplyFilters(ctx, o.ID, p.ID); err != nil || third.Set.ID != "" || third.Read != 0 || third.Partial {
			t.Fatalf("a third application = %+v, %v", third, err)
		}
	})
}

// racingArchives runs race once, after the first read of a phrase's
// matches: another application of the same phrase arriving while the
// first has read its matches and not yet archived them.
type racingArchives struct {
	ports.FilterArchiveStore
	race func()
}

func (r *racingArchives) PhraseMatches(ctx context.Context, ownerID, phraseID string, limit int, unarchived bool, each func(core.Match, bool) bool) (bool, error) {
	more, err := r.FilterArchiveStore.PhraseMatches(ctx, ownerID, phraseID, limit, unarchived, each)
	if race := r.race; race != nil {
		r.race = nil
		race()
	}
	return more, err
}

// Two applications of one phrase's filters at once: the second must not
// replace the first's set with an empty one, which left the matches the
// first archived with no set to undo them by.
func TestApplyFiltersTwiceAtOnceKeepsUndo(t *testing.T) {
	t.Parallel()
	databases(t, func(t *testing.T, w world) {
		ctx := context.Background()
		ww := newWindowWorld(t, w, week, false)
		o := w.owner(t, "twice@example.com")
		p, _, err := ww.phrases.Add(ctx, o.ID, "acme", "x", "", "")
		if err != nil {
			t.Fatal(err)
		}
		var batch []ports.PostMatches
		for i := range 3 {
			batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: fmt.Sprint(i), Text: "acme hiring",
				URL: fmt.Sprintf("https://x.com/p/%d", i)}, PhraseIDs: []string{p.ID}})
		}
		if _, err := w.matches.SaveMatches(ctx, o.ID, core.X, batch); err != nil {
			t.Fatal(err)
		}
		hiring := []string{"hiring"}
		if _, err := ww.phrases.Update(ctx, o.ID, p.ID, nil, core.PhraseFiltersChange{Exclude: &hiring}); err != nil {
			t.Fatal(err)
		}
		racing := &racingArchives{FilterArchiveStore: ww.window.d.Archives}
		ww.window.d.Archives = racing
		var second ports.Applied
		var secondErr error
		racing.race = func() { second, secondErr = ww.window.ApplyFilters(ctx, o.ID, p.ID) }
		first, err := ww.window.ApplyFilters(ctx, o.ID, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		archived := first.Set.Matches + second.Set.Matches
		if archived != 3 || (secondErr != nil && !core.IsKind(secondErr, core.KindConflict)) {
			t.Fatalf("the applications archived %d (%+v; %+v, %v), want 3", archived, first, second, secondErr)
		}
		last, err := ww.window.LastApplied(ctx, o.ID, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n, err := ww.window.UndoApply(ctx, o.ID, p.ID, last.ID); err != nil || n != 3 {
			t.Fatalf("undoing the last set restored %d, %v; want the 3 archived", n, err)
		}
	})
}
