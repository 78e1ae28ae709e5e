package app_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/httpapi"
	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/testkit/benchtest"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// BenchmarkExportMemory exports an owner's 10,000 and then 100,000
// matches as CSV through GET /api/v1/matches/export (key check, app's
// paging, SQLite file, the streaming writer) over loopback HTTP, and
// reports the peak Go heap of each export (sampled as the client reads:
// the heap's objects, and the live heap as of the latest collection),
// the ratio of the peaks (flat when close to 1: the export holds a page,
// not the file) and the larger export's rate. b.N is ignored: run with
// -benchtime 1x.
//
//	go test -run '^$' -bench ExportMemory -benchtime 1x ./app
func BenchmarkExportMemory(b *testing.B) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	export := func(n int) (peak, live uint64, size int64, took time.Duration) {
		f := benchtest.Seed(b, dbtest.File(b), n)
		api := httpapi.New(httpapi.Config{RateLimit: 1 << 30, Logger: quiet},
			httpapi.Deps{Keys: f.Keys, Phrases: f.Phrases, Matches: f.Matches, Limiter: ratelimit.NewMemory(nil)})
		srv := httptest.NewServer(api)
		defer srv.Close()
		req, _ := http.NewRequest("GET", srv.URL+"/api/v1/matches/export?format=csv", nil)
		req.Header.Set("Authorization", "Bearer "+f.APIKey)
		runtime.GC()
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			b.Fatalf("export: %v %v", resp, err)
		}
		defer resp.Body.Close()
		buf := make([]byte, 32<<10)
		for {
			k, err := resp.Body.Read(buf)
			size += int64(k)
			metrics.Read(sample)
			peak, live = max(peak, sample[0].Value.Uint64()), max(live, sample[1].Value.Uint64())
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
		}
		return peak, live, size, time.Since(start)
	}
	small, smallLive, smallSize, _ := export(10_000)
	large, largeLive, largeSize, took := export(100_000)
	if largeSize < 9*smallSize {
		b.Fatalf("exports of %d and %d bytes", smallSize, largeSize)
	}
	b.ReportMetric(float64(small)/(1<<20), "peak-10k-MiB")
	b.ReportMetric(float64(large)/(1<<20), "peak-100k-MiB")
	b.ReportMetric(float64(large)/float64(small), "ratio")
	b.ReportMetric(float64(smallLive)/(1<<20), "live-10k-MiB")
	b.ReportMetric(float64(largeLive)/(1<<20), "live-100k-MiB")
	b.ReportMetric(float64(largeSize)/(1<<20), "file-100k-MiB")
	b.ReportMetric(100_000/took.Seconds(), "matches/s")
}
