// Package deliverybench measures webhook deliveries the way an outside
// harness does: it builds the earshot binary, runs `earshot serve` as a
// separate process on 127.0.0.1:0 with a Pro plan, subscribes a receiver
// in this process (testkit/webhooktest, which checks every signature),
// ingests matching posts at a fixed rate over keep-alive HTTP and
// reports deliveries a second, the latency from the ingest answer to the
// receipt (median and 99th percentile), and messages lost or doubled.
//
//	go test -run '^$' -bench Deliveries -benchtime 1x -timeout 30m ./bench/deliverybench
//
// The rate, the duration and the drain wait come from flags or from the
// environment (EARSHOT_BENCH_RATE, EARSHOT_BENCH_DURATION,
// EARSHOT_BENCH_DRAIN), so CI can run it short:
//
//	EARSHOT_BENCH_DURATION=5s go test -run '^$' -bench Deliveries -benchtime 1x ./bench/deliverybench
//
// With EARSHOT_TEST_POSTGRES_URL and EARSHOT_TEST_AMQP_URL set it also
// runs against Postgres (a schema of its own) and RabbitMQ (queues of its
// own).
package deliverybench

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/testkit/pgtest"
	"github.com/earshothq/earshot/testkit/webhooktest"
)

var (
	rate     = flag.Int("deliverybench.rate", envInt("EARSHOT_BENCH_RATE", 1000), "matching posts ingested a second")
	duration = flag.Duration("deliverybench.duration", envDuration("EARSHOT_BENCH_DURATION", 60*time.Second), "how long posts are ingested")
	drain    = flag.Duration("deliverybench.drain", envDuration("EARSHOT_BENCH_DRAIN", 30*time.Second), "how long to wait for the last deliveries")
	batch    = flag.Int("deliverybench.batch", 10, "posts in one ingest request")
	profile  = flag.String("deliverybench.cpuprofile", "", "write the server's CPU profile of the ingest time to this file (the binary is then built with -tags pprof)")
)

func envInt(name string, def int) int {
	var n int
	if _, err := fmt.Sscan(os.Getenv(name), &n); err == nil && n > 0 {
		return n
	}
	return def
}

func envDuration(name string, def time.Duration) time.Duration {
	if d, err := time.ParseDuration(os.Getenv(name)); err == nil && d > 0 {
		return d
	}
	return def
}

var (
	buildOnce sync.Once
	binary    string
	buildErr  error
)

// build compiles the binary once per run, as a user would build it.
func build(b *testing.B) string {
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "deliverybench-")
		if err != nil {
			buildErr = err
			return
		}
		binary = filepath.Join(dir, "earshot")
		args := []string{"build", "-o", binary}
		if *profile != "" {
			args = append(args, "-tags", "pprof")
		}
		cmd := exec.Command("go", append(args, "github.com/earshothq/earshot/cmd/earshot")...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		buildErr = cmd.Run()
	})
	if buildErr != nil {
		b.Fatalf("building earshot: %v", buildErr)
	}
	return binary
}

func BenchmarkDeliveries(b *testing.B) {
	b.Run("sqlite-memory", func(b *testing.B) {
		run(b, "sqlite://"+filepath.Join(b.TempDir(), "earshot.db"), "EARSHOT_BUS_URL=memory://")
	})
	b.Run("postgres-rabbitmq", func(b *testing.B) {
		amqp := os.Getenv("EARSHOT_TEST_AMQP_URL")
		if amqp == "" {
			b.Skip("EARSHOT_TEST_AMQP_URL is unset: Postgres and RabbitMQ case skipped")
		}
		db := pgtest.URL(b)
		run(b, db, "EARSHOT_BUS_URL="+amqp, fmt.Sprintf("EARSHOT_BUS_PREFIX=bench%d", time.Now().UnixNano()))
	})
}

// server is a running `earshot serve`.
type server struct {
	url, apiKey, ingestKey string
	cmd                    *exec.Cmd
	done                   chan error
	logs                   *bytes.Buffer
	mu                     sync.Mutex
}

// pprofAddr is where a binary built with -tags pprof serves profiles.
const pprofAddr = "127.0.0.1:6061"

var listenLine = regexp.MustCompile(`"msg":"listening","addr":"([^"]+)"`)

