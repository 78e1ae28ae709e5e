package app_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/httpapi"
	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/testkit/benchtest"
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// BenchmarkMatchesPage measures GET /api/v1/matches?limit=25 through the
// whole stack (key check, rate limit, go-kit transport, SQLite store of
// 100,000 matches, JSON) beside a bare net/http handler that writes the
// same bytes from memory, over loopback HTTP in the same run, and reports
// both rates and their ratio, and the peak heap and resident memory of
// this process while the API is read (peak-heap-MB, peak-RSS-MB).
//
//	go test -run '^$' -bench MatchesPage -benchtime 1x ./app
func BenchmarkMatchesPage(b *testing.B) {
	f := benchtest.Seed(b, dbtest.File(b), 100_000)
	api := httpapi.New(httpapi.Config{RateLimit: 1 << 30, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))},
		httpapi.Deps{Keys: f.Keys, Phrases: f.Phrases, Matches: f.Matches, Limiter: ratelimit.NewMemory(nil)})
	apiSrv := httptest.NewServer(api)
	defer apiSrv.Close()

	get := f.Getter(b)
	page := get(apiSrv.URL + "/api/v1/matches?limit=25")
	bareSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(page)
	}))
	defer bareSrv.Close()

	// Each side runs for the same fixed time with the same number of
	// concurrent clients; b.N is ignored (run with -benchtime 1x).
	rate := func(url string) float64 {
		n, took := benchtest.Load(16, 3*time.Second, func() { get(url) })
		return float64(n) / took.Seconds()
	}
	get(bareSrv.URL) // warm both connections pools
	bare := rate(bareSrv.URL + "/api/v1/matches?limit=25")
	stop := peakmem.Measure(b)
	full := rate(apiSrv.URL + "/api/v1/matches?limit=25")
	stop()
	b.ReportMetric(bare, "bare-req/s")
	b.ReportMetric(full, "api-req/s")
	b.ReportMetric(full/bare, "ratio")
}
