package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
)

// floodBody returns a body of about size bytes whose posts array holds
// tiny posts, far more than a batch may carry: what a careless or hostile
// helper sends to make the reader allocate a slice entry per post.
func floodBody(size int, first, platform string) string {
	var b strings.Builder
	b.WriteString(`{` + platform + `"posts":[` + first)
	for b.Len() < size-4 {
		b.WriteString(`{},`)
	}
	b.WriteString(`{}]}`)
	return b.String()
}

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// A 1 MB body of empty posts is refused after the 101st post without
// allocating a slice entry for every post: past the limit the streaming
// reader only checks that the rest is JSON. That holds whatever comes
// first: no platform, a row with a value of the wrong type, rows that are
// not objects, or a posts array named a second time under Unicode case
// folding ("poſts") with a row holding an unknown field.
func TestDecodeIngestStopsAtTheLimit(t *testing.T) {
	const size = maxHelperBody - 100
	for name, body := range map[string]string{
		"empty posts":           floodBody(size, "", `"platform":"x",`),
		"no platform":           floodBody(size, "", ""),
		"row of the wrong type": floodBody(size, `{"likes":1.5},`, `"platform":"x",`),
		"posts twice, folded":   floodBody(size, `{"ſ":1},`, `"platform":"x","poſts":[],`),
		"wrong rows":            floodBody(size, `"no",7,`, `"platform":"x",`),
	} {
		t.Run(name, func(t *testing.T) {
			var err error
			n := allocated(func() {
				r := httptest.NewRequest("POST", "/ingest", strings.NewReader(body))
				r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, maxHelperBody)
				_, err = decodeIngest(context.Background(), r)
			})
			if !core.IsKind(err, core.KindInvalid) || !strings.Contains(core.Message(err), "at most 100") {
				t.Fatalf("decodeIngest of %d bytes: %v, want the batch limit", len(body), err)
			}
			// The body is read into one buffer of its size, which the
			// reader decodes in place; a slice entry per post would show
			// here as tens of megabytes.
			if limit := uint64(3 * len(body)); n > limit {
				t.Fatalf("decoding a %d-byte body allocated %d bytes, more than %d", len(body), n, limit)
			}
			t.Logf("%d-byte body: %d bytes allocated", len(body), n)
		})
	}
}

// counted allows limit requests per key, like the fixed window of the
// real limiters within one minute.
type counted struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counted) Take(_ context.Context, key string, limit int) (ports.Quota, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	q := ports.Quota{Limit: limit, Reset: 30 * time.Second}
	if c.n[key] >= limit {
		return q, nil
	}
	c.n[key]++
	q.Allowed, q.Remaining = true, limit-c.n[key]
	return q, nil
}

// fakeIngest counts the batches it is handed at once; each waits for
// release when it is set.
type fakeIngest struct {
	release chan struct{}
	entered chan struct{}
	now     atomic.Int32
	most    atomic.Int32
}

func (f *fakeIngest) IngestBatch(_ context.Context, _ string, b core.IngestBatch) (string, int, int, error) {
	posts := b.Posts
	n := f.now.Add(1)
	defer f.now.Add(-1)
	for {
		m := f.most.Load()
		if n <= m || f.most.CompareAndSwap(m, n) {
			break
		}
	}
	if f.entered != nil {
		f.entered <- struct{}{}
	}
	if f.release != nil {
		<-f.release
	}
	return "a1", len(posts), 0, nil
}

func (f *fakeIngest) Phrases(_ context.Context, _, platform string) ([]core.Phrase, error) {
	if platform == "reddit" {
		return []core.Phrase{{Phrase: "acme", Platform: core.Reddit, Community: "golang"}, {Phrase: "acme crm", Platform: core.Reddit, Community: "sales"}}, nil
	}
	return []core.Phrase{{Phrase: "acme", Platform: core.Platform(platform)}}, nil
}

var helperKeys = keyOf{
	"svc_ingest_one":   {ID: "i1", OwnerID: "o1", Kind: core.IngestKey},
	"svc_ingest_two":   {ID: "i2", OwnerID: "o2", Kind: core.IngestKey},
	"svc_ingest_three": {ID: "i3", OwnerID: "o3", Kind: core.IngestKey},
}

