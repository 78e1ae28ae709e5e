// Package peakmem measures the peak memory of what a benchmark runs: the
// Go heap of the test process, sampled while the benchmark runs, and the
// peak resident set (VmHWM) of a process, the test's own or a server it
// started. It imports nothing of the module, so that the benchmarks of
// core, match, app and gormstore, which benchtest itself depends on, can
// use it too.
//
// Every figure is reported in MB of 2^20 bytes, under a unit ending in
// "-MB", as the benchmarks' earlier peak-RSS-MB figures were.
package peakmem

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Period is how often Heap samples the heap. The heap's objects include
// garbage not yet swept, so a peak lasts until the next collection ends;
// a millisecond sees most of them at a cost (one runtime/metrics read)
// that a benchmark does not notice.
const Period = time.Millisecond

// heapMetric is the bytes the heap's objects occupy, the dead not yet
// swept among them: what the process needs from the heap at that moment.
const heapMetric = "/memory/classes/heap/objects:bytes"

// Heap collects garbage (so what ran before does not count), then samples
// the Go heap every Period until stop is called. stop takes a last
// sample, ends the sampling and returns the highest heap seen, in bytes.
// stop is called once.
func Heap() (stop func() uint64) {
	return start(nil).stop
}

// sampler is one run of Heap.
type sampler struct {
	sample []metrics.Sample
	peak   uint64 // written by start and then run only, read after done
	quit   chan struct{}
	done   chan struct{}
	seen   chan uint64 // each sample, sent when there is room; nil but in tests
}

func start(seen chan uint64) *sampler {
	runtime.GC()
	s := &sampler{sample: []metrics.Sample{{Name: heapMetric}}, quit: make(chan struct{}), done: make(chan struct{}), seen: seen}
	// The first sample and the ticker are made here, not in the
	// goroutine: both allocate (the first read of runtime/metrics its
	// table), which would otherwise count among the allocations of the
	// benchmark's first iterations.
	s.read()
	go s.run(time.NewTicker(Period))
	return s
}

func (s *sampler) read() {
	metrics.Read(s.sample)
	v := s.sample[0].Value.Uint64()
	s.peak = max(s.peak, v)
	select {
	case s.seen <- v:
	default:
	}
}

func (s *sampler) run(tick *time.Ticker) {
	defer close(s.done)
	defer tick.Stop()
	for {
		select {
		case <-s.quit:
			s.read()
			return
		case <-tick.C:
			s.read()
		}
	}
}

func (s *sampler) stop() uint64 {
	close(s.quit)
	<-s.done
	return s.peak
}

// RSS is the peak resident set size (VmHWM) of process pid in bytes, as
// /proc/<pid>/status has it: the peak since the process began or since
// ResetRSS. An error where /proc is missing (not Linux) or the process
// has gone.
func RSS(pid int) (uint64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return parseHWM(string(b))
}

// parseHWM reads the VmHWM line of a /proc/<pid>/status file, in kB
// (which the kernel means as KiB).
func parseHWM(status string) (uint64, error) {
	for line := range strings.Lines(status) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("VmHWM: %w", err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("no VmHWM in the status")
}

// ResetRSS starts pid's peak resident set afresh, at what it holds now
// (Linux's clear_refs). An error where the kernel does not allow it; RSS
// then still reports the peak since the process began.
func ResetRSS(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// Report reports bytes on b as name+"-MB", in MB of 2^20 bytes.
func Report(b *testing.B, name string, bytes uint64) {
	b.ReportMetric(float64(bytes)/(1<<20), name+"-MB")
}

// MeasureHeap samples the Go heap while a benchmark runs, as Heap does;
// stop reports the peak on b as peak-heap-MB. It is for benchmarks whose
// memory is the heap and whose figures are times of short operations:
// it adds a collection before the part timed, as the testing package's
// own, and nothing after it.
func MeasureHeap(b *testing.B) (stop func()) {
	heap := Heap()
	return func() { Report(b, "peak-heap", heap()) }
}

// Measure is MeasureHeap and, where the kernel lets it start afresh, the
// process's peak resident set, which counts what the heap does not
// (SQLite's memory, goroutine stacks): stop reports peak-heap-MB and
// peak-RSS-MB. The second is left out where the peak could not be
// started afresh, as it would then be the peak of every benchmark
// before. It is for benchmarks of a whole stack that run for seconds:
// before the peak starts afresh it hands the heap's free pages back to
// the system (else what an earlier benchmark let go would count), and
// the benchmark's first allocations then take them back, which costs
// milliseconds. Call it around the part timed, once the fixtures are
// made.
func Measure(b *testing.B) (stop func()) {
	pid := os.Getpid()
	debug.FreeOSMemory()
	rss := ResetRSS(pid) == nil
	heap := Heap()
	return func() {
		Report(b, "peak-heap", heap())
		if !rss {
			return
		}
		if peak, err := RSS(pid); err == nil {
			Report(b, "peak-RSS", peak)
		}
	}
}

// ReportRSS reports the peak resident set of process pid (a server the
// benchmark started) on b as name+"-MB", and logs why where it cannot be
// read.
func ReportRSS(b *testing.B, name string, pid int) {
	peak, err := RSS(pid)
	if err != nil {
		b.Logf("no %s: %v", name, err)
		return
	}
	Report(b, name, peak)
}
