package main

// The pipeline benchmark drives the built binary as a separate process
// over loopback, as an outside harness would: keep-alive clients post
// ingest batches at full speed while the server matches, stores, scores
// and stores scores; progress is read from /metrics and the server's
// peak memory from /proc.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// BenchmarkPipeline ingests over HTTP at full speed for a fixed time,
// one post in ten mentioning the tracked phrase, and reports matches
// created and scored per second during that time, the seconds the
// backlog took to drain after it, and the server's peak RSS.
//
//	EARSHOT_BENCH_DURATION=30s EARSHOT_TEST_POSTGRES_URL=postgres://... \
//	  go test -run '^$' -bench Pipeline -benchtime 1x ./cmd/earshot
//
// With EARSHOT_BENCH_CPUPROFILE=DIR the server is built with -tags
// profile and writes a CPU profile of each case to DIR/CASE.pprof, for
// `go tool pprof -top`.
func BenchmarkPipeline(b *testing.B) {
	d := benchDuration(b)
	b.Run("sqlite", func(b *testing.B) { benchPipeline(b, nil, d, 10, 0) })
	b.Run("postgres", func(b *testing.B) {
		benchPipeline(b, []string{"EARSHOT_DATABASE_URL=" + benchPostgres(b)}, d, 10, 0)
	})
}

// BenchmarkPipelineRSS posts a million matching posts and reports the
// server's peak RSS (VmHWM), on SQLite and, with
// EARSHOT_TEST_POSTGRES_URL set, on Postgres.
func BenchmarkPipelineRSS(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("EARSHOT_BENCH_POSTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n <= 0 {
			b.Fatalf("EARSHOT_BENCH_POSTS=%q: want a positive count", v)
		}
	}
	b.Run("sqlite", func(b *testing.B) { benchPipeline(b, nil, 0, 100, n) })
	b.Run("postgres", func(b *testing.B) {
		benchPipeline(b, []string{"EARSHOT_DATABASE_URL=" + benchPostgres(b)}, 0, 100, n)
	})
}

func benchDuration(b *testing.B) time.Duration {
	v := os.Getenv("EARSHOT_BENCH_DURATION")
	if v == "" {
		return 30 * time.Second
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		b.Fatalf("EARSHOT_BENCH_DURATION=%q: want a duration such as 10s", v)
	}
	return d
}

// benchPostgres returns a fresh schema on the server of
// EARSHOT_TEST_POSTGRES_URL, or skips.
func benchPostgres(b *testing.B) string {
	if os.Getenv(pgtest.Env) == "" {
		b.Skip(pgtest.Env + " is unset: Postgres case skipped")
	}
	return pgtest.URL(b)
}

// benchServer is a running `earshot serve` with a client for many
// requests at once.
type benchServer struct {
	*instance
	client *http.Client
}

