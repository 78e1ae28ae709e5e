package gormstore

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
)

// BenchmarkSearchIndexIngest measures what the index's partition per
// owner (migration 30) costs ingest: SaveMatches of 1,000 posts a batch,
// two owners taking turns, into a SQLite file at schema 29 (one index of
// every owner's matches) and one at schema 30, the two files taking
// turns in the same run. It reports the time of a batch on each and
// their ratio, then the time migration 30 takes on the older file, per
// 1,000 matches it holds, and this process's peak heap and resident
// memory over the batches of both files (peak-heap-MB, peak-RSS-MB;
// SQLite's memory is the process's). b.N is ignored: run with
// -benchtime 1x.
//
//	go test -run '^$' -bench SearchIndexIngest -benchtime 1x ./adapters/gormstore
func BenchmarkSearchIndexIngest(b *testing.B) {
	ctx := context.Background()
	type side struct {
		db      *DB
		owners  []string
		phrases []string
		took    time.Duration
	}
	var sides []*side
	for _, version := range []int{29, 30} {
		db, err := Open("sqlite://" + filepath.Join(b.TempDir(), fmt.Sprint(version, ".db")))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { db.Close() })
		if err := db.migrate(ctx, version); err != nil {
			b.Fatal(err)
		}
		s := &side{db: db}
		for o := range 2 {
			owner, _ := core.NewOwner(fmt.Sprintf("o%d@example.com", o), "")
			if err := NewOwnerStore(db).CreateOwner(ctx, &owner); err != nil {
				b.Fatal(err)
			}
			p, _ := core.NewPhrase(owner.ID, "acme", "x", "")
			if _, err := NewPhraseStore(db).CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 1}, ports.Idempotency{}); err != nil {
				b.Fatal(err)
			}
			s.owners, s.phrases = append(s.owners, owner.ID), append(s.phrases, p.ID)
		}
		sides = append(sides, s)
	}
	const batches = 40
	stop := peakmem.Measure(b)
	for i := range batches {
		for _, s := range sides {
			ownerID, phraseID := s.owners[i%2], s.phrases[i%2]
			batch := make([]ports.PostMatches, 1000)
			for j := range batch {
				k := i*1000 + j
				batch[j] = ports.PostMatches{Post: core.Post{
					ExternalID: fmt.Sprint(k), Author: fmt.Sprint("author", k%500), Title: "Looking for an acme alternative",
					Text: fmt.Sprintf("We have used acme for %d years. Any alternatives for topic%d? Ref rare%d.", k%9, k%100, k%10_000),
				}, PhraseIDs: []string{phraseID}}
			}
			start := time.Now()
			res, err := NewMatchStore(s.db).SaveMatches(ctx, ownerID, core.X, batch)
			if err != nil {
				b.Fatal(err)
			}
			s.took += time.Since(start)
			if len(res.Matches) != len(batch) {
				b.Fatalf("%d matches stored of %d", len(res.Matches), len(batch))
			}
		}
	}
	stop()
	b.ReportMetric(float64(sides[0].took.Microseconds())/batches, "v29-us/batch")
	b.ReportMetric(float64(sides[1].took.Microseconds())/batches, "v30-us/batch")
	b.ReportMetric(float64(sides[1].took)/float64(sides[0].took), "ratio")
	// Migration 30 builds the index again over what the older file holds.
	start := time.Now()
	if err := sides[0].db.migrate(ctx, 30); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/batches, "migrate-us/1000")
}
