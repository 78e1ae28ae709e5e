package peakmem

import (
	"runtime"
	"testing"
	"time"
)

// The sampler sees a 64 MiB allocation that is gone by the time it is
// stopped: the peak is the heap's while the allocation lived.
func TestHeapSeesAllocation(t *testing.T) {
	seen := make(chan uint64, 1)
	s := start(seen)
	buf := make([]byte, 64<<20)
	// Wait for a sample with the allocation in it: the sampler's, not
	// stop's last one.
	timeout := time.After(10 * time.Second)
	for v := uint64(0); v < 64<<20; {
		select {
		case v = <-seen:
		case <-timeout:
			t.Fatal("the sampler has not seen the 64 MiB within 10 s")
		}
	}
	runtime.KeepAlive(buf)
	buf = nil
	runtime.GC()
	if peak := s.stop(); peak < 64<<20 {
		t.Fatalf("peak %d bytes, want at least 64 MiB", peak)
	}
}

// A run that holds 1 MiB and makes a little garbage peaks far below the
// allocation above, through several of the sampler's samples.
func TestHeapFlat(t *testing.T) {
	seen := make(chan uint64, 1)
	s := start(seen)
	live := make([]byte, 1<<20)
	var garbage []byte
	for range 3 {
		for range 256 {
			garbage = make([]byte, 1<<10)
		}
		<-seen
	}
	runtime.KeepAlive(live)
	runtime.KeepAlive(garbage)
	if peak := s.stop(); peak < 1<<20 || peak > 16<<20 {
		t.Fatalf("peak %d bytes, want between 1 MiB and 16 MiB", peak)
	}
}

// stop returns what the last sample saw even when it comes before the
// first tick.
func TestHeapStopAtOnce(t *testing.T) {
	stop := Heap()
	buf := make([]byte, 64<<20)
	peak := stop()
	runtime.KeepAlive(buf)
	if peak < 64<<20 {
		t.Fatalf("peak %d bytes, want at least 64 MiB", peak)
	}
}

// VmHWM is read in KiB; a status without it, or with a number that is not
// one, is an error.
func TestParseHWM(t *testing.T) {
	// The shape of Linux's /proc/<pid>/status (proc(5)), cut.
	const status = "Name:\tearshot\nVmPeak:\t 1284040 kB\nVmSize:\t 1283884 kB\nVmHWM:\t   91236 kB\nVmRSS:\t   80124 kB\n"
	if got, err := parseHWM(status); err != nil || got != 91236<<10 {
		t.Fatalf("parseHWM = %d, %v; want %d", got, err, 91236<<10)
	}
	for _, bad := range []string{"Name:\tearshot\n", "VmHWM:\t  many kB\n"} {
		if got, err := parseHWM(bad); err == nil {
			t.Fatalf("parseHWM(%q) = %d, want an error", bad, got)
		}
	}
}

// MeasureHeap reports the heap's peak, and only that.
func TestMeasureHeap(t *testing.T) {
	r := testing.Benchmark(func(b *testing.B) {
		stop := MeasureHeap(b)
		var keep []byte
		for b.Loop() {
			keep = make([]byte, 8<<20)
		}
		runtime.KeepAlive(keep)
		stop()
	})
	if got := r.Extra["peak-heap-MB"]; got < 8 {
		t.Fatalf("peak-heap-MB %v of a loop that holds 8 MiB", r.Extra)
	}
	if _, ok := r.Extra["peak-RSS-MB"]; ok {
		t.Fatalf("MeasureHeap reported %v", r.Extra)
	}
}
