package main

// The read benchmark measures GET /api/v1/matches as an outside harness
// does, knowing the service only through its API: the built binary in a
// process of its own on loopback, eight keep-alive clients, and a store
// that grows in one run, through POST /ingest and with the same server
// process, to each size of EARSHOT_BENCH_SIZES. At each size it reads
// twice, a quarter first pages and the rest at random depths of the
// whole store, taking turns with a baseline process that answers the
// same requests with the same bytes from memory: first right after the
// growth, as the harness does, while the scorer still scores what came
// in (SIZE), then once every match is scored (SIZE-scored), which is
// the cost of depth alone. The ratio of the two sides' rates is the
// figure at one size; p99, rate and CPU per request against the first
// size of the same kind are the figures of growth. Absolute rates move
// with the machine.
//
//	go test -run '^$' -bench Reads -benchtime 1x ./cmd/earshot
//	EARSHOT_BENCH_SIZES=10000,100000,1000000 EARSHOT_BENCH_DURATION=6s \
//	  go test -run '^$' -bench Reads -benchtime 1x -timeout 60m ./cmd/earshot
//
// With EARSHOT_TEST_POSTGRES_URL set it runs on Postgres as well.
// EARSHOT_BENCH_BINARY=PATH runs another build of earshot as the server;
// EARSHOT_BENCH_CPUPROFILE=DIR profiles it over the whole run.

