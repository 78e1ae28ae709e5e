package gormstore_test

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/benchtest"
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// BenchmarkMatchesPageRead measures the store's side of GET /matches: one
// page of 25 of an owner's 100,000 matches on a SQLite file, read by one
// client, so its time and allocations per page do not depend on how busy
// the machine is the way the request rates of app's BenchmarkMatchesPage do
// (cpu-ns/op less still); and the process's peak heap and resident memory
// while it reads (peak-heap-MB, peak-RSS-MB; SQLite's memory is the
// process's).
func BenchmarkMatchesPageRead(b *testing.B) {
	db := dbtest.File(b)
	f := benchtest.Seed(b, db, 100_000)
	store := gormstore.NewMatchStore(db)
	ctx := context.Background()
	b.ReportAllocs()
	stop := peakmem.Measure(b)
	start := cpuTime()
	for b.Loop() {
		ms, more, err := store.Matches(ctx, f.Owner.ID, ports.MatchFilter{MinScore: -1, Limit: 25})
		if err != nil || len(ms) != 25 || !more {
			b.Fatalf("Matches = %d, %v, %v", len(ms), more, err)
		}
	}
	b.ReportMetric(float64(cpuTime()-start)/float64(b.N), "cpu-ns/op")
	stop()
}

// cpuTime is the CPU time the process has used: on a machine shared with
// other work it measures a page's cost where the wall clock does not.
func cpuTime() time.Duration {
	var u syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &u)
	return time.Duration(u.Utime.Nano() + u.Stime.Nano())
}
