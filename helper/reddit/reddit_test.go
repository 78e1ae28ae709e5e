package reddit_test

import (
	"context"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/helper/reddit"
)

// clock is a clock the test moves: sleeping moves it.
type clock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.slept = append(c.slept, d)
	return nil
}

func (c *clock) move(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

type rig struct {
	earshot *earshotFake
	reddit  *redditFake
	proxy   *forwardProxy
	clock   *clock
	runner  *helper.Runner
	state   string
}

func newRig(t testing.TB) *rig {
	g := &rig{earshot: newEarshot(t), reddit: newReddit(t), proxy: newProxy(t, "op", "s3cret"),
		clock: &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}, state: filepath.Join(t.TempDir(), "state.json")}
	g.earshot.set(func(f *earshotFake) {
		f.proxy = g.proxy.info(true)
		f.phrases = []helper.Phrase{{Phrase: "acme", Community: "golang"}, {Phrase: "acme crm", Community: "sales"}}
	})
	c, err := helper.NewClient(g.earshot.srv.URL, "svc_ingest_test", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Sleep = g.clock.Sleep
	st, err := helper.OpenState(g.state, g.earshot.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	g.runner = &helper.Runner{Client: c, State: st, Now: g.clock.Now,
		Readers: []helper.Reader{&reddit.Reader{BaseURL: g.reddit.srv.URL, Now: g.clock.Now, Sleep: g.clock.Sleep}}}
	return g
}

// A pass reads each listing of the watched communities, grouped in one
// request, through the operator's proxy and nothing else, and sends the
// posts keyed by fullname with title, time and community; checkpoints
// move, and the next pass sends nothing new twice.
func TestPassReadsThroughTheProxy(t *testing.T) {
	g := newRig(t)
	g.reddit.add("new", thing{kind: "t3", id: "p1", sub: "golang", title: "Any alternative to Acme?", text: "asking &amp; hoping", created: 1767225500})
	g.reddit.add("comments", thing{kind: "t1", id: "c1", sub: "sales", text: "acme crm is fine", created: 1767225550})
	g.earshot.set(func(f *earshotFake) {
		f.jar = `[{"domain":".reddit.com","name":"reddit_session","value":"abc","path":"/"},{"domain":".example.com","name":"other","value":"no"}]`
	})

	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	posts, reports, _ := g.earshot.snapshot()
	p, c := posts["t3_p1"], posts["t1_c1"]
	if p.Title != "Any alternative to Acme?" || p.Body[0] != "asking & hoping" || p.Community != "golang" || p.PostedAt != 1767225500000 ||
		p.URL != "https://www.reddit.com/r/golang/comments/p1/x/" {
		t.Errorf("post sent as %+v", p)
	}
	if c.Title != "" || c.Body[0] != "acme crm is fine" || c.Community != "sales" || c.PostedAt != 1767225550000 {
		t.Errorf("comment sent as %+v", c)
	}
	if len(posts) != 2 {
		t.Errorf("posts sent: %v", posts)
	}
	if n, f := g.reddit.count(), g.proxy.forwarded.Load(); n != 2 || f != 2 {
		t.Errorf("reddit got %d requests, the proxy forwarded %d; want 2 and 2", n, f)
	}
	for _, r := range g.reddit.requests {
		if r.URL.Path != "/r/golang+sales/new.json" && r.URL.Path != "/r/golang+sales/comments.json" {
			t.Errorf("asked for %s", r.URL)
		}
	}
	for _, ck := range g.reddit.cookies {
		if ck != "reddit_session=abc" {
			t.Errorf("cookie sent %q, want only reddit's", ck)
		}
	}
	if len(reports) != 1 || !reports[0].ViaProxy || reports[0].Status != 200 {
		t.Errorf("reports %+v, want one healthy answer via the proxy", reports)
	}
	// Paced: the second request waited the default pace.
	if len(g.clock.slept) != 1 || g.clock.slept[0] != reddit.DefaultPace {
		t.Errorf("waits %v, want one of %s", g.clock.slept, reddit.DefaultPace)
	}

	// The next pass: the same answers, nothing new stored, one new post sent.
	g.reddit.add("new", thing{kind: "t3", id: "p2", sub: "golang", title: "acme again", text: "x", created: 1767225600})
	g.clock.move(time.Hour)
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	posts, reports, _ = g.earshot.snapshot()
	if len(posts) != 3 || len(reports) != 1 {
		t.Fatalf("after the second pass: %d posts, %d reports; want 3 and 1 (the same healthy answer is not reported again)", len(posts), len(reports))
	}
	st, _ := helper.OpenState(g.state, g.earshot.srv.URL)
	if v := st.Get(reddit.Key("new", "golang")); v != "1767225600" {
		t.Errorf("checkpoint of r/golang's new posts %q", v)
	}
}

// A proxy that fails stops reading: the pass fails and nothing reaches
// reddit directly.
func TestFailingProxyStopsReading(t *testing.T) {
	g := newRig(t)
	g.proxy.srv.Close()
	err := g.runner.Pass(context.Background())
	if err == nil {
		t.Fatal("the pass succeeded without its proxy")
	}
	if n := g.reddit.count(); n != 0 {
		t.Fatalf("reddit got %d requests directly", n)
	}
	_, reports, _ := g.earshot.snapshot()
	if len(reports) != 1 || !reports[0].NoResponse || !reports[0].ViaProxy {
		t.Fatalf("reports %+v, want one with no answer through the proxy", reports)
	}
}

// GET /proxy answering 503 stops the helper before any platform request;
// reading without the proxy is refused while the deployment requires it.
func TestNoProxyStops(t *testing.T) {
	g := newRig(t)
	g.earshot.set(func(f *earshotFake) { f.proxy = nil })
	if err := g.runner.Pass(context.Background()); !errors.Is(err, helper.ErrNoProxy) {
		t.Fatalf("pass: %v, want ErrNoProxy", err)
	}
	g.earshot.set(func(f *earshotFake) { f.proxy = g.proxy.info(true) })
	g.runner.Direct = true
	if err := g.runner.Pass(context.Background()); !errors.Is(err, helper.ErrDirectRefused) {
		t.Fatalf("direct pass with required: true: %v", err)
	}
	if n := g.reddit.count(); n != 0 {
		t.Fatalf("reddit got %d requests", n)
	}
}

// A login wall is reported once; reading pauses until the session
// stored on the server changes; the normal answer after is reported as
// the recovery.
func TestLoginWallPausesUntilANewSession(t *testing.T) {
	g := newRig(t)
	g.earshot.set(func(f *earshotFake) { f.jar = `[{"domain":".reddit.com","name":"reddit_session","value":"old"}]` })
	g.reddit.answer = func(w http.ResponseWriter, r *http.Request) bool {
		if strings.Contains(r.Header.Get("Cookie"), "old") {
			w.Header().Set("Location", "https://www.reddit.com/login/?dest=%2Fr%2Fgolang")
			w.WriteHeader(http.StatusFound)
			return true
		}
		return false
	}
	var p *helper.Paused
	if err := g.runner.Pass(context.Background()); !errors.As(err, &p) || !p.NeedsOwner || p.Action != "reconnect" {
		t.Fatalf("pass: %v, want a pause for the owner", err)
	}
	if err := g.runner.Pass(context.Background()); !errors.As(err, &p) {
		t.Fatalf("second pass: %v", err)
	}
	if n := g.reddit.count(); n != 1 {
		t.Fatalf("reddit got %d requests, want 1: the account waits for its owner", n)
	}
	g.earshot.set(func(f *earshotFake) { f.jar = `[{"domain":".reddit.com","name":"reddit_session","value":"new"}]` })
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatalf("pass with a new session: %v", err)
	}
	_, reports, _ := g.earshot.snapshot()
	if len(reports) != 2 || reports[0].Status != 401 || !strings.Contains(reports[0].Body, "/login/") || !reports[1].OK() {
		t.Fatalf("reports %+v, want the login wall (as a 401 naming it) then the recovery", reports)
	}
}

// What the server makes of each refusal reddit's reader reports: a login
// wall is session_expired (the session sent no longer opens the
// listing, and new cookies are the remedy), as x's and facebook's
// readers report theirs, not logged_out; a 429 is rate_limited.
func TestServerNamesWhatRedditAnswered(t *testing.T) {
	for _, tc := range []struct {
		name   string
		answer func(w http.ResponseWriter)
		want   health.Issue
	}{
		{"login wall", func(w http.ResponseWriter) {
			w.Header().Set("Location", "https://www.reddit.com/login/?dest=%2Fr%2Fgolang")
			w.WriteHeader(http.StatusFound)
		}, health.SessionExpired},
		{"401", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"message": "Unauthorized", "error": 401}`))
		}, health.SessionExpired},
		{"429", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "300")
			w.WriteHeader(http.StatusTooManyRequests)
		}, health.RateLimited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newRig(t)
			g.reddit.answer = func(w http.ResponseWriter, r *http.Request) bool { tc.answer(w); return true }
			var p *helper.Paused
			if err := g.runner.Pass(context.Background()); !errors.As(err, &p) {
				t.Fatalf("pass: %v, want a pause", err)
			}
			_, reports, _ := g.earshot.snapshot()
			if len(reports) != 1 {
				t.Fatalf("reports %+v", reports)
			}
			s := reports[0]
			got := health.Classify(health.Signal{Platform: core.Reddit, Status: s.Status, Code: s.Code, Subcode: s.Subcode,
				Location: s.Location, Body: s.Body, NoResponse: s.NoResponse})
			if got != tc.want {
				t.Errorf("the server names %+v %q, want %q", s, got, tc.want)
			}
			if tc.want == health.RateLimited && s.RetryAfter != 300 {
				t.Errorf("reported retryAfter %d, want the 300 s reddit named", s.RetryAfter)
			}
		})
	}
}

// A 429 is reported with what reddit answered, and the account waits the
// time reddit named before it is read again.
func TestRateLimitWaitsWhatRedditNamed(t *testing.T) {
	g := newRig(t)
	limited := true
	g.reddit.answer = func(w http.ResponseWriter, r *http.Request) bool {
		if limited {
			w.Header().Set("Retry-After", "300")
			w.WriteHeader(http.StatusTooManyRequests)
			return true
		}
		return false
	}
	var p *helper.Paused
	if err := g.runner.Pass(context.Background()); !errors.As(err, &p) || p.NeedsOwner || !p.Until.Equal(g.clock.Now().Add(300*time.Second)) {
		t.Fatalf("pass: %v, want a pause of 300s", err)
	}
	limited = false
	g.clock.move(299 * time.Second)
	if err := g.runner.Pass(context.Background()); !errors.As(err, &p) || g.reddit.count() != 1 {
		t.Fatalf("pass within the wait: %v, %d requests", err, g.reddit.count())
	}
	g.clock.move(2 * time.Second)
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatalf("pass after the wait: %v", err)
	}
	_, reports, _ := g.earshot.snapshot()
	if len(reports) != 2 || reports[0].Status != 429 || !reports[1].OK() {
		t.Fatalf("reports %+v", reports)
	}
}

// A batch the server does not accept moves no checkpoint: it is sent
// again, as it was, and the server skips what it has.
func TestCheckpointMovesOnlyAfterTheBatchIsAccepted(t *testing.T) {
	g := newRig(t)
	g.reddit.add("new", thing{kind: "t3", id: "p1", sub: "golang", title: "acme", text: "x", created: 1767225500})
	g.runner.Client.Attempts = 2
	g.earshot.set(func(f *earshotFake) { f.ingestFail = 2 })
	if err := g.runner.Pass(context.Background()); err == nil {
		t.Fatal("the pass succeeded while every batch was refused")
	}
	st, _ := helper.OpenState(g.state, g.earshot.srv.URL)
	if v := st.Get(reddit.Key("new", "golang")); v != "" {
		t.Fatalf("checkpoint moved to %q though no batch was accepted", v)
	}
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if posts, _, _ := g.earshot.snapshot(); len(posts) != 1 {
		t.Fatalf("posts %v", posts)
	}
	st, _ = helper.OpenState(g.state, g.earshot.srv.URL)
	if v := st.Get(reddit.Key("new", "golang")); v != "1767225500" {
		t.Fatalf("checkpoint %q after the accepted batch", v)
	}
}

// An answer over the bound is cut off before it is parsed.
func TestHugeAnswerIsCutOff(t *testing.T) {
	g := newRig(t)
	g.reddit.answer = func(w http.ResponseWriter, r *http.Request) bool {
		w.Write([]byte(`{"kind":"Listing","data":{"children":[`))
		chunk := []byte(strings.Repeat(" ", 1<<20))
		for i := 0; i < 17; i++ { // past the 16 MB bound
			if _, err := w.Write(chunk); err != nil {
				break
			}
		}
		return true
	}
	err := g.runner.Pass(context.Background())
	if err == nil || !strings.Contains(err.Error(), "cut off") {
		t.Fatalf("pass: %v, want the answer cut off", err)
	}
}

// A post whose creation time is not plausible (milliseconds where
// seconds are due, say) is not sent and moves no checkpoint: a
// checkpoint years ahead would hide every later post of the community.
func TestImplausibleTimeMovesNoCheckpoint(t *testing.T) {
	g := newRig(t)
	g.reddit.add("new", thing{kind: "t3", id: "p1", sub: "golang", title: "acme", text: "x", created: 1767225500})
	g.reddit.add("new", thing{kind: "t3", id: "p2", sub: "golang", title: "acme", text: "in ms", created: 1767225500000})
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if posts, _, _ := g.earshot.snapshot(); len(posts) != 1 || posts["t3_p1"].Body == nil {
		t.Fatalf("posts %v, want only t3_p1", posts)
	}
	g.reddit.add("new", thing{kind: "t3", id: "p3", sub: "golang", title: "acme", text: "later", created: 1767225600})
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if posts, _, _ := g.earshot.snapshot(); posts["t3_p3"].Body == nil {
		t.Fatalf("the post after one of an implausible time was not sent: %v", posts)
	}
}

// A wait reddit names is taken at most a day, as the server's reader and
// the account's view take it: an absurd one does not stall the helper
// for years.
func TestNamedWaitsAreBounded(t *testing.T) {
	g := newRig(t)
	g.reddit.answer = func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("X-Ratelimit-Remaining", "0")
		w.Header().Set("X-Ratelimit-Reset", "315360000")
		return false
	}
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, d := range g.clock.slept {
		if d > 24*time.Hour {
			t.Errorf("waited %s before the next request", d)
		}
	}
	g.reddit.answer = func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Retry-After", "315360000")
		w.WriteHeader(http.StatusTooManyRequests)
		return true
	}
	var p *helper.Paused
	if err := g.runner.Pass(context.Background()); !errors.As(err, &p) || p.Until.After(g.clock.Now().Add(24*time.Hour)) {
		t.Fatalf("pass: %v, want a pause of at most a day", err)
	}
}

// A post dated after the read (a mirror's wrong date) moves its
// checkpoint no further than the read: the posts made before that date
// are still sent.
func TestFutureDateMovesTheCheckpointToTheReadOnly(t *testing.T) {
	g := newRig(t)
	now := float64(g.clock.Now().Unix())
	g.reddit.add("new", thing{kind: "t3", id: "p1", sub: "golang", title: "acme", text: "from the future", created: now + 365*86400})
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	g.clock.move(time.Hour)
	g.reddit.add("new", thing{kind: "t3", id: "p2", sub: "golang", title: "acme", text: "an hour later", created: now + 3600})
	if err := g.runner.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	if posts, _, _ := g.earshot.snapshot(); posts["t3_p2"].Body == nil {
		t.Fatalf("the post after one dated in the future was not sent: %v", posts)
	}
}