func helperServer(t *testing.T, cfg HelperConfig, ingest IngestService) *httptest.Server {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	srv := httptest.NewServer(NewHelper(cfg, helperKeys, ingest, nil))
	t.Cleanup(srv.Close)
	return srv
}

func helperCall(t *testing.T, srv *httptest.Server, method, path, key, body string) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return resp, out
}

const oneBatch = `{"platform":"x","posts":[{"externalId":"1","body":["acme"],"url":"https://x.com/1"}]}`

// Each ingest key has its own count on every helper route; past it the
// answer is the public API's 429 with Retry-After, and every answer
// carries the rate headers.
func TestHelperRateLimitPerKey(t *testing.T) {
	srv := helperServer(t, HelperConfig{RateLimit: 3, FailedKeyLimit: 2, Limiter: &counted{}}, &fakeIngest{})
	for i, call := range [][2]string{{"GET", "/phrases?platform=x"}, {"POST", "/ingest"}, {"GET", "/proxy"}} {
		resp, out := helperCall(t, srv, call[0], call[1], "svc_ingest_one", oneBatch)
		if resp.StatusCode == 429 || resp.Header.Get("X-RateLimit-Limit") != "3" ||
			resp.Header.Get("X-RateLimit-Remaining") != strconv.Itoa(2-i) {
			t.Fatalf("%s %s: %d %v %v", call[0], call[1], resp.StatusCode, resp.Header, out)
		}
	}
	resp, out := helperCall(t, srv, "POST", "/ingest", "svc_ingest_one", oneBatch)
	e, _ := out["error"].(map[string]any)
	if resp.StatusCode != 429 || e["code"] != "rate_limited" || resp.Header.Get("Retry-After") != "30" ||
		resp.Header.Get("X-RateLimit-Remaining") != "0" || !strings.Contains(e["message"].(string), "retry after 30 seconds") {
		t.Fatalf("over the limit: %d %v %v", resp.StatusCode, resp.Header, out)
	}
	if resp, out := helperCall(t, srv, "POST", "/ingest", "svc_ingest_two", oneBatch); resp.StatusCode != 200 ||
		resp.Header.Get("X-RateLimit-Remaining") != "2" {
		t.Fatalf("another key: %d %v %v", resp.StatusCode, resp.Header, out)
	}
	// Failed keys count against the address, on the failed-key quota
	// (not the ingest keys' limit), and carry its headers too.
	for i := 0; i < 2; i++ {
		if resp, _ := helperCall(t, srv, "GET", "/proxy", "svc_ingest_bad", ""); resp.StatusCode != 401 || resp.Header.Get("X-RateLimit-Limit") != "2" {
			t.Fatalf("a bad key: %d %v", resp.StatusCode, resp.Header)
		}
	}
	if resp, _ := helperCall(t, srv, "GET", "/proxy", "svc_ingest_bad", ""); resp.Header.Get("Retry-After") == "" {
		t.Fatalf("a bad key past the quota: %d %v", resp.StatusCode, resp.Header)
	}
}

// At most Bodies ingest requests are handled at once, and at most half
// of them for one key; one more that finds no room within BodyWait
// answers 503 with Retry-After, and the next after a slot frees is
// served.
func TestHelperBoundsBodiesInFlight(t *testing.T) {
	f := &fakeIngest{release: make(chan struct{}), entered: make(chan struct{})}
	srv := helperServer(t, HelperConfig{Bodies: 4, BodyWait: 20 * time.Millisecond}, f)
	var wg sync.WaitGroup
	hold := func(key string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest("POST", srv.URL+"/ingest", strings.NewReader(oneBatch))
			req.Header.Set("Authorization", "Bearer "+key)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		<-f.entered
	}
	busy := func(key, why string) {
		t.Helper()
		resp, out := helperCall(t, srv, "POST", "/ingest", key, oneBatch)
		e, _ := out["error"].(map[string]any)
		if resp.StatusCode != 503 || e["code"] != "service_unavailable" || resp.Header.Get("Retry-After") != "1" {
			t.Fatalf("%s: %d %v %v", why, resp.StatusCode, resp.Header, out)
		}
	}
	hold("svc_ingest_one")
	hold("svc_ingest_one")
	busy("svc_ingest_one", "a key's third batch while it holds half the slots")
	hold("svc_ingest_two")
	hold("svc_ingest_two")
	busy("svc_ingest_three", "a batch while every slot is taken")
	// Routes without a body are not held up.
	if resp, out := helperCall(t, srv, "GET", "/phrases?platform=x", "svc_ingest_three", ""); resp.StatusCode != 200 {
		t.Fatalf("GET /phrases while the slots are taken: %d %v", resp.StatusCode, out)
	}
	for i := 0; i < 4; i++ {
		f.release <- struct{}{}
	}
	wg.Wait()
	f.entered, f.release = nil, nil
	if resp, out := helperCall(t, srv, "POST", "/ingest", "svc_ingest_three", oneBatch); resp.StatusCode != 200 {
		t.Fatalf("after the slots freed: %d %v", resp.StatusCode, out)
	}
	if f.most.Load() != 4 {
		t.Fatalf("%d batches handled at once, want 4", f.most.Load())
	}
}

