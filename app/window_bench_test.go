package app

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/bench/matchbench"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// BenchmarkPreview measures Window.Preview on SQLite with one owner's
// window holding 1,000,000 posts, indexed, for phrases from the rare to
// the commonest word, one with filters, and one of no word at all (read
// without the index). Each preview reads at most MaxWindowReads posts;
// read/op and found/op say how many it read and matched. The posts are
// 5 to 60 words of matchbench's vocabulary, drawn by frequency, a brand
// name in one in 200:
//
//	go test -run '^$' -bench Preview -benchtime 3x ./app
//
// EARSHOT_BENCH_WINDOW_POSTS sets another size; filling and indexing the
// window is most of the run and is reported as fill-s and index-s.
// peak-heap-MB and peak-RSS-MB are this process's over each case's
// previews, SQLite's memory in the second.
func BenchmarkPreview(b *testing.B) {
	size := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("EARSHOT_BENCH_WINDOW_POSTS")); err == nil && v > 0 {
		size = v
	}
	ctx := context.Background()
	db := dbtest.File(b)
	ownerStore := gormstore.NewOwnerStore(db)
	owners := NewOwners(ownerStore, NewKeys(gormstore.NewKeyStore(db), ownerStore, ports.SystemClock{}))
	o, err := owners.Create(ctx, "preview@example.com", "")
	if err != nil {
		b.Fatal(err)
	}
	recent := gormstore.NewRecentStore(db)
	window := NewWindow(WindowDeps{Recent: recent, Archives: gormstore.NewFilterArchiveStore(db), Phrases: gormstore.NewPhraseStore(db)},
		WindowConfig{Days: DefaultRecentDays, Posts: DefaultRecentPosts})

	vocab := matchbench.Vocabulary()
	rng := rand.New(rand.NewPCG(11, 12))
	zipf := rand.NewZipf(rng, 1.07, 2, uint64(len(vocab)-1))
	matches := gormstore.NewMatchStore(db)
	start := time.Now()
	seen := time.Now()
	for done := 0; done < size; {
		batch := make([]ports.PostMatches, 0, 1000)
		for len(batch) < cap(batch) && done < size {
			var w strings.Builder
			for i := range 5 + rng.IntN(56) {
				if i > 0 {
					w.WriteByte(' ')
				}
				w.WriteString(vocab[zipf.Uint64()])
			}
			if rng.IntN(200) == 0 {
				w.WriteString(", Acme CRM is")
				w.WriteString([]string{" cheap", " hiring", " down", " great"}[rng.IntN(4)])
			}
			batch = append(batch, ports.PostMatches{Post: core.Post{ExternalID: strconv.Itoa(done), Author: "a" + strconv.Itoa(rng.IntN(500)),
				Text: w.String(), URL: "https://x.com/p/" + strconv.Itoa(done), Likes: rng.IntN(50)},
				Keep: &ports.RecentKeep{SeenAt: seen}})
			done++
		}
		if _, err := matches.SaveMatches(ctx, o.ID, core.X, batch); err != nil {
			b.Fatal(err)
		}
	}
	fill := time.Since(start)
	start = time.Now()
	for {
		n, err := window.Index(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			break
		}
	}
	index := time.Since(start)

	for _, c := range []struct {
		name, phrase string
		filters      core.PhraseFilters
	}{
		{"brand", "acme crm", core.PhraseFilters{}},
		{"brand-filtered", "acme crm", core.PhraseFilters{Exclude: []string{"hiring"}, MinLikes: 10}},
		{"rare-word", vocab[len(vocab)-7], core.PhraseFilters{}},
		{"common-pair", vocab[0] + " " + vocab[1], core.PhraseFilters{}},
		{"commonest-word", vocab[0], core.PhraseFilters{}},
		{"no-word", "!!", core.PhraseFilters{}},
	} {
		b.Run(c.name, func(b *testing.B) {
			var pv ports.Preview
			stop := peakmem.Measure(b)
			for b.Loop() {
				if pv, err = window.Preview(ctx, o.ID, c.phrase, "x", "", c.filters); err != nil {
					b.Fatal(err)
				}
			}
			stop()
			b.ReportMetric(float64(pv.Window.Read), "read/op")
			b.ReportMetric(float64(pv.Window.Count), "found/op")
			b.ReportMetric(float64(size), "window-posts")
			b.ReportMetric(fill.Seconds(), "fill-s")
			b.ReportMetric(index.Seconds(), "index-s")
		})
	}
}