func start(b *testing.B, env ...string) *server {
	bin := build(b)
	s := &server{logs: &bytes.Buffer{}, done: make(chan error, 1)}
	s.cmd = exec.Command(bin, "serve")
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "EARSHOT_") {
			s.cmd.Env = append(s.cmd.Env, kv)
		}
	}
	s.cmd.Env = append(s.cmd.Env,
		"EARSHOT_ADDR=127.0.0.1:0", "EARSHOT_LOG_FORMAT=json", "EARSHOT_WEBHOOK_ALLOW_PRIVATE=true",
		"EARSHOT_PLAN_WEBHOOKS_PER_PERSON=10", "EARSHOT_PLAN_PHRASES_PER_PLATFORM=10",
		"EARSHOT_RATE_LIMIT_PER_MINUTE=1000000", "EARSHOT_SECRET_KEY=a bench secret key of at least 32 characters")
	if *profile != "" {
		s.cmd.Env = append(s.cmd.Env, "EARSHOT_PPROF_ADDR="+pprofAddr)
	}
	s.cmd.Env = append(s.cmd.Env, env...)
	var stdout bytes.Buffer
	s.cmd.Stdout = &stdout
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			s.mu.Lock()
			s.logs.WriteString(line + "\n")
			s.mu.Unlock()
			if m := listenLine.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	go func() { s.done <- s.cmd.Wait() }()
	b.Cleanup(s.stop)
	select {
	case a := <-addr:
		s.url = "http://" + a
	case err := <-s.done:
		b.Fatalf("earshot serve exited: %v\n%s", err, s.logText())
	case <-time.After(60 * time.Second):
		b.Fatalf("earshot serve did not listen within 60s\n%s", s.logText())
	}
	keys := regexp.MustCompile(`API key \(every scope\): (svc_api_\S+)[\s\S]*ingest key:\s+(svc_ingest_\S+)`)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		s.mu.Lock()
		m := keys.FindStringSubmatch(stdout.String())
		s.mu.Unlock()
		if m != nil {
			s.apiKey, s.ingestKey = m[1], m[2]
			return s
		}
	}
	b.Fatalf("no bootstrap keys printed\n%s", s.logText())
	return nil
}

func (s *server) logText() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.logs.String()
}

func (s *server) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.done
	}
}

// call makes one API request and decodes the answer's data.
func (s *server) call(b *testing.B, client *http.Client, method, path, key string, body any) map[string]any {
	b.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, s.url+path, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		b.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, out)
	}
	var doc struct{ Data map[string]any }
	_ = json.Unmarshal(out, &doc)
	return doc.Data
}

