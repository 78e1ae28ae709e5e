package main

// The read benchmark measures what an outside harness measures: the built
// binary in a process of its own on loopback, eight keep-alive clients
// reading match pages (a quarter first pages, the rest at random cursors),
// and a baseline process that answers the same requests with the same
// bytes from memory, the two taking turns. The ratio of the two rates is
// the figure; absolute rates move with the machine.
//
//	go test -run '^$' -bench Reads -benchtime 1x ./cmd/earshot
//	EARSHOT_BENCH_SIZES=10000,1000000 EARSHOT_BENCH_DURATION=10s go test -run '^$' -bench Reads -benchtime 1x -timeout 60m ./cmd/earshot
//
// With EARSHOT_TEST_POSTGRES_URL set it runs on Postgres as well.

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// readClients is the harness's number of concurrent keep-alive readers.
const readClients = 8

func BenchmarkReads(b *testing.B) {
	sizes := []int{10_000}
	if s := os.Getenv("EARSHOT_BENCH_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 100 || n > 10_000_000 {
				b.Fatalf("EARSHOT_BENCH_SIZES: %q is not a count from 100 to 10,000,000", f)
			}
			sizes = append(sizes, n)
		}
	}
	duration := 3 * time.Second
	if s := os.Getenv("EARSHOT_BENCH_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 || d > 5*time.Minute {
			b.Fatalf("EARSHOT_BENCH_DURATION: %q is not a duration up to 5m", s)
		}
		duration = d
	}
	stores := []string{"sqlite"}
	if os.Getenv(pgtest.Env) != "" {
		stores = append(stores, "postgres")
	}
	for _, store := range stores {
		for _, n := range sizes {
			b.Run(fmt.Sprintf("%s/%d", store, n), func(b *testing.B) {
				dbURL := "sqlite://" + b.TempDir() + "/earshot.db"
				if store == "postgres" {
					dbURL = pgtest.URL(b)
				}
				benchReads(b, dbURL, n, duration)
			})
		}
	}
}

func benchReads(b *testing.B, dbURL string, n int, duration time.Duration) {
	srv := start(b, "EARSHOT_DATABASE_URL="+dbURL, "EARSHOT_RATE_LIMIT_PER_MINUTE=1000000")
	ingestMatching(b, srv, n)
	// Score what the scorer has not reached yet in one statement, so no
	// backlog is scored during the measurement, then start afresh.
	srv.stop()
	markScored(b, dbURL)
	srv.bin = os.Getenv("EARSHOT_BENCH_BINARY") // another build to compare, on the same data
	srv.profileIfAsked(b)
	srv.launch()
	lo, hi := cursorRange(b, dbURL)

	paths := make([]string, 1024)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range paths {
		paths[i] = "/api/v1/matches?limit=25"
		if i%4 != 0 {
			before := lo + r.Float64()*(hi-lo)
			paths[i] += "&before=" + strconv.FormatFloat(before, 'f', 3, 64)
		}
	}
	first := srv.call("GET", paths[0], srv.APIKey, nil).want(b, 200, "")
	base, basePID := startBaseline(b, first)

	// The two sides take turns, a third of the time each turn, so that
	// other work on a shared machine weighs on both alike.
	b.ResetTimer()
	var api, bare loadResult
	var apiCPU, bareCPU time.Duration
	for range readTurns {
		cpu0 := cpuTime(b, srv.cmd.Process.Pid)
		api.add(readLoad(b, srv.URL, srv.APIKey, paths, duration/readTurns))
		apiCPU += cpuTime(b, srv.cmd.Process.Pid) - cpu0
		cpu0 = cpuTime(b, basePID)
		bare.add(readLoad(b, base, srv.APIKey, paths, duration/readTurns))
		bareCPU += cpuTime(b, basePID) - cpu0
	}
	b.StopTimer()
	if api.errors > 0 {
		b.Errorf("%d of %d API reads failed", api.errors, api.count)
	}
	b.ReportMetric(api.rate(), "api-req/s")
	b.ReportMetric(bare.rate(), "bare-req/s")
	b.ReportMetric(api.rate()/bare.rate(), "ratio")
	b.ReportMetric(float64(api.percentile(50).Microseconds())/1000, "api-p50-ms")
	b.ReportMetric(float64(api.percentile(99).Microseconds())/1000, "api-p99-ms")
	b.ReportMetric(float64(bare.percentile(99).Microseconds())/1000, "bare-p99-ms")
	// CPU time per request of each server process: steadier than the
	// rates on a shared machine, where other work takes the cores.
	b.ReportMetric(float64(apiCPU.Microseconds())/float64(api.count), "api-cpu-µs/req")
	b.ReportMetric(float64(bareCPU.Microseconds())/float64(bare.count), "bare-cpu-µs/req")
}

// ingestMatching ingests n posts that each match the phrase "acme", in
// batches of 100 from eight clients.
func ingestMatching(b testing.TB, srv *instance, n int) {
	srv.call("POST", "/api/v1/keywords", srv.APIKey, map[string]string{"phrase": "acme", "platform": "x"}).want(b, 201, "")
	batches := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	for range readClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for start := range batches {
				var sb strings.Builder
				sb.WriteString(`{"platform":"x","posts":[`)
				for i := start; i < min(start+100, n); i++ {
					if i > start {
						sb.WriteByte(',')
					}
					fmt.Fprintf(&sb, `{"externalId":"p%d","authorName":"user%d","body":["Has anyone tried acme for a team of %d? Looking for something that syncs calendars and invoices, the old tool keeps timing out."],"url":"https://x.com/user%d/status/%d","likes":%d,"comments":%d}`,
						i, i%997, i%50, i%997, i, i%13, i%7)
				}
				sb.WriteString(`]}`)
				req, _ := http.NewRequest("POST", srv.URL+"/ingest", strings.NewReader(sb.String()))
				req.Header.Set("Authorization", "Bearer "+srv.IngestKey)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						err = fmt.Errorf("ingest answered %d", resp.StatusCode)
					}
				}
				if err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
				}
			}
		}()
	}
	for start := 0; start < n; start += 100 {
		batches <- start
	}
	close(batches)
	wg.Wait()
	if failed != nil {
		b.Fatalf("seeding: %v", failed)
	}
}

