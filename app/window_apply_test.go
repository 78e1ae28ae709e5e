package app

import (
	"context"
	"fmt"
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

func TestApplyFiltersAgainReachesOlder(t *testing.T) {
	ctx := context.Background()
	w := newWorld(t)
	ww := newWindowWorld(t, w, week, false)
	o := w.owner(t, "older@example.com")
	p, _, err := ww.phrases.Add(ctx, o.ID, "acme", "x", "", "")
	if err != nil {
		t.Fatal(err)
	}
	const n = MaxMatchReads + 10
	for start := 0; start < n; start += 1000 {
		var batch []ports.PostMatches
		for i := start; i < min(start+1000, n); i++ {
			batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: fmt.Sprint(i), Text: "acme hiring",
				URL: fmt.Sprintf("https://x.com/p/%d", i)}, PhraseIDs: []string{p.ID}})
		}
		if _, err := w.matches.SaveMatches(ctx, o.ID, core.X, batch); err != nil {
			t.Fatal(err)
		}
	}
	hiring := []string{"hiring"}
	if _, err := ww.phrases.Update(ctx, o.ID, p.ID, nil, core.PhraseFiltersChange{Exclude: &hiring}); err != nil {
		t.Fatal(err)
	}
	first, err := ww.window.ApplyFilters(ctx, o.ID, p.ID)
	if err != nil || first.Set.Matches != MaxMatchReads || !first.Partial {
		t.Fatalf("first application = %+v, %v", first, err)
	}
	again, err := ww.window.ApplyFilters(ctx, o.ID, p.ID)
	if err != nil || again.Set.Matches != 10 {
		t.Fatalf("applying again archived %d (set %q), want the 10 older ones: %+v, %v", again.Set.Matches, again.Set.ID, again, err)
	}
}
