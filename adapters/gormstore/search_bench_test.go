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
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
	"github.com/earshothq/earshot/testkit/dbtest"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// BenchmarkSearchPage measures a page of 25 of a search of an owner's
// 100,000 matches beside the plain page of the same listing, in the same
// run, on a SQLite file and (with EARSHOT_TEST_POSTGRES_URL) on Postgres,
// and reports the time of each and its ratio to the plain page. The
// posts vary: "acme" is in every one, "acme pricing" in one in ten, a
// topic word in one in a hundred, a rare word in ten posts. It reports
// too this process's peak heap and resident memory over the pages
// (peak-heap-MB, peak-RSS-MB; on SQLite the database's memory is the
// process's, on Postgres the server's, not counted). b.N is ignored:
// run with -benchtime 1x.
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
			stop := peakmem.Measure(b)
			defer stop()
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

// BenchmarkSearchOwners measures whether one owner's search costs what
// another owner's matches hold. A small owner (2,000 matches, "acme" in
// one in ten, a fifth of them starred) is searched for "acme" alone,
// then again after a big owner stores 200,000 matches that all hold
// "acme", in the same run: starred, archived left out, polled for what
// was scored since, the plain inbox and the API's list, a page of 25
// each. It reports each time before and after and their ratio, and the
// process's peak RSS over each listing's repetitions (on SQLite the
// database's memory is the process's; on Postgres it is the server's,
// not counted), and the peak heap over all the listings before and
// after (alone-peak-heap-MB, beside-peak-heap-MB). b.N is ignored: run
// with -benchtime 1x.
//
//	go test -run '^$' -bench SearchOwners -benchtime 1x ./adapters/gormstore
func BenchmarkSearchOwners(b *testing.B) {
	urls := map[string]func(testing.TB) *gormstore.DB{"sqlite": dbtest.File}
	if os.Getenv(pgtest.Env) != "" {
		urls["postgres"] = func(tb testing.TB) *gormstore.DB { return dbtest.Open(tb, pgtest.URL(tb)) }
	}
	for name, open := range urls {
		b.Run(name, func(b *testing.B) {
			db := open(b)
			ctx := context.Background()
			small := seedOwner(b, db, "small@example.com", 2_000, 10, 5)
			analyze := func() {
				if db.Postgres() {
					// As autovacuum would after a load this size.
					if _, err := db.SQL().Exec("ANALYZE matches; ANALYZE match_triage"); err != nil {
						b.Fatal(err)
					}
				}
			}
			analyze()
			search, err := core.ParseSearch("acme")
			if err != nil {
				b.Fatal(err)
			}
			yes, no := true, false
			since := time.Now().Add(-time.Hour)
			triage, matches := gormstore.NewTriageStore(db), gormstore.NewMatchStore(db)
			cases := []struct {
				name string
				list func() (int, error)
			}{
				{"starred", inbox(ctx, triage, small, ports.InboxFilter{Starred: &yes, Search: search})},
				{"not-archived", inbox(ctx, triage, small, ports.InboxFilter{Archived: &no, Search: search})},
				{"scored-after", inbox(ctx, triage, small, ports.InboxFilter{ScoredAfter: since, Search: search})},
				{"inbox", inbox(ctx, triage, small, ports.InboxFilter{Search: search})},
				{"matches", func() (int, error) {
					ms, _, err := matches.Matches(ctx, small, ports.MatchFilter{MinScore: -1, Limit: 25, Search: search})
					return len(ms), err
				}},
			}
			type took struct {
				d    time.Duration
				peak float64
				n    int
			}
			pid := os.Getpid()
			peakRSS := func() float64 {
				peak, _ := peakmem.RSS(pid) // 0 where /proc is missing
				return float64(peak) / (1 << 20)
			}
			measure := func() ([]took, uint64) {
				stop := peakmem.Heap()
				var out []took
				for _, c := range cases {
					_ = peakmem.ResetRSS(pid) // elsewhere than Linux, the peak since the process began
					// Each listing runs for half a second, at least 10 times.
					start, runs, n := time.Now(), 0, 0
					for ; runs < 10 || time.Since(start) < time.Second/2; runs++ {
						if n, err = c.list(); err != nil {
							b.Fatal(err)
						}
					}
					out = append(out, took{time.Since(start) / time.Duration(runs), peakRSS(), n})
				}
				return out, stop()
			}
			alone, aloneHeap := measure()
			seedOwner(b, db, "big@example.com", 200_000, 1, 0)
			analyze()
			beside, besideHeap := measure()
			peakmem.Report(b, "alone-peak-heap", aloneHeap)
			peakmem.Report(b, "beside-peak-heap", besideHeap)
			for i, c := range cases {
				if alone[i].n != beside[i].n {
					b.Fatalf("%s: %d matches alone, %d beside the big owner", c.name, alone[i].n, beside[i].n)
				}
				b.ReportMetric(float64(alone[i].d.Microseconds()), c.name+"-alone-us")
				b.ReportMetric(float64(beside[i].d.Microseconds()), c.name+"-beside-us")
				b.ReportMetric(float64(beside[i].d)/float64(alone[i].d), c.name+"-ratio")
				b.ReportMetric(alone[i].peak, c.name+"-alone-peakMB")
				b.ReportMetric(beside[i].peak, c.name+"-beside-peakMB")
			}
		})
	}
}

