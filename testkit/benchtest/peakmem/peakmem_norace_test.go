//go:build linux && !race

package peakmem

import (
	"os"
	"runtime"
	"testing"
)

// Not under the race detector: the shadow memory it keeps for a heap
// that was let go stays resident, and counts in the process's RSS.
// Measure's peak RSS is the benchmark's: memory an earlier benchmark's
// heap held and let go does not count, though the runtime keeps such
// pages until it hands them back.
func TestMeasureLeavesEarlierHeapOut(t *testing.T) {
	pid := os.Getpid()
	if err := ResetRSS(pid); err != nil {
		t.Skipf("the kernel does not reset the peak: %v", err)
	}
	earlier := make([]byte, 256<<20)
	for i := 0; i < len(earlier); i += os.Getpagesize() {
		earlier[i] = 1
	}
	held, err := RSS(pid)
	if err != nil {
		t.Fatal(err)
	}
	runtime.KeepAlive(earlier) // and no longer
	r := testing.Benchmark(func(b *testing.B) {
		stop := Measure(b)
		for b.Loop() {
		}
		stop()
	})
	got, ok := r.Extra["peak-RSS-MB"]
	if !ok {
		t.Fatalf("no peak-RSS-MB in %v", r.Extra)
	}
	if _, ok := r.Extra["peak-heap-MB"]; !ok {
		t.Fatalf("no peak-heap-MB in %v", r.Extra)
	}
	if got > float64(held)/(1<<20)-128 {
		t.Fatalf("peak RSS %.0f MB of a benchmark that holds nothing, after a heap of 256 MiB (%.0f MB resident) let go", got, float64(held)/(1<<20))
	}
}