import (
	"bufio"
	"encoding/json"
	"errors"
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
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// readClients is the harness's number of concurrent keep-alive readers.
const readClients = 8

// readTurns is how many turns each side takes at each size.
const readTurns = 3

func BenchmarkReads(b *testing.B) {
	sizes := []int{10_000}
	if s := os.Getenv("EARSHOT_BENCH_SIZES"); s != "" {
		sizes = nil
		for _, f := range strings.Split(s, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 100 || n > 10_000_000 || len(sizes) > 0 && n <= sizes[len(sizes)-1] {
				b.Fatalf("EARSHOT_BENCH_SIZES: %q is not a count from 100 to 10,000,000 larger than the one before", f)
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
		b.Run(store, func(b *testing.B) {
			dbURL := "sqlite://" + b.TempDir() + "/earshot.db"
			if store == "postgres" {
				dbURL = pgtest.URL(b)
			}
			h := startReadHarness(b, dbURL)
			// first[0] is the first size as the harness reads it, first[1]
			// the same once scored.
			var first [2]readFigures
			for i, n := range sizes {
				for j, name := range []string{strconv.Itoa(n), strconv.Itoa(n) + "-scored"} {
					ok := b.Run(name, func(b *testing.B) {
						var g growth
						if j == 0 {
							g = h.grow(b, n)
						} else {
							h.settle(b)
						}
						f := h.read(b, duration)
						// After the reads: resetting the timer drops
						// metrics reported before it.
						if g.posts > 0 {
							b.ReportMetric(float64(g.posts)/g.ingest.Seconds(), "ingest-posts/s")
							b.ReportMetric(g.walk.Seconds(), "walk-s")
							b.ReportMetric(float64(g.retries), "ingest-retries")
						}
						if i == 0 {
							first[j] = f
							return
						}
						b.ReportMetric(float64(f.p99)/float64(first[j].p99), "p99-growth")
						b.ReportMetric(f.rate/first[j].rate, "rate-growth")
						b.ReportMetric(f.cpu/first[j].cpu, "cpu-growth")
					})
					if !ok {
						return
					}
				}
			}
		})
	}
}

// readHarness is one server whose store grows from size to size, with
// what the harness has learned of it through the API.
type readHarness struct {
	srv    *instance
	client *http.Client
	posts  int // posts ingested so far, each one a match
	// retries counts ingest batches sent again after a 503.
	retries atomic.Int64

	// cursors are nextCursor values seen while walking the store, as
	// sent (the API's number, unparsed); top is the createdAt of the
	// newest match at the last walk, where the next walk stops.
	cursors []string
	top     float64
}

// readFigures are what one size is compared on.
type readFigures struct {
	p99  time.Duration
	rate float64
	cpu  float64 // the server's CPU time per request, µs
}

func startReadHarness(b *testing.B, dbURL string) *readHarness {
	s := &instance{t: b, logCap: 1 << 16, bin: os.Getenv("EARSHOT_BENCH_BINARY")}
	s.env = append(baseEnv(b.TempDir()),
		"EARSHOT_DATABASE_URL="+dbURL,
		"EARSHOT_RATE_LIMIT_PER_MINUTE=1000000",
		"EARSHOT_HELPER_RATE_LIMIT_PER_MINUTE=1000000")
	s.profileIfAsked(b)
	s.launch()
	b.Cleanup(s.stop)
	if s.APIKey == "" || s.IngestKey == "" {
		b.Fatalf("no bootstrap keys\n%s", s.logs)
	}
	h := &readHarness{srv: s, client: &http.Client{
		Transport: &http.Transport{MaxIdleConnsPerHost: readClients, DisableCompression: true},
		Timeout:   30 * time.Second,
	}}
	if err := h.send("POST", "/api/v1/keywords", s.APIKey, `{"phrase":"acme","platform":"x"}`, 201, nil); err != nil {
		b.Fatal(err)
	}
	return h
}

// growth is what one step of growth took: posts ingested, batches sent
// again after a 503, the time they took and the time of the walk after
// them.
type growth struct {
	posts, retries int
	ingest, walk   time.Duration
}

// grow ingests until the store holds n matches and walks what was
// added, as the harness does before it reads at a new size.
func (h *readHarness) grow(b *testing.B, n int) growth {
	g := growth{posts: n - h.posts}
	retries := h.retries.Load()
	began := time.Now()
	if err := h.ingest(n); err != nil {
		b.Fatal(err)
	}
	g.ingest = time.Since(began)
	g.retries = int(h.retries.Load() - retries)
	began = time.Now()
	if err := h.walk(); err != nil {
		b.Fatal(err)
	}
	g.walk = time.Since(began)
	return g
}

// settle waits until every match is scored, so that the reads that
// follow share the machine with nothing but the baseline.
func (h *readHarness) settle(b *testing.B) {
	deadline := time.Now().Add(30 * time.Minute)
	for {
		left, err := h.unscored()
		if err != nil {
			b.Fatal(err)
		}
		if left <= 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d matches still unscored after 30 minutes", left)
		}
		// Each scrape counts the unscored matches in the database: seldom
		// enough not to slow the scorer.
		time.Sleep(250 * time.Millisecond)
	}
}

// read measures: readClients clients on each side, turn about, a quarter
// first pages and the rest at a cursor drawn from all the harness knows.
func (h *readHarness) read(b *testing.B, duration time.Duration) readFigures {
	var first []byte
	var header http.Header
	if err := h.send("GET", "/api/v1/matches?limit=25", h.srv.APIKey, "", 200, func(r *http.Response, body []byte) error {
		first, header = body, r.Header
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	base, basePID := startBaseline(b, response{Status: 200, Header: header, Body: first})
	backlog, err := h.unscored()
	if err != nil {
		b.Fatal(err)
	}

	pick := func(r *rand.Rand) string {
		if r.IntN(4) == 0 {
			return "/api/v1/matches?limit=25"
		}
		return "/api/v1/matches?limit=25&before=" + h.cursors[r.IntN(len(h.cursors))]
	}
	// The two sides take turns, so that other work on a shared machine
	// weighs on both alike.
	pid := h.srv.cmd.Process.Pid
	b.ResetTimer()
	var api, bare loadResult
	var apiCPU, bareCPU time.Duration
	for turn := range readTurns {
		seed := uint64(h.posts)*readTurns + uint64(turn)
		cpu0 := cpuTime(b, pid)
		api.add(readLoad(h.srv.URL, h.srv.APIKey, pick, seed, duration/readTurns))
		apiCPU += cpuTime(b, pid) - cpu0
		cpu0 = cpuTime(b, basePID)
		bare.add(readLoad(base, h.srv.APIKey, pick, seed, duration/readTurns))
		bareCPU += cpuTime(b, basePID) - cpu0
	}
	b.StopTimer()
	backlogAfter, err := h.unscored()
	if err != nil {
		b.Fatal(err)
	}
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
	// Matches still waiting for their score when the reads began and
	// ended: the scorer's work shares the machine with the reads.
	b.ReportMetric(float64(backlog), "unscored-before")
	b.ReportMetric(float64(backlogAfter), "unscored-after")
	// The server's peak since it started, through every size so far;
	// the baseline process and the clients here are not counted.
	peakmem.ReportRSS(b, "peak-RSS", h.srv.cmd.Process.Pid)
	return readFigures{p99: api.percentile(99), rate: api.rate(), cpu: float64(apiCPU.Microseconds()) / float64(api.count)}
}

// ingest posts matching posts until n went in, in batches of 100 from
// eight clients, as fast as the server answers.
func (h *readHarness) ingest(n int) error {
	batches := make(chan int)
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
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
				if err := h.ingestBatch(sb.String()); err != nil {
					failed.Store(&err)
				}
			}
		}()
	}
	for start := h.posts; start < n; start += 100 {
		if failed.Load() != nil {
			break
		}
		batches <- start
	}
	close(batches)
	wg.Wait()
	if err := failed.Load(); err != nil {
		return fmt.Errorf("ingesting: %w", *err)
	}
	h.posts = max(h.posts, n)
	return nil
}

// ingestBatch posts one batch, and again after the Retry-After of each
// 503 the server answers when too many batches are in hand, as the
// helpers do.
func (h *readHarness) ingestBatch(body string) error {
	for range 100 {
		err := h.send("POST", "/ingest", h.srv.IngestKey, body, 200, nil)
		var busy *busyError
		if !errors.As(err, &busy) {
			return err
		}
		h.retries.Add(1)
		<-time.After(busy.retryAfter)
	}
	return errors.New("the server stayed busy through 100 tries")
}

// busyError is a 503 with Retry-After.
type busyError struct{ retryAfter time.Duration }

func (e *busyError) Error() string { return fmt.Sprintf("busy: retry after %s", e.retryAfter) }

// walk reads the store from its newest match in pages of 100 until it
// reaches what the last walk saw, keeping every nextCursor: with those
// of the earlier walks, a cursor every hundred matches through the whole
// store. The API's cursor is the nextCursor of a page it gave, so this
// is how a client that knows the service only through its API reaches a
// depth; picking among them uniformly picks a depth uniformly.
func (h *readHarness) walk() error {
	type page struct {
		Data []struct {
			CreatedAt json.Number `json:"createdAt"`
		} `json:"data"`
		NextCursor *json.Number `json:"nextCursor"`
	}
	path, newest := "/api/v1/matches?limit=100", 0.0
	for {
		var p page
		err := h.send("GET", path, h.srv.APIKey, "", 200, func(_ *http.Response, body []byte) error {
			return json.Unmarshal(body, &p)
		})
		if err != nil {
			return err
		}
		if newest == 0 && len(p.Data) > 0 {
			newest, _ = p.Data[0].CreatedAt.Float64()
		}
		if p.NextCursor == nil {
			break
		}
		c, err := p.NextCursor.Float64()
		if err != nil {
			return fmt.Errorf("nextCursor %q: %w", *p.NextCursor, err)
		}
		if c <= h.top {
			break
		}
		h.cursors = append(h.cursors, p.NextCursor.String())
		path = "/api/v1/matches?limit=100&before=" + p.NextCursor.String()
	}
	if newest > h.top {
		h.top = newest
	}
	if len(h.cursors) == 0 {
		return fmt.Errorf("walking %d matches found no cursor", h.posts)
	}
	return nil
}

// unscored is matches created less matches scored, from /metrics.
func (h *readHarness) unscored() (int, error) {
	e, err := (&benchServer{instance: h.srv, client: h.client}).scrape()
	return e["matches_created"] - e["matches_scored"], err
}

// send makes one request and checks its status; read, when given, sees
// the answer and its body.
func (h *readHarness) send(method, path, key, body string, status int, read func(*http.Response, []byte) error) error {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && resp.StatusCode == http.StatusServiceUnavailable {
		return &busyError{retryAfter: time.Duration(secs) * time.Second}
	}
	if resp.StatusCode != status {
		return fmt.Errorf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, status, got)
	}
	if read != nil {
		return read(resp, got)
	}
	return nil
}

type loadResult struct {
	count, errors int
	elapsed       time.Duration
	latencies     []time.Duration
}

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
// asking for the paths pick draws from its own generator; the same seed
// draws the same paths, so both sides of a turn ask the same.
func readLoad(base, key string, pick func(*rand.Rand) string, seed uint64, d time.Duration) loadResult {
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
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			var lat []time.Duration
			errs := 0
			buf := make([]byte, 64<<10)
			for time.Now().Before(deadline) {
				req, _ := http.NewRequest("GET", base+pick(r), nil)
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
