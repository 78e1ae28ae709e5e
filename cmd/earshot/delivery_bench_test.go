package main

// The delivery benchmark measures webhooks as an outside harness does:
// the built binary in a process of its own on loopback with a Pro plan
// and EARSHOT_WEBHOOK_ALLOW_PRIVATE, a receiver in this process
// (testkit/webhooktest, which checks every signature), matching posts
// ingested at a fixed rate over keep-alive HTTP. It reports deliveries a
// second, the time from the ingest answer to the receipt (median and
// 99th percentile), messages lost and doubled, and where the time went:
// from the answer to the stored score, and from the score to the receipt.
// The -channels cases add chat channels beside the webhook and report
// their figures apart (channel-*): the messages they took, each a
// second's matches, and the matches those cover, none lost or doubled.
// peak-RSS-MB is the server's peak resident memory (VmHWM), its own
// only.
//
//	go test -run '^$' -bench Deliveries -benchtime 1x -timeout 30m ./cmd/earshot
//	EARSHOT_BENCH_DURATION=5s go test -run '^$' -bench Deliveries -benchtime 1x ./cmd/earshot
//
// EARSHOT_BENCH_RATE (posts a second, 1000), EARSHOT_BENCH_DURATION (of
// the ingest, 60s) and EARSHOT_BENCH_DRAIN (the wait for the last
// messages, 30s) set the run. With EARSHOT_TEST_POSTGRES_URL and
// EARSHOT_TEST_AMQP_URL set it also runs on Postgres (a schema of its
// own) and RabbitMQ (queues of its own). With EARSHOT_BENCH_CPUPROFILE=DIR
// the server is built with -tags profile and writes a CPU profile of each
// case to DIR. EARSHOT_BENCH_BINARY=PATH runs another build of earshot
// instead, to compare with the one under test on the same machine.

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
	"github.com/earshothq/earshot/testkit/pgtest"
	"github.com/earshothq/earshot/testkit/webhooktest"
)

// deliveryBatch is the posts in one ingest request; deliveryClients the
// requests in flight at most.
const (
	deliveryBatch   = 10
	deliveryClients = 64
)

// deliveryCase is what runs beside the webhook in one case of
// BenchmarkDeliveries.
type deliveryCase struct {
	suffix string
	// channels: a Slack and an ntfy channel at once and a Discord and a
	// Telegram channel on digests, which take none during the run.
	channels bool
	// hookMin and chatMin are the webhook's and the at-once channels'
	// min_score.
	hookMin, chatMin int
	// mixed makes every other post a complaint that scores under 80 (72)
	// among the requests for alternatives (82): the webhook takes every
	// post, channels at min_score 80 only the strong half.
	mixed bool
}

// deliveryStrong and deliveryWeak are the posts' texts: the rules score
// the first 82 (a request for alternatives), the second 72 (a complaint).
const (
	deliveryStrong = "We have used acme for two years and the pricing keeps going up. Any alternatives?"
	deliveryWeak   = "acme keeps crashing, so frustrating"
)

// strong reports whether post n of the case carries deliveryStrong.
func (c deliveryCase) strong(n int) bool { return !c.mixed || n%2 == 0 }

func BenchmarkDeliveries(b *testing.B) {
	for _, c := range []deliveryCase{
		{},
		// Every post to the webhook and to both at-once channels: a
		// message a post to the webhook, one a second to each channel.
		{suffix: "-channels", channels: true},
		// Closer to use: the webhook at 70 takes every post, the at-once
		// channels at 80 the strong half.
		{suffix: "-channels80", channels: true, hookMin: 70, chatMin: 80, mixed: true},
	} {
		b.Run("sqlite-memory"+c.suffix, func(b *testing.B) {
			benchDeliveries(b, "sqlite://"+filepath.Join(b.TempDir(), "earshot.db"), c, "EARSHOT_BUS_URL=memory://")
		})
		b.Run("postgres-rabbitmq"+c.suffix, func(b *testing.B) {
			amqp := os.Getenv("EARSHOT_TEST_AMQP_URL")
			if amqp == "" {
				b.Skip("EARSHOT_TEST_AMQP_URL is unset: Postgres and RabbitMQ case skipped")
			}
			benchDeliveries(b, pgtest.URL(b), c, "EARSHOT_BUS_URL="+amqp, fmt.Sprintf("EARSHOT_BUS_PREFIX=bench%d", time.Now().UnixNano()))
		})
	}
}

// deliverySetting reads a positive setting of the run from the
// environment, or gives def.
func deliverySetting[T int | time.Duration](b *testing.B, name string, def T, parse func(string) (T, error)) T {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	x, err := parse(v)
	if err != nil || x <= 0 {
		b.Fatalf("%s=%q: want a positive value such as %v", name, v, def)
	}
	return x
}