func markScored(b testing.TB, dbURL string) {
	db, err := gormstore.Open(dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	// packed_score is the three packed as the store packs a score.
	q := "UPDATE matches SET score = 50, intent = 'question', reason = 'seeded for a benchmark', " +
		"packed_score = '2:508:question22:seeded for a benchmark', scored_at = created_us WHERE score IS NULL"
	if _, err := db.SQL().Exec(q); err != nil {
		b.Fatal(err)
	}
	analyze := "ANALYZE"
	if db.Postgres() {
		analyze = "VACUUM ANALYZE matches"
	}
	if _, err := db.SQL().Exec(analyze); err != nil {
		b.Fatal(err)
	}
}

// cursorRange is the span of createdAt values, in the API's milliseconds.
func cursorRange(b testing.TB, dbURL string) (lo, hi float64) {
	db, err := gormstore.Open(dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var l, h int64
	if err := db.SQL().QueryRow("SELECT MIN(created_us), MAX(created_us) FROM matches").Scan(&l, &h); err != nil {
		b.Fatal(err)
	}
	return float64(l) / 1000, float64(h)/1000 + 1
}

type loadResult struct {
	count, errors int
	elapsed       time.Duration
	latencies     []time.Duration
}

// readTurns is how many turns each side of the read benchmark takes.
const readTurns = 3

// add counts o's requests into r.
func (r *loadResult) add(o loadResult) {
	r.count += o.count
	r.errors += o.errors
	r.elapsed += o.elapsed
	r.latencies = append(r.latencies, o.latencies...)
	slices.Sort(r.latencies)
}

func (r loadResult) rate() float64 { return float64(r.count) / r.elapsed.Seconds() }

func (r loadResult) percentile(p int) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	return r.latencies[min(len(r.latencies)-1, len(r.latencies)*p/100)]
}

// readLoad runs readClients keep-alive clients against base for d, each
// cycling through paths from its own offset.
func readLoad(b testing.TB, base, key string, paths []string, d time.Duration) loadResult {
	tr := &http.Transport{MaxIdleConnsPerHost: readClients, DisableCompression: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var mu sync.Mutex
	var res loadResult
	deadline := time.Now().Add(d)
	began := time.Now()
	var wg sync.WaitGroup
	for w := range readClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var lat []time.Duration
			errs := 0
			buf := make([]byte, 64<<10)
			for i := w * len(paths) / readClients; time.Now().Before(deadline); i++ {
				req, _ := http.NewRequest("GET", base+paths[i%len(paths)], nil)
				req.Header.Set("Authorization", "Bearer "+key)
				t0 := time.Now()
				resp, err := c.Do(req)
				if err == nil {
					_, err = io.CopyBuffer(io.Discard, resp.Body, buf)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				lat = append(lat, time.Since(t0))
				if err != nil {
					errs++
				}
			}
			mu.Lock()
			res.latencies = append(res.latencies, lat...)
			res.count += len(lat)
			res.errors += errs
			mu.Unlock()
		}()
	}
	wg.Wait()
	res.elapsed = time.Since(began)
	slices.Sort(res.latencies)
	return res
}

// baselineEnv names the body file a re-executed test binary serves as the
// baseline instead of running tests.
const baselineEnv = "EARSHOT_BENCH_BASELINE_BODY"

// startBaseline runs this test binary again as a bare net/http server that
// answers every request with page's headers and bytes, and returns its
// address.
func startBaseline(b testing.TB, page response) (addr string, pid int) {
	f := b.TempDir() + "/page.json"
	if err := os.WriteFile(f, page.Body, 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), baselineEnv+"="+f,
		"EARSHOT_BENCH_BASELINE_LIMIT="+page.Header.Get("X-RateLimit-Limit"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatalf("baseline did not start: %v", err)
	}
	return "http://" + strings.TrimSpace(line), cmd.Process.Pid
}

// cpuTime is the user and system CPU time process pid has used so far,
// from /proc (in the kernel's clock ticks of 10 ms).
func cpuTime(b testing.TB, pid int) time.Duration {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Skipf("no /proc to read CPU time from: %v", err)
	}
	// The command name in parentheses may hold spaces; fields follow it.
	rest := string(raw[strings.LastIndexByte(string(raw), ')')+2:])
	f := strings.Fields(rest)
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// serveBaseline is the baseline process: the same bytes and headers as
// the API's page, from memory, until it is killed.
func serveBaseline(file string) {
	body, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	limit := os.Getenv("EARSHOT_BENCH_BASELINE_LIMIT")
	length := strconv.Itoa(len(body))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Type", "application/json; charset=utf-8")
		hd.Set("Content-Length", length)
		hd.Set("X-RateLimit-Limit", limit)
		hd.Set("X-RateLimit-Remaining", limit)
		_, _ = w.Write(body)
	})
	_ = (&http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}).Serve(ln)
}
