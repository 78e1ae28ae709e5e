package main

import (
	"strings"
	"testing"
	"time"
)

// The percentiles are nearest-rank: p50 of 1..100 ms is the 50th value
// and p99 the 99th, not the one after it (with 100 requests that would
// make p99 the slowest one). They are read from a histogram, to within
// half a bucket, 1/256 of the value (histogram.go), and rounded to 10 us
// as printed: 99 ms reads 98.83 ms, still 1 ms from the slowest.
func TestReportPercentiles(t *testing.T) {
	var s summary
	for i := 1; i <= 100; i++ {
		s.add(result{kind: kindRead, latency: time.Duration(i) * time.Millisecond})
	}
	out := output(t, func() { report(&s, 10*time.Second, 0) })
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "read ") {
			continue
		}
		f := strings.Fields(line)
		if f[1] != "100" || f[2] != "10.0" || !near(t, f[3], 50*time.Millisecond) || !near(t, f[4], 99*time.Millisecond) {
			t.Errorf("read line %q, want 100 requests, 10.0 req/s, p50 50ms, p99 99ms (to within 1/256 and 10us)", line)
		}
		return
	}
	t.Fatalf("no read line:\n%s", out)
}

// near says whether the printed duration s is want to within the
// histogram's half bucket plus the 10 us rounding of the report.
func near(t *testing.T, s string, want time.Duration) bool {
	t.Helper()
	got, err := time.ParseDuration(s)
	if err != nil {
		t.Errorf("%q is no duration: %v", s, err)
		return false
	}
	return (got - want).Abs() <= want/256+5*time.Microsecond
}