// inbox lists a page of 25 of ownerID's inbox through f.
func inbox(ctx context.Context, s *gormstore.TriageStore, ownerID string, f ports.InboxFilter) func() (int, error) {
	f.MinScore, f.Limit = -1, 25
	return func() (int, error) {
		items, _, err := s.Inbox(ctx, ownerID, f)
		return len(items), err
	}
}

// seedOwner stores n scored matches of a new owner on x, 1,000 to a
// batch, "acme" in every one in acme, and stars every one in star (none
// when 0), and returns the owner's id.
func seedOwner(tb testing.TB, db *gormstore.DB, email string, n, acme, star int) string {
	tb.Helper()
	ctx := context.Background()
	o, err := core.NewOwner(email, "")
	if err != nil {
		tb.Fatal(err)
	}
	if err := gormstore.NewOwnerStore(db).CreateOwner(ctx, &o); err != nil {
		tb.Fatal(err)
	}
	p, err := core.NewPhrase(o.ID, "tool", "x", "")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := gormstore.NewPhraseStore(db).CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 1}, ports.Idempotency{}); err != nil {
		tb.Fatal(err)
	}
	store, triage := gormstore.NewMatchStore(db), gormstore.NewTriageStore(db)
	yes := true
	for i := 0; i < n; i += 1000 {
		batch := make([]ports.PostMatches, min(1000, n-i))
		for j := range batch {
			k := i + j
			name := "a tool"
			if k%acme == 0 {
				name = "acme"
			}
			batch[j] = ports.PostMatches{Post: core.Post{
				ExternalID: fmt.Sprint(k), Author: fmt.Sprint("author", k%500), Title: "Looking for a tool",
				Text: fmt.Sprintf("We have used %s for %d years. Any alternatives for topic%d?", name, k%9, k%100),
				URL:  fmt.Sprintf("https://x.com/a/status/%d", k),
			}, PhraseIDs: []string{p.ID}}
		}
		res, err := store.SaveMatches(ctx, o.ID, core.X, batch)
		if err != nil {
			tb.Fatal(err)
		}
		var updates []ports.ScoreUpdate
		var starred []string
		for j, m := range res.Matches {
			updates = append(updates, ports.ScoreUpdate{Match: m, Score: core.Score{Value: 70, Intent: core.IntentQuestion, Reason: "r"}})
			if star > 0 && (i+j)%star == 0 {
				starred = append(starred, m.ID)
			}
		}
		if _, err := store.SetScores(ctx, updates, nil); err != nil {
			tb.Fatal(err)
		}
		if len(starred) > 0 {
			if _, err := triage.SetTriage(ctx, o.ID, starred, core.TriageChange{Starred: &yes}); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return o.ID
}
