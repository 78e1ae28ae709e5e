// Command earshot-load drives a running earshot server over HTTP with a
// fixed-rate mix of match reads, phrase writes and ingest batches for a
// bounded time, then prints throughput, latency percentiles and errors.
//
//	earshot-load -url http://127.0.0.1:8080 -key svc_api_... -ingest-key svc_ingest_... -rate 200 -duration 30s
//
// It only ever talks to the address given, and stops by itself.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// seedTries bounds the sends of one seed batch the server keeps asking
// for later.
const seedTries = 100

// maxInFlight bounds the requests of the timed run waiting for their
// answer (each a goroutine, a connection and, for ingest, a batch), so a
// stalled server cannot make the run hold rate times the client's
// timeout of them. A tick that finds them all out sends nothing and is
// counted as skipped: queueing it would hide the stall from the
// latencies. A variable so that a test can meet it in a few ticks.
var maxInFlight = 1024

// clientTimeout ends every exchange of the load program with the
// server; the latency histogram reaches past it (histTop).
const clientTimeout = 10 * time.Second

// now is the clock the report's rates are measured by; a variable so
// that a test can move it.
var now = time.Now

// kind is what a request of the timed run did: a match page read, a
// phrase write, a phrase write refused at the plan limit, an ingest
// batch.
type kind uint8

const (
	kindRead kind = iota
	kindWrite
	kindLimited
	kindIngest
	numKinds
)

var kindNames = [numKinds]string{"read", "write", "limited", "ingest"}

type result struct {
	kind    kind
	latency time.Duration
	err     bool
	// refused: the server refused the request's key or its rate (401,
	// 403 other than the plan limit, 429), so its latency times a
	// refusal, not the work.
	refused bool
}

// errRefused ends a run some of whose requests were refused: its figures
// are not the server's under the load asked for.
var errRefused = errors.New("refused")

func main() {
	target := flag.String("url", "http://127.0.0.1:8080", "server address (loopback)")
	key := flag.String("key", os.Getenv("EARSHOT_LOAD_API_KEY"), "API key with read and write:phrases (env EARSHOT_LOAD_API_KEY)")
	ingestKey := flag.String("ingest-key", os.Getenv("EARSHOT_LOAD_INGEST_KEY"), "ingest key of the same owner (env EARSHOT_LOAD_INGEST_KEY)")
	rate := flag.Int("rate", 100, "requests per second")
	duration := flag.Duration("duration", 20*time.Second, "how long to run (at most 10m)")
	mix := flag.String("mix", "80:5:15", "percent of reads:phrase writes:ingest batches")
	batch := flag.Int("batch", 100, "posts per ingest batch (1 to 100)")
	seed := flag.Int("seed", 0, "posts to ingest as fast as the server takes them before the timed run (at most 10,000,000)")
	flag.Parse()
	if err := run(*target, *key, *ingestKey, *rate, *duration, *mix, *batch, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "earshot-load:", err)
		if errors.Is(err, errRefused) {
			os.Exit(1)
		}
		os.Exit(2)
	}
}