func startBench(b *testing.B, env []string) *benchServer {
	b.Helper()
	// Only the first lines of the logs matter; a long run keeps no more.
	s := &instance{t: b, logCap: 1 << 16}
	// Full speed from one ingest key: the per-key helper limit is lifted
	// so that only the server's own speed bounds the load.
	env = append([]string{"EARSHOT_HELPER_RATE_LIMIT_PER_MINUTE=1000000"}, env...)
	s.env = append(baseEnv(b.TempDir()), env...)
	s.profileIfAsked(b)
	s.launch()
	b.Cleanup(s.stop)
	if s.IngestKey == "" {
		b.Fatalf("no bootstrap keys\n%s", s.logs)
	}
	return &benchServer{instance: s, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
}

func (s *benchServer) post(path, key string, body []byte) (int, error) {
	req, err := http.NewRequest("POST", s.URL+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

var eventLine = regexp.MustCompile(`^earshot_events_total\{event="([a-z_]+)"\} (\S+)$`)

// events reads the event counters of /metrics.
func (s *benchServer) events(b *testing.B) map[string]int {
	out, err := s.scrape()
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// scrape is events for any goroutine.
func (s *benchServer) scrape() (map[string]int, error) {
	resp, err := s.client.Get(s.URL + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		if m := eventLine.FindStringSubmatch(sc.Text()); m != nil {
			v, _ := strconv.ParseFloat(m[2], 64)
			out[m[1]] = int(v)
		}
	}
	return out, sc.Err()
}

// benchBody is one ingest batch of 100 posts; every matchEvery-th post
// (by its number) mentions the tracked phrase.
func benchBody(run string, batch, matchPercent int) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"platform":"x","posts":[`)
	for i := range 100 {
		if i > 0 {
			buf.WriteByte(',')
		}
		text := fmt.Sprintf("post %d of batch %d: we compared three tools last week and wrote up what we found", i, batch)
		if i < matchPercent {
			text += " and acme crm was the cheapest"
		}
		fmt.Fprintf(&buf, `{"externalId":"%s-%d-%d","authorName":"author","body":[%q],"url":"https://x.com/a/status/%d%d","likes":%d,"comments":1}`,
			run, batch, i, text, batch, i, i)
	}
	buf.WriteString("]}")
	return buf.Bytes()
}

// benchPipeline runs one measurement: for d (or until posts posts went
// in, when posts > 0) four clients post batches; then it waits for the
// backlog to drain.
func benchPipeline(b *testing.B, env []string, d time.Duration, matchPercent, posts int) {
	for b.Loop() {
		s := startBench(b, env)
		body, _ := json.Marshal(map[string]any{"phrase": "acme crm", "platform": "x"})
		if code, err := s.post("/api/v1/keywords", s.APIKey, body); err != nil || code != http.StatusCreated {
			b.Fatalf("adding the phrase: %d %v", code, err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if d > 0 {
			ctx, cancel = context.WithTimeout(context.Background(), d)
		}
		var next atomic.Int64
		batches := posts / 100
		var failed atomic.Int64
		var wg sync.WaitGroup
		before := s.events(b)
		start := time.Now()
		// The counters at a sixth and at five sixths of the run: between
		// them the rates are those of the steady state. Over the whole run
		// scored/created stays under 1 by the matches in flight at the
		// end (none are at the start), however fast the scoring.
		type counters struct {
			at  [2]map[string]int
			err error
		}
		steady := make(chan counters, 1)
		if d > 0 {
			go func() {
				var c counters
				for i, f := range []time.Duration{d / 6, d * 5 / 6} {
					// Benchmark pacing: the scrape is due at this point of the run.
					time.Sleep(time.Until(start.Add(f)))
					if c.at[i], c.err = s.scrape(); c.err != nil {
						break
					}
				}
				steady <- c
			}()
		}
		for c := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					n := int(next.Add(1))
					if batches > 0 && n > batches {
						return
					}
					body := benchBody(fmt.Sprint("c", c), n, matchPercent)
					code, err := s.post("/ingest", s.IngestKey, body)
					// Scoring is behind (EARSHOT_INGEST_BACKLOG): send the
					// batch again after the answer's Retry-After, as a helper does.
					for err == nil && code == http.StatusServiceUnavailable && ctx.Err() == nil {
						time.Sleep(time.Second)
						code, err = s.post("/ingest", s.IngestKey, body)
					}
					if err != nil || code != http.StatusOK {
						if ctx.Err() == nil && failed.Add(1) == 1 {
							b.Logf("ingest: %d %v", code, err)
						}
					}
				}
			}()
		}
		wg.Wait()
		cancel()
		elapsed := time.Since(start)
		end := s.events(b)
		created := end["matches_created"] - before["matches_created"]
		scored := end["matches_scored"] - before["matches_scored"]
		ingested := end["posts_ingested"] - before["posts_ingested"]
		// The backlog: wait until every match created is scored.
		drainStart := time.Now()
		for {
			e := s.events(b)
			if e["matches_scored"] >= e["matches_created"] {
				break
			}
			if time.Since(drainStart) > 30*time.Minute {
				b.Fatalf("backlog not drained after 30 min: %d of %d scored", e["matches_scored"], e["matches_created"])
			}
			// Each scrape also counts the unscored matches in the
			// database, so scrape seldom enough not to slow the drain.
			time.Sleep(250 * time.Millisecond)
		}
		drain := time.Since(drainStart)
		if failed.Load() > 0 {
			b.Errorf("%d ingest requests failed", failed.Load())
		}
		b.ReportMetric(float64(ingested)/elapsed.Seconds(), "posts/s")
		b.ReportMetric(float64(created)/elapsed.Seconds(), "created/s")
		b.ReportMetric(float64(scored)/elapsed.Seconds(), "scored/s")
		b.ReportMetric(float64(scored)/float64(max(created, 1)), "scored/created")
		if d > 0 {
			c := <-steady
			if c.err != nil {
				b.Fatalf("reading the counters during the run: %v", c.err)
			}
			b.ReportMetric(float64(c.at[1]["matches_scored"]-c.at[0]["matches_scored"])/
				float64(max(c.at[1]["matches_created"]-c.at[0]["matches_created"], 1)), "steady-scored/created")
		}
		b.ReportMetric(drain.Seconds(), "drain-s")
		// The server's peak alone: this process's clients and the
		// Postgres server are not counted.
		peakmem.ReportRSS(b, "peak-RSS", s.cmd.Process.Pid)
		b.ReportMetric(elapsed.Seconds(), "ingest-s")
	}
}