func benchDeliveries(b *testing.B, dbURL string, c deliveryCase, env ...string) {
	rate := deliverySetting(b, "EARSHOT_BENCH_RATE", 1000, strconv.Atoi)
	duration := deliverySetting(b, "EARSHOT_BENCH_DURATION", 60*time.Second, time.ParseDuration)
	drain := deliverySetting(b, "EARSHOT_BENCH_DRAIN", 30*time.Second, time.ParseDuration)

	env = append(env, "EARSHOT_DATABASE_URL="+dbURL, "EARSHOT_WEBHOOK_ALLOW_PRIVATE=true",
		"EARSHOT_PLAN_WEBHOOKS_PER_PERSON=10", "EARSHOT_RATE_LIMIT_PER_MINUTE=1000000", "EARSHOT_HELPER_RATE_LIMIT_PER_MINUTE=1000000")
	var chat *benchChat
	if c.channels {
		chat = newBenchChat(b)
		env = append(env, "EARSHOT_TELEGRAM_API="+chat.srv.URL)
	}
	s := &instance{t: b, env: append(baseEnv(b.TempDir()), env...)}
	s.bin = os.Getenv("EARSHOT_BENCH_BINARY") // another build to compare, such as the commit before a change
	s.profileIfAsked(b)
	s.launch()
	b.Cleanup(s.stop)

	// The webhook's address has to exist before its secret does.
	var rcv atomic.Pointer[webhooktest.Receiver]
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := rcv.Load(); h != nil {
			h.ServeHTTP(w, r)
			return
		}
		http.Error(w, "no receiver yet", http.StatusServiceUnavailable)
	}))
	defer front.Close()
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(b, 201, "")
	created := dataOf(b, s.call("POST", "/api/v1/webhooks", s.APIKey, map[string]any{"url": front.URL + "/hook", "min_score": c.hookMin}).want(b, 201, ""))
	receiver := webhooktest.NewReceiver(b, created["secret"].(string))
	rcv.Store(receiver)
	if c.channels {
		for _, ch := range []map[string]any{
			{"kind": "slack", "url": chat.srv.URL + "/services/T0123ABCD/B0456EFGH/abcdefghijklmnopqrstwxyz", "min_score": c.chatMin},
			{"kind": "ntfy", "url": chat.srv.URL + "/earshot-bench-topic", "min_score": c.chatMin},
			{"kind": "discord", "url": chat.srv.URL + "/api/webhooks/112233445566778899/AbCdEf_gh-IjKlMnOpQrStUvWxYz0123456789", "min_score": 0, "frequency": "hourly"},
			{"kind": "telegram", "token": "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw", "chat_id": "-1001234567890", "min_score": 0, "frequency": "daily", "hour": 3},
		} {
			s.call("POST", "/api/v1/channels", s.APIKey, ch).want(b, 201, "")
		}
	}

	ingest := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: deliveryClients}, Timeout: 30 * time.Second}
	requests := rate * int(duration/time.Second) / deliveryBatch
	answered := make([]time.Time, requests) // request i carries posts i*deliveryBatch onwards
	var failed, late atomic.Int64
	slots := make(chan struct{}, deliveryClients)
	var wg sync.WaitGroup
	b.ResetTimer()
	begin := time.Now()
	// Request i goes out at begin + i intervals: a ticker drops the ticks
	// a slow loop misses, and offered a little less than the rate.
	interval := time.Second * deliveryBatch / time.Duration(rate)
	for i := 0; i < requests; i++ {
		time.Sleep(time.Until(begin.Add(time.Duration(i) * interval)))
		select {
		case slots <- struct{}{}:
		default:
			late.Add(1) // every client is waiting for the server: this one goes out late
			slots <- struct{}{}
		}
		wg.Add(1)
		go func(i int) {
			defer func() { <-slots; wg.Done() }()
			var sb strings.Builder
			sb.WriteString(`{"platform":"x","posts":[`)
			for j := 0; j < deliveryBatch; j++ {
				if j > 0 {
					sb.WriteByte(',')
				}
				n := i*deliveryBatch + j
				text := deliveryStrong
				if !c.strong(n) {
					text = deliveryWeak
				}
				fmt.Fprintf(&sb, `{"externalId":"%d","authorName":"ada","body":[%q],"url":"https://x.com/ada/status/%d"}`, n, text, n)
			}
			sb.WriteString(`]}`)
			req, _ := http.NewRequest("POST", s.URL+"/ingest", strings.NewReader(sb.String()))
			req.Header.Set("Authorization", "Bearer "+s.IngestKey)
			req.Header.Set("Content-Type", "application/json")
			resp, err := ingest.Do(req)
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
	wg.Wait()
	ingested := time.Since(begin)

	want, wantChat := 0, 0
	for i, at := range answered {
		for j := 0; j < deliveryBatch && !at.IsZero(); j++ {
			want++
			if c.strong(i*deliveryBatch + j) {
				wantChat += 2 // the Slack and the ntfy channel
			}
		}
	}
	for deadline := time.Now().Add(drain); (len(receiver.Messages()) < want || chat != nil && chat.count() < wantChat) && time.Now().Before(deadline); {
		// Benchmark pacing: receipt times come from the messages, not from when this looks.
		time.Sleep(200 * time.Millisecond)
	}
	b.StopTimer()
	// The server's peak resident memory, read while it still runs: the
	// receiver and the chat platforms here, and Postgres and RabbitMQ,
	// are not counted.
	peak, peakErr := peakmem.RSS(s.cmd.Process.Pid)
	// A stopped server has finished every send under way: a late double
	// has arrived by then.
	s.stop()

	received := map[int]time.Time{} // post number -> first receipt
	ids := map[string]bool{}
	doubled := 0
	var first, last time.Time
	for _, m := range receiver.Messages() {
		data, _ := m.JSON["data"].(map[string]any)
		post, _ := data["post"].(map[string]any)
		u, _ := post["url"].(string)
		n, err := strconv.Atoi(u[strings.LastIndex(u, "/")+1:])
		if err != nil || n < 0 || n >= requests*deliveryBatch {
			b.Fatalf("a message about no post of the run: %s", m.Body)
		}
		if _, seen := received[n]; seen || ids[m.DeliveryID] {
			doubled++
			continue
		}
		ids[m.DeliveryID] = true
		received[n] = m.ReceivedAt
		if m.ReceivedAt.After(last) {
			last = m.ReceivedAt
		}
		if first.IsZero() || m.ReceivedAt.Before(first) {
			first = m.ReceivedAt
		}
	}
	scored := deliveryScoreTimes(b, dbURL)
	var total, toScore, toSend []float64
	lost := 0
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	for i, at := range answered {
		for j := 0; j < deliveryBatch && !at.IsZero(); j++ {
			n := i*deliveryBatch + j
			got, ok := received[n]
			if !ok {
				lost++
				continue
			}
			total = append(total, ms(got.Sub(at)))
			if sc, ok := scored[strconv.Itoa(n)]; ok {
				toScore = append(toScore, ms(sc.Sub(at)))
				toSend = append(toSend, ms(got.Sub(sc)))
			}
		}
	}
	if len(total) == 0 {
		b.Fatalf("no message arrived; logs:\n%s", s.logs)
	}
	pct := func(v []float64, p int) float64 {
		if len(v) == 0 {
			return 0
		}
		slices.Sort(v)
		return v[len(v)*p/100]
	}
	b.ReportMetric(float64(want)/ingested.Seconds(), "posts/s")
	// The rate of deliveries while they arrive, from the first to the
	// last: counted from the start of the ingest instead, it would stay
	// under the offered rate by the last message's latency however fast
	// the service.
	if len(received) > 1 {
		b.ReportMetric(float64(len(received)-1)/last.Sub(first).Seconds(), "deliveries/s")
	}
	b.ReportMetric(pct(total, 50), "p50-ms")
	b.ReportMetric(pct(total, 99), "p99-ms")
	b.ReportMetric(float64(lost), "lost")
	b.ReportMetric(float64(doubled), "doubled")
	b.ReportMetric(pct(toScore, 50), "score-p50-ms")
	b.ReportMetric(pct(toSend, 50), "send-p50-ms")
	b.ReportMetric(pct(toSend, 99), "send-p99-ms")
	b.ReportMetric(float64(failed.Load()), "failed-requests")
	b.ReportMetric(float64(late.Load()), "late-requests")
	if peakErr != nil {
		b.Logf("no peak-RSS: %v", peakErr)
	} else {
		peakmem.Report(b, "peak-RSS", peak)
	}
	if n := receiver.Refused(); n > 0 {
		b.Errorf("%d messages failed the receiver's checks", n)
	}
	if lost > 0 || doubled > 0 {
		b.Errorf("webhook: %d messages lost and %d doubled", lost, doubled)
	}
	if chat != nil {
		chat.report(b, answered, requests, c.strong)
	}
}

// deliveryScoreTimes reads when each post's match was scored, by
// external id.
func deliveryScoreTimes(b *testing.B, url string) map[string]time.Time {
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

// benchChat is Slack's incoming webhooks and ntfy in one process, each
// answering at once in its real shape (Slack: 200 "ok",
// https://api.slack.com/messaging/webhooks; ntfy: 200 and the message as
// JSON, https://docs.ntfy.sh/publish/#publish-as-json). A channel sends a
// second's matches as one message, listing the strongest and counting
// the rest ("and K more"), so each message covers the posts it links to
// and the K it counts. It notes the messages each service took, when
// each listed post first came, the posts each message covers, and every
// post listed twice.
type benchChat struct {
	srv      *httptest.Server
	mu       sync.Mutex
	received map[string]map[int]time.Time // by service, listed post number -> first receipt
	messages map[string]int               // by service
	covered  map[string]int               // by service: listed and counted
	first    map[string]time.Time         // by service: the first message's receipt
	last     map[string]time.Time         // and the last's
	twice    int                          // listed posts already listed in an earlier message of the service
	foreign  int                          // messages about no post of the run
}

// benchPost finds a post's number in a message: its address,
// https://x.com/ada/status/N, is in every message's link to it.
var benchPost = regexp.MustCompile(`x\.com/ada/status/(\d+)`)

// benchMore finds the count of matches a message does not list.
var benchMore = regexp.MustCompile(`and (\d+) more`)

func newBenchChat(b *testing.B) *benchChat {
	c := &benchChat{received: map[string]map[int]time.Time{"slack": {}, "ntfy": {}}, messages: map[string]int{}, covered: map[string]int{},
		first: map[string]time.Time{}, last: map[string]time.Time{}}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
		service := "ntfy"
		if strings.HasPrefix(r.URL.Path, "/services/") {
			service = "slack"
		}
		listed := map[int]bool{}
		for _, m := range benchPost.FindAllSubmatch(body, -1) {
			if n, err := strconv.Atoi(string(m[1])); err == nil {
				listed[n] = true
			}
		}
		more := 0
		if m := benchMore.FindSubmatch(body); m != nil {
			more, _ = strconv.Atoi(string(m[1]))
		}
		c.mu.Lock()
		if len(listed) == 0 && more == 0 {
			c.foreign++
		}
		c.messages[service]++
		c.covered[service] += len(listed) + more
		if c.first[service].IsZero() {
			c.first[service] = at
		}
		c.last[service] = at
		for n := range listed {
			if _, seen := c.received[service][n]; seen {
				c.twice++
				continue
			}
			c.received[service][n] = at
		}
		c.mu.Unlock()
		if service == "slack" {
			_, _ = io.WriteString(w, "ok")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"sPs71M8A2T","event":"message","topic":"earshot-bench-topic"}`)
	}))
	b.Cleanup(c.srv.Close)
	return c
}

// count is the matches the messages so far cover, over both channels.
func (c *benchChat) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.covered["slack"] + c.covered["ntfy"]
}

// report gives the channels' figures beside the webhook's: the messages
// each took and how many a second, the matches covered (listed and
// counted) against those the channels want, lost and doubled, and the
// time from the ingest answer to the receipt of the listed ones. A
// match lost or doubled, a post under the channels' min_score listed,
// or a message about no post of the run fails the benchmark.
func (c *benchChat) report(b *testing.B, answered []time.Time, requests int, strong func(n int) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var lat []float64
	lost, doubled, unwanted, msgs := 0, c.twice, 0, 0
	var rate float64
	for _, service := range []string{"slack", "ntfy"} {
		want := 0
		for i, at := range answered {
			for j := 0; j < deliveryBatch && !at.IsZero(); j++ {
				n := i*deliveryBatch + j
				got, ok := c.received[service][n]
				if !strong(n) {
					if ok {
						unwanted++
					}
					continue
				}
				want++
				if ok {
					lat = append(lat, float64(got.Sub(at).Microseconds())/1000)
				}
			}
		}
		lost += max(want-c.covered[service], 0)
		doubled += max(c.covered[service]-want, 0)
		msgs += c.messages[service]
		if span := c.last[service].Sub(c.first[service]).Seconds(); c.messages[service] > 1 && span > 0 {
			rate += float64(c.messages[service]-1) / span / 2 // the two channels' mean
		}
	}
	b.ReportMetric(float64(msgs), "channel-messages")
	b.ReportMetric(rate, "channel-messages/s")
	b.ReportMetric(float64(c.covered["slack"]+c.covered["ntfy"]), "channel-matches")
	if len(lat) > 0 {
		slices.Sort(lat)
		b.ReportMetric(lat[len(lat)/2], "channel-listed-p50-ms")
	}
	b.ReportMetric(float64(lost), "channel-lost")
	b.ReportMetric(float64(doubled), "channel-doubled")
	if lost > 0 || doubled > 0 {
		b.Errorf("channels: %d matches lost and %d doubled (%d listed twice)", lost, doubled, c.twice)
	}
	if c.foreign > 0 {
		b.Errorf("%d channel messages about no post of the run (of %d requests)", c.foreign, requests)
	}
	if unwanted > 0 {
		b.Errorf("%d channel messages list posts under the channels' min_score", unwanted)
	}
}