func run(target, key, ingestKey string, rate int, duration time.Duration, mix string, batch, seed int) error {
	u, err := url.Parse(target)
	if err != nil || (u.Hostname() != "127.0.0.1" && u.Hostname() != "localhost" && u.Hostname() != "::1") {
		return errors.New("-url must be a loopback address")
	}
	// Paths are added with their own slash: "//api/v1/..." would be
	// answered with a redirect, two round trips a request.
	target = strings.TrimRight(target, "/")
	if key == "" || ingestKey == "" {
		return errors.New("-key and -ingest-key are required (the first start of serve prints both)")
	}
	var reads, writes, ingests int
	if _, err := fmt.Sscanf(mix, "%d:%d:%d", &reads, &writes, &ingests); err != nil || reads+writes+ingests != 100 ||
		min(reads, writes, ingests) < 0 {
		return errors.New("-mix must be three percentages that add up to 100, e.g. 80:5:15")
	}
	if rate < 1 || rate > 20000 || duration <= 0 || duration > 10*time.Minute {
		return errors.New("-rate must be 1 to 20000 and -duration at most 10m")
	}
	// POST /ingest takes at most 100 posts: a larger batch would make
	// every ingest an error, and a negative one cannot be built.
	if batch < 1 || batch > 100 {
		return errors.New("-batch must be 1 to 100 posts")
	}
	if seed < 0 || seed > 10_000_000 {
		return errors.New("-seed must be 0 to 10000000")
	}
	client := &http.Client{Timeout: clientTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	// retryAfter is set, when the server asked for the request again
	// later (503 while scoring is behind, 429), to the wait it named;
	// limited, when the answer is the plan limit's refusal, which is ok;
	// refused, when the key or its rate was refused (401, 429, any other
	// 403).
	send := func(method, path, secret string, body any) (ok, limited, refused bool, retryAfter *time.Duration) {
		var rd io.Reader
		if body != nil {
			b, _ := json.Marshal(body)
			rd = bytes.NewReader(b)
		}
		req, _ := http.NewRequest(method, target+path, rd)
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := client.Do(req)
		if err != nil {
			return false, false, false, nil
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable || resp.StatusCode == http.StatusTooManyRequests {
			if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs >= 0 {
				wait := time.Duration(min(secs, 60)) * time.Second
				retryAfter = &wait
			}
		}
		if resp.StatusCode == http.StatusForbidden {
			// The plan limit is an answer the phrase writes expect; any
			// other 403 (a key without write:phrases) is a refusal.
			var e struct {
				Error struct{ Code string } `json:"error"`
			}
			_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e)
			io.Copy(io.Discard, resp.Body)
			limited := e.Error.Code == "plan_limit"
			return limited, limited, !limited, nil
		}
		io.Copy(io.Discard, resp.Body)
		refused = resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusTooManyRequests
		return resp.StatusCode < 400 || resp.StatusCode == 409, false, refused, retryAfter
	}
	do := func(method, path, secret string, body any) bool {
		ok, _, _, _ := send(method, path, secret, body)
		return ok
	}
	// The seed sends a batch the server asked for later again after the
	// wait it named, as the helper does, up to seedTries times: the
	// default backlog bound refuses batches while scoring catches up.
	seedBatch := func(body any) bool {
		for range seedTries {
			ok, _, _, retryAfter := send("POST", "/ingest", ingestKey, body)
			if ok || retryAfter == nil {
				return ok
			}
			time.Sleep(*retryAfter)
		}
		return false
	}

	// Ingested posts mention acme, so each one stores a match.
	if !do("POST", "/api/v1/keywords", key, map[string]any{"phrase": "acme", "platform": "x"}) {
		return errors.New("cannot create the phrase acme: check the server and -key")
	}
	if seed > 0 {
		if err := seedPosts(seedBatch, seed); err != nil {
			return err
		}
	}

	results := make(chan result, 1024)
	// The results are summed as they come, not kept: a run at the
	// largest -rate and -duration would hold 12 M of them.
	s := new(summary)
	done := make(chan struct{})
	go func() {
		for r := range results {
			s.add(r)
		}
		close(done)
	}()
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	end := time.Now().Add(duration)
	began := now()
	n, skipped := 0, 0
	inFlight := make(chan struct{}, maxInFlight)
	for time.Now().Before(end) {
		<-tick.C
		n++
		i := n
		select {
		case inFlight <- struct{}{}:
		default:
			skipped++
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-inFlight }()
			start := time.Now()
			var k kind
			var ok, refused bool
			switch p := rand.IntN(100); {
			case p < reads:
				k = kindRead
				ok, _, refused, _ = send("GET", "/api/v1/matches?limit=25", key, nil)
			case p < reads+writes:
				// A write refused at the plan limit (the default plan
				// allows one phrase a platform, acme) stores nothing: it is
				// counted apart, or the writes would time refusals.
				var limited bool
				ok, limited, refused, _ = send("POST", "/api/v1/keywords", key, map[string]any{"phrase": fmt.Sprintf("load %d", i), "platform": "x"})
				k = kindWrite
				if limited {
					k = kindLimited
				}
			default:
				posts := make([]map[string]any, batch)
				for j := range posts {
					posts[j] = map[string]any{"externalId": fmt.Sprintf("load-%d-%d-%d", start.UnixNano(), i, j), "authorName": "load",
						"body": []string{fmt.Sprintf("post %d mentions acme crm and other things", j)}, "url": "https://x.com/load/" + fmt.Sprint(j)}
				}
				k = kindIngest
				ok, _, refused, _ = send("POST", "/ingest", ingestKey, map[string]any{"platform": "x", "posts": posts})
			}
			results <- result{kind: k, latency: time.Since(start), err: !ok, refused: refused}
		}()
	}
	wg.Wait()
	// Rates are of requests answered over the time they took: the last
	// answers may come well after the ticks ended.
	elapsed := now().Sub(began)
	close(results)
	<-done
	report(s, elapsed, skipped)
	if s.refused > 0 {
		return fmt.Errorf("%w: %d requests were refused (401, 403 or 429): check -key, -ingest-key and the server's EARSHOT_RATE_LIMIT_PER_MINUTE; the figures above time refusals", errRefused, s.refused)
	}
	return nil
}