// A batch that waits for a slot is served when one frees in time.
func TestHelperBodyWaitsForASlot(t *testing.T) {
	s := newSlots(2)
	if !s.acquire(context.Background(), "a", 0) || !s.acquire(context.Background(), "b", 0) {
		t.Fatal("two free slots refused")
	}
	got := make(chan bool)
	go func() { got <- s.acquire(context.Background(), "c", time.Hour) }()
	s.release("a")
	if !<-got {
		t.Fatal("a waiting request was not given the freed slot")
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { got <- s.acquire(ctx, "d", time.Hour) }()
	cancel()
	if <-got {
		t.Fatal("a request whose client left took a slot")
	}
	s.release("b")
	s.release("c")
	if s.used != 0 || len(s.byKey) != 0 {
		t.Fatalf("after every release: %d used, %v", s.used, s.byKey)
	}
}

// BenchmarkDecodeIngest compares a 1 MB flood of empty posts, plain and
// after a row of the wrong type, with an ordinary batch of 100 posts:
// B/op shows the flood refused for about its own size, the one buffer
// it is read into; peak-heap-MB, the process's while it decodes, that
// no more than that is held at once.
func BenchmarkDecodeIngest(b *testing.B) {
	var batch strings.Builder
	batch.WriteString(`{"platform":"x","posts":[`)
	for i := 0; i < core.MaxIngestBatch; i++ {
		if i > 0 {
			batch.WriteString(",")
		}
		fmt.Fprintf(&batch, `{"externalId":"%d","authorName":"ada","body":["Any alternative to Acme CRM? %s"],"url":"https://x.com/ada/%d","likes":3}`,
			i, strings.Repeat("words ", 40), i)
	}
	batch.WriteString("]}")
	for _, c := range []struct{ name, body string }{
		{"batch", batch.String()},
		{"flood", floodBody(maxHelperBody-100, "", `"platform":"x",`)},
		{"flood-wrong-row", floodBody(maxHelperBody-100, `{"likes":1.5},`, `"platform":"x",`)},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			stop := peakmem.MeasureHeap(b)
			b.ResetTimer() // the collection MeasureHeap starts with is not a decode's
			for i := 0; i < b.N; i++ {
				r := httptest.NewRequest("POST", "/ingest", strings.NewReader(c.body))
				_, _ = decodeIngest(context.Background(), r)
			}
			stop()
		})
	}
}

// GET /phrases keeps the spec's phrases list and adds items, each phrase
// with its community, so a helper knows which subreddit a reddit phrase
// listens in.
func TestHelperPhrasesCarryCommunities(t *testing.T) {
	srv := helperServer(t, HelperConfig{}, &fakeIngest{})
	resp, out := helperCall(t, srv, "GET", "/phrases?platform=reddit", "svc_ingest_one", "")
	if resp.StatusCode != 200 {
		t.Fatalf("GET /phrases: %d %v", resp.StatusCode, out)
	}
	b, _ := json.Marshal(out)
	want := `{"items":[{"community":"golang","phrase":"acme"},{"community":"sales","phrase":"acme crm"}],"phrases":["acme","acme crm"],"platform":"reddit"}`
	if string(b) != want {
		t.Fatalf("GET /phrases answered %s, want %s", b, want)
	}
	_, out = helperCall(t, srv, "GET", "/phrases?platform=x", "svc_ingest_one", "")
	if b, _ := json.Marshal(out); string(b) != `{"items":[{"community":"","phrase":"acme"}],"phrases":["acme"],"platform":"x"}` {
		t.Fatalf("GET /phrases?platform=x answered %s", b)
	}
}
