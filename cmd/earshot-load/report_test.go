package main

import (
	"strings"
	"testing"
	"time"
)

// The percentiles are nearest-rank: p50 of 1..100 ms is the 50th value
// and p99 the 99th, not the one after it (with 100 requests that would
// make p99 the slowest one).
func TestReportPercentiles(t *testing.T) {
	var rs []result
	for i := 1; i <= 100; i++ {
		rs = append(rs, result{kind: "read", latency: time.Duration(i) * time.Millisecond})
	}
	out := output(t, func() { report(rs, 10*time.Second, 0) })
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "read ") {
			continue
		}
		f := strings.Fields(line)
		if f[1] != "100" || f[2] != "10.0" || f[3] != "50ms" || f[4] != "99ms" {
			t.Errorf("read line %q, want 100 requests, 10.0 req/s, p50 50ms, p99 99ms", line)
		}
		return
	}
	t.Fatalf("no read line:\n%s", out)
}