// seedPosts ingests n posts that match acme in batches of 100 from four
// workers, as fast as the server takes them, and says how long it took.
func seedPosts(ingest func(body any) bool, n int) error {
	start := time.Now()
	run := start.UnixNano()
	batches := make(chan int)
	failed := make(chan int, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for b := range batches {
				posts := make([]map[string]any, 0, 100)
				for j := b; j < min(b+100, n); j++ {
					posts = append(posts, map[string]any{"externalId": fmt.Sprintf("seed-%d-%d", run, j), "authorName": "seed",
						"body": []string{fmt.Sprintf("seed post %d asks whether acme crm is worth it", j)}, "url": fmt.Sprintf("https://x.com/seed/status/%d", j)})
				}
				if !ingest(map[string]any{"platform": "x", "posts": posts}) {
					failed <- b
					return
				}
			}
		}()
	}
	for b := 0; b < n; b += 100 {
		select {
		case batches <- b:
		case b := <-failed:
			close(batches)
			wg.Wait()
			return fmt.Errorf("seeding failed at post %d", b)
		}
	}
	close(batches)
	wg.Wait()
	select {
	case b := <-failed:
		return fmt.Errorf("seeding failed at post %d", b)
	default:
	}
	d := time.Since(start)
	fmt.Printf("seeded %d posts in %s (%.0f posts/s)\n", n, d.Round(time.Millisecond), float64(n)/d.Seconds())
	return nil
}

// summary is what a run keeps of its results: per kind the errors and
// a histogram of the latencies, and the refusals; its size is fixed
// whatever the number of requests.
type summary struct {
	kinds   [numKinds]tally
	refused int
}

type tally struct {
	errs      int
	latencies histogram
}

func (s *summary) add(r result) {
	t := &s.kinds[r.kind]
	t.latencies.add(r.latency)
	if r.err {
		t.errs++
	}
	if r.refused {
		s.refused++
	}
}

func report(s *summary, d time.Duration, skipped int) {
	var all tally
	for i := range s.kinds {
		all.errs += s.kinds[i].errs
		all.latencies.merge(&s.kinds[i].latencies)
	}
	fmt.Printf("%-7s %8s %10s %10s %10s %7s\n", "kind", "requests", "req/s", "p50", "p99", "errors")
	row := func(name string, t *tally) {
		h := &t.latencies
		if h.n == 0 {
			return
		}
		fmt.Printf("%-7s %8d %10.1f %10s %10s %7d\n", name, h.n, float64(h.n)/d.Seconds(),
			h.percentile(50).Round(10*time.Microsecond), h.percentile(99).Round(10*time.Microsecond), t.errs)
	}
	for i := range s.kinds {
		row(kindNames[i], &s.kinds[i])
	}
	row("all", &all)
	if s.kinds[kindLimited].latencies.n > 0 {
		fmt.Println("limited: phrase writes refused at the plan limit (EARSHOT_PLAN_PHRASES_PER_PLATFORM), not counted as writes")
	}
	if skipped > 0 {
		fmt.Printf("skipped %d requests: %d were waiting for their answer\n", skipped, maxInFlight)
	}
}
