package storetest

import (
	"testing"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// testBacklog checks the bounded count of unscored matches. Other cases
// store and score matches on the same database meanwhile, but never
// score another owner's: the owner's unscored matches are a floor under
// the count, and the limit its ceiling. That a scored match leaves the
// count shows only on a database of one's own (app's TestIngestBacklog).
func testBacklog(t *testing.T, s Stores) {
	o := newOwner(t, s)
	p := newPhrase(t, s, o.ID, "backlog "+unique(), "x", "")
	var batch []ports.PostMatches
	for range 6 {
		batch = append(batch, ports.PostMatches{Post: post(unique()), PhraseIDs: []string{p.ID}})
	}
	res, err := s.Matches.SaveMatches(ctx, o.ID, core.X, batch)
	if err != nil || len(res.Matches) != 6 {
		t.Fatalf("SaveMatches: %d matches, %v", len(res.Matches), err)
	}
	unscored := func(limit int) int {
		t.Helper()
		n, err := s.Backlog.Unscored(ctx, limit)
		if err != nil {
			t.Fatalf("Unscored(%d): %v", limit, err)
		}
		return n
	}
	for _, limit := range []int{-1, 0} {
		if n := unscored(limit); n != 0 {
			t.Fatalf("Unscored(%d) = %d, want 0", limit, n)
		}
	}
	// Six wait: a limit at or under six is reached exactly; a larger one
	// counts all six at least, and never more than the limit.
	for _, limit := range []int{1, 5, 6} {
		if n := unscored(limit); n != limit {
			t.Fatalf("Unscored(%d) = %d with six matches unscored, want %d", limit, n, limit)
		}
	}
	if n := unscored(1 << 20); n < 6 || n > 1<<20 {
		t.Fatalf("Unscored(%d) = %d with six matches unscored", 1<<20, n)
	}
}
