package gormstore_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/dbtest"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// BenchmarkSearchPage measures a page of 25 of a search of an owner's
// 100,000 matches beside the plain page of the same listing, in the same
// run, on a SQLite file and (with EARSHOT_TEST_POSTGRES_URL) on Postgres,
// and reports the time of each and its ratio to the plain page. The
// posts vary: "acme" is in every one, "acme pricing" in one in ten, a
// topic word in one in a hundred, a rare word in ten posts. b.N is
// ignored: run with -benchtime 1x.
//
//	go test -run '^$' -bench SearchPage -benchtime 1x ./adapters/gormstore
func BenchmarkSearchPage(b *testing.B) {
	urls := map[string]func(testing.TB) *gormstore.DB{"sqlite": dbtest.File}
	if os.Getenv(pgtest.Env) != "" {
		urls["postgres"] = func(tb testing.TB) *gormstore.DB { return dbtest.Open(tb, pgtest.URL(tb)) }
	}
	for name, open := range urls {
		b.Run(name, func(b *testing.B) {
			db := open(b)
			owner := seedSearch(b, db, 100_000)
			if db.Postgres() {
				// As autovacuum would after a load this size.
				if _, err := db.SQL().Exec("ANALYZE matches"); err != nil {
					b.Fatal(err)
				}
			}
			store := gormstore.NewMatchStore(db)
			ctx := context.Background()
			page := func(f ports.MatchFilter) time.Duration {
				f.MinScore, f.Limit = -1, 25
				// Each listing runs for a second, at least 20 times.
				start, n := time.Now(), 0
				for ; n < 20 || time.Since(start) < time.Second; n++ {
					if _, _, err := store.Matches(ctx, owner, f); err != nil {
						b.Fatal(err)
					}
				}
				return time.Since(start) / time.Duration(n)
			}
			parse := func(q string) core.Search {
				s, err := core.ParseSearch(q)
				if err != nil {
					b.Fatal(err)
				}
				return s
			}
			half, _, _ := store.Matches(ctx, owner, ports.MatchFilter{MinScore: -1, Limit: 50_000})
			deep := half[len(half)-1].CreatedAt
			plain := page(ports.MatchFilter{})
			b.ReportMetric(float64(plain.Microseconds()), "plain-us/page")
			for _, c := range []struct {
				name string
				f    ports.MatchFilter
			}{
				{"every-post", ports.MatchFilter{Search: parse("acme")}},
				{"every-post-deep", ports.MatchFilter{Search: parse("acme"), Before: deep}},
				{"phrase-10pct", ports.MatchFilter{Search: parse(`"acme pricing"`)}},
				{"word-1pct", ports.MatchFilter{Search: parse("topic42")}},
				{"two-words-1pct", ports.MatchFilter{Search: parse("topic42 pricing")}},
				{"excluded-1pct", ports.MatchFilter{Search: parse("pricing -topic42")}},
				{"word-10-posts", ports.MatchFilter{Search: parse("rare4242")}},
				{"x-score-50", ports.MatchFilter{Search: parse(`"acme pricing"`), Platform: core.X, MinScore: 50}},
			} {
				took := page(c.f)
				b.ReportMetric(float64(took.Microseconds()), c.name+"-us/page")
				b.ReportMetric(float64(took)/float64(plain), c.name+"-ratio")
			}
		})
	}
}

// seedSearch stores n matches of one owner on x, 1,000 to a batch, and
// returns the owner's id.
func seedSearch(tb testing.TB, db *gormstore.DB, n int) string {
	tb.Helper()
	ctx := context.Background()
	o, err := core.NewOwner("search@example.com", "")
	if err != nil {
		tb.Fatal(err)
	}
	if err := gormstore.NewOwnerStore(db).CreateOwner(ctx, &o); err != nil {
		tb.Fatal(err)
	}
	p, err := core.NewPhrase(o.ID, "acme", "x", "")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := gormstore.NewPhraseStore(db).CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 1}, ports.Idempotency{}); err != nil {
		tb.Fatal(err)
	}
	store := gormstore.NewMatchStore(db)
	for i := 0; i < n; i += 1000 {
		batch := make([]ports.PostMatches, min(1000, n-i))
		for j := range batch {
			k := i + j
			pricing := "The pricing keeps going up."
			if k%10 == 0 {
				pricing = "The acme pricing keeps going up."
			}
			batch[j] = ports.PostMatches{Post: core.Post{
				ExternalID: fmt.Sprint(k), Author: fmt.Sprint("author", k%500), Title: "Looking for an acme alternative",
				Text: fmt.Sprintf("We have used acme for %d years. %s Any alternatives for topic%d? Ref rare%d.", k%9, pricing, k%100, k%10_000),
				URL:  fmt.Sprintf("https://x.com/a/status/%d", k),
			}, PhraseIDs: []string{p.ID}}
		}
		res, err := store.SaveMatches(ctx, o.ID, core.X, batch)
		if err != nil {
			tb.Fatal(err)
		}
		// Score half of them, so that a minimum score filters.
		var updates []ports.ScoreUpdate
		for j, m := range res.Matches {
			updates = append(updates, ports.ScoreUpdate{Match: m, Score: core.Score{Value: 30 + 40*(j%2), Intent: core.IntentQuestion, Reason: "r"}})
		}
		if _, err := store.SetScores(ctx, updates, nil); err != nil {
			tb.Fatal(err)
		}
	}
	return o.ID
}