// run ingests matching posts at the set rate against a server started
// on the database at dbURL with env, and reports what reached the
// receiver.
func run(b *testing.B, dbURL string, env ...string) {
	s := start(b, append(env, "EARSHOT_DATABASE_URL="+dbURL)...)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}, Timeout: 30 * time.Second}

	// The webhook's address has to exist before its secret does.
	var handler atomic.Pointer[webhooktest.Receiver]
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rcv := handler.Load(); rcv != nil {
			rcv.ServeHTTP(w, r)
			return
		}
		http.Error(w, "no receiver yet", http.StatusServiceUnavailable)
	}))
	defer front.Close()
	s.call(b, client, "POST", "/api/v1/keywords", s.apiKey, map[string]any{"phrase": "acme", "platform": "x"})
	created := s.call(b, client, "POST", "/api/v1/webhooks", s.apiKey, map[string]any{"url": front.URL + "/hook", "min_score": 0})
	rcv := webhooktest.NewReceiver(b, created["secret"].(string))
	handler.Store(rcv)

	per := *batch
	requests := *rate * int(duration.Seconds()) / per
	interval := time.Second * time.Duration(per) / time.Duration(*rate)
	answered := make([]time.Time, requests) // batch i: posts i*per to i*per+per-1
	var failed, late atomic.Int64
	sem := make(chan struct{}, 64) // requests in flight at most
	var wg sync.WaitGroup
	profiled := make(chan struct{})
	if *profile != "" {
		go func() {
			defer close(profiled)
			resp, err := http.Get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", pprofAddr, int(duration.Seconds())))
			if err != nil {
				b.Errorf("cpu profile: %v", err)
				return
			}
			defer resp.Body.Close()
			f, err := os.Create(*profile)
			if err == nil {
				_, err = io.Copy(f, resp.Body)
				f.Close()
			}
			if err != nil {
				b.Errorf("cpu profile: %v", err)
			}
		}()
	} else {
		close(profiled)
	}
	b.ResetTimer()
	begin := time.Now()
	tick := time.NewTicker(interval)
	for i := 0; i < requests; i++ {
		if i > 0 {
			<-tick.C
		}
		select {
		case sem <- struct{}{}:
		default:
			late.Add(1) // the server fell behind: this request waits for a slot
			sem <- struct{}{}
		}
		wg.Add(1)
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			posts := make([]map[string]any, per)
			for j := range posts {
				n := i*per + j
				posts[j] = map[string]any{
					"externalId": fmt.Sprint(n), "authorName": "ada",
					"body": []string{"We have used acme for two years and the pricing keeps going up. Any alternatives?"},
					"url":  fmt.Sprintf("https://x.com/ada/status/%d", n),
				}
			}
			raw, _ := json.Marshal(map[string]any{"platform": "x", "posts": posts})
			req, _ := http.NewRequest("POST", s.url+"/ingest", bytes.NewReader(raw))
			req.Header.Set("Authorization", "Bearer "+s.ingestKey)
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				failed.Add(1)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				failed.Add(1)
				return
			}
			answered[i] = time.Now()
		}(i)
	}
	tick.Stop()
	wg.Wait()
	ingestEnd := time.Now()

	ok := 0
	for _, at := range answered {
		if !at.IsZero() {
			ok += per
		}
	}
	// Wait for every post answered, or the drain time.
	deadline := time.Now().Add(*drain)
	for len(rcv.Messages()) < ok && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond) // late doubles
	b.StopTimer()
	<-profiled
	msgs := rcv.Messages()

	ids, posts := map[string]int{}, map[int]time.Time{}
	doubled := 0
	var last time.Time
	var lat []float64
	for _, m := range msgs {
		ids[m.DeliveryID]++
		data, _ := m.JSON["data"].(map[string]any)
		post, _ := data["post"].(map[string]any)
		var n int
		if u, _ := post["url"].(string); u == "" {
			continue
		} else if _, err := fmt.Sscanf(u[strings.LastIndex(u, "/")+1:], "%d", &n); err != nil {
			continue
		}
		if _, seen := posts[n]; seen || ids[m.DeliveryID] > 1 {
			doubled++
			continue
		}
		posts[n] = m.ReceivedAt
		if m.ReceivedAt.After(last) {
			last = m.ReceivedAt
		}
		if at := answered[n/per]; !at.IsZero() {
			lat = append(lat, float64(m.ReceivedAt.Sub(at).Microseconds())/1000)
		}
	}
	lost := 0
	for i, at := range answered {
		for j := 0; j < per && !at.IsZero(); j++ {
			if _, ok := posts[i*per+j]; !ok {
				lost++
			}
		}
	}
	slices.Sort(lat)
	if len(lat) == 0 {
		b.Fatalf("no deliveries arrived\n%s", s.logText())
	}
	// Where the time went: from the ingest answer to the stored score,
	// and from the stored score to the receipt.
	scoredAt := scoreTimes(b, dbURL)
	var toScore, toSend []float64
	for n, got := range posts {
		at, ok := scoredAt[fmt.Sprint(n)]
		if !ok || answered[n/per].IsZero() {
			continue
		}
		toScore = append(toScore, float64(at.Sub(answered[n/per]).Microseconds())/1000)
		toSend = append(toSend, float64(got.Sub(at).Microseconds())/1000)
	}
	slices.Sort(toScore)
	slices.Sort(toSend)
	if len(toSend) > 0 {
		b.ReportMetric(toScore[len(toScore)/2], "score-p50-ms")
		b.ReportMetric(toSend[len(toSend)/2], "send-p50-ms")
		b.ReportMetric(toSend[len(toSend)*99/100], "send-p99-ms")
	}
	b.ReportMetric(float64(ok)/ingestEnd.Sub(begin).Seconds(), "posts/s")
	b.ReportMetric(float64(len(posts))/last.Sub(begin).Seconds(), "deliveries/s")
	b.ReportMetric(lat[len(lat)/2], "p50-ms")
	b.ReportMetric(lat[len(lat)*99/100], "p99-ms")
	b.ReportMetric(float64(lost), "lost")
	b.ReportMetric(float64(doubled), "doubled")
	b.ReportMetric(float64(failed.Load()), "failed-requests")
	b.ReportMetric(float64(late.Load()), "late-requests")
	if refused := rcv.Refused(); refused > 0 {
		b.Errorf("%d messages failed the receiver's checks", refused)
	}
}

// scoreTimes reads when each post's match was scored, by external id.
func scoreTimes(b *testing.B, url string) map[string]time.Time {
	db, err := gormstore.Open(url)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	rows, err := db.SQL().Query("SELECT external_id, scored_at FROM matches WHERE scored_at > 0")
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var id string
		var us int64
		if err := rows.Scan(&id, &us); err != nil {
			b.Fatal(err)
		}
		out[id] = time.UnixMicro(us)
	}
	return out
}
