package x_test

import (
	"context"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/helper/browser"
	"github.com/earshothq/earshot/helper/x"
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
)

// BenchmarkLongRun reads x's search against the fake through the proxy,
// in one browser, as a long-running helper does: each read scrolls
// through the page cap's three SearchTimeline pages. It reports the
// reader's peak heap over the run (Chromium is its own process and
// apart). Memory stays flat when the peak does not grow with b.N: a read
// keeps its page's answers only until it returns. peak-heap-MB and
// peak-RSS-MB are the test process's over the reads, sampled between
// them too, the fake and the proxy included and Chromium not.
func BenchmarkLongRun(b *testing.B) {
	if _, err := os.Stat(browser.DefaultExecPath); err != nil {
		b.Skipf("no Chromium at %s: benchmark skipped", browser.DefaultExecPath)
	}
	fake, proxy := newFakeX(b), newForwardProxy(b)
	fake.allPages(b)
	r := &x.Reader{BaseURL: fake.srv.URL, Pace: -1,
		Browser: browser.Options{NoSandbox: os.Geteuid() == 0, Timeout: 30 * time.Second}}
	b.Cleanup(func() { r.Close() })
	in := helper.In{
		Phrases:  []helper.Phrase{{Phrase: "earshot"}},
		Session:  jar,
		ViaProxy: true,
		Proxy:    proxy.URL(),
		// No checkpoint: every read emits the answer's posts again.
		Since:  func(string) string { return "" },
		Report: func(context.Context, helper.Signal, time.Duration) error { return nil },
	}
	posts := 0
	emit := func(helper.Post, helper.Mark) error { posts++; return nil }
	var peak uint64
	var ms runtime.MemStats
	stop := peakmem.Measure(b)
	for b.Loop() {
		if err := r.Read(context.Background(), in, emit); err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapAlloc)
	}
	stop()
	if posts != 6*b.N {
		b.Fatalf("%d posts over %d reads, want the 6 of three pages a read", posts, b.N)
	}
	b.ReportMetric(float64(peak), "peak-heap-B")
}
