package x_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/helper/browser"
	"github.com/earshothq/earshot/helper/x"
)

// needBrowser skips with a one-line reason when there is no Chromium,
// unless EARSHOT_TEST_BROWSER is set (CI), where a missing one fails.
func needBrowser(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(browser.DefaultExecPath); err != nil {
		if os.Getenv("EARSHOT_TEST_BROWSER") != "" {
			t.Fatalf("EARSHOT_TEST_BROWSER is set but there is no Chromium at %s", browser.DefaultExecPath)
		}
		t.Skipf("no Chromium at %s (apt-get install -y chromium): browser test skipped", browser.DefaultExecPath)
	}
}

// report is one POST /account-status the reader asked for.
type report struct {
	sig  helper.Signal
	wait time.Duration
}

type harness struct {
	fake    *fakeX
	proxy   *forwardProxy
	r       *x.Reader
	mu      sync.Mutex
	reports []report
	since   map[string]string
	posts   []helper.Post
	marks   []helper.Mark
	now     time.Time
	sleeps  []time.Duration
}

func newHarness(t *testing.T) *harness {
	needBrowser(t)
	h := &harness{fake: newFakeX(t), proxy: newForwardProxy(t), since: map[string]string{}, now: time.Date(2026, 11, 26, 14, 10, 0, 0, time.UTC)}
	h.r = &x.Reader{
		BaseURL: h.fake.srv.URL,
		Browser: browser.Options{NoSandbox: os.Geteuid() == 0, Timeout: 30 * time.Second},
		Now:     func() time.Time { return h.now },
		Sleep: func(_ context.Context, d time.Duration) error {
			h.sleeps = append(h.sleeps, d)
			h.now = h.now.Add(d)
			return nil
		},
	}
	t.Cleanup(func() { h.r.Close() })
	return h
}

// jar is the owner's x session as core.ParseCookieJar keeps it.
var jar = []core.Cookie{
	{Domain: ".x.com", Name: "auth_token", Value: "owner-token", Path: "/", Secure: true, HTTPOnly: true},
	{Domain: ".x.com", Name: "ct0", Value: "csrf", Path: "/", Secure: true},
	{Domain: ".example.org", Name: "other", Value: "not-x"},
}

// read runs one Read; Report pauses on every answer that is not normal,
// as the account's view does for an issue.
func (h *harness) read(phrases ...string) error {
	var ps []helper.Phrase
	for _, p := range phrases {
		ps = append(ps, helper.Phrase{Phrase: p})
	}
	in := helper.In{
		Phrases:  ps,
		Session:  jar,
		ViaProxy: true,
		Proxy:    h.proxy.URL(),
		Since:    func(k string) string { return h.since[k] },
		Report: func(_ context.Context, s helper.Signal, wait time.Duration) error {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.reports = append(h.reports, report{s, wait})
			if !s.OK() {
				return &helper.Paused{Platform: "x", Issue: "seen", Until: h.now.Add(max(wait, helper.MinPause))}
			}
			return nil
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	return h.r.Read(ctx, in, func(p helper.Post, m helper.Mark) error {
		h.posts = append(h.posts, p)
		h.marks = append(h.marks, m)
		h.since[m.Key] = m.Value
		return nil
	})
}

func TestReadsSearchAsThePageReceivesItThroughTheProxy(t *testing.T) {
	h := newHarness(t)
	if err := h.read("earshot", "listening tool"); err != nil {
		t.Fatal(err)
	}
	// The fixture answers both searches with the same two posts.
	if len(h.posts) != 4 {
		t.Fatalf("posts: %+v", h.posts)
	}
	first := h.posts[0]
	want := helper.Post{ExternalID: "1861000000000000001", AuthorName: "grace_h", Body: []string{"earshot caught a thread I would have missed"},
		URL: "https://x.com/grace_h/status/1861000000000000001", Likes: 4, Comments: 0,
		PostedAt: time.Date(2026, 11, 26, 13, 59, 10, 0, time.UTC).UnixMilli()}
	if first.ExternalID != want.ExternalID || first.AuthorName != want.AuthorName || first.Body[0] != want.Body[0] || first.URL != want.URL || first.PostedAt != want.PostedAt {
		t.Errorf("oldest first: got %+v, want %+v", first, want)
	}
	second := h.posts[1]
	if second.AuthorName != "ada_builds" || second.Likes != 12 || second.Comments != 3 || second.URL != "https://x.com/ada_builds/status/1861000000000000002" {
		t.Errorf("the newer answer's screen_name under core: %+v", second)
	}
	if h.marks[1] != (helper.Mark{Key: x.Key("earshot"), Value: "1861000000000000002"}) {
		t.Errorf("mark: %+v", h.marks[1])
	}
	for _, r := range h.reports {
		if !r.sig.OK() {
			t.Errorf("a normal answer reported as %+v", r.sig)
		}
	}
	h.fake.mu.Lock()
	if len(h.fake.cookies) != 2 || h.fake.cookies[0] != "owner-token" || h.fake.queries[0] != "earshot|live" {
		t.Errorf("the search page saw cookies %v, queries %v", h.fake.cookies, h.fake.queries)
	}
	h.fake.mu.Unlock()
	// Each search read its first page and scrolled once more, to the end
	// of the results; every page after the first waited the default 20 s.
	if c := h.fake.Cursors(); strings.Join(c, ",") != ",DAACCgACGdy,,DAACCgACGdy" {
		t.Errorf("pages asked by cursor: %q", c)
	}
	if len(h.sleeps) != 3 || h.sleeps[0] != x.DefaultPace || h.sleeps[1] != x.DefaultPace || h.sleeps[2] != x.DefaultPace {
		t.Errorf("sleeps %v, want three of %s", h.sleeps, x.DefaultPace)
	}
	// Every request went through the proxy, which asked for and got its
	// credentials; none reached x around it.
	if h.fake.unmarked.Load() != 0 || h.proxy.forwarded.Load() != h.fake.served.Load() || h.fake.served.Load() < 4 {
		t.Errorf("x served %d, %d not through the proxy; the proxy forwarded %d", h.fake.served.Load(), h.fake.unmarked.Load(), h.proxy.forwarded.Load())
	}
	if h.proxy.refused.Load() == 0 {
		t.Errorf("the proxy never asked for credentials: the test does not cover the answer to its challenge")
	}

	// A second read past the checkpoints sends nothing again.
	h.posts = nil
	if err := h.read("earshot"); err != nil {
		t.Fatal(err)
	}
	if len(h.posts) != 0 {
		t.Errorf("read again: %+v", h.posts)
	}
}

func TestAccountHealthFromWhatThePageAnswers(t *testing.T) {
	h := newHarness(t)
	h.r.Pace = -1
	h.fake.reset = h.now.Add(7 * time.Minute).Unix()
	for _, tc := range []struct {
		mode  string
		check func(report) bool
		want  string
	}{
		{"login", func(r report) bool {
			return r.sig.Status == 401 && r.sig.Location == "" && strings.Contains(r.sig.Body, "/i/flow/login")
		},
			"a 401 (session_expired) naming the login wall"},
		{"checkpoint", func(r report) bool { return strings.HasSuffix(r.sig.Location, "/account/access") },
			"the redirect to /account/access"},
		{"captcha", func(r report) bool {
			return r.sig.Status == 200 && r.sig.Unusable && strings.Contains(r.sig.Body, "arkoselabs")
		}, "the Arkose captcha page's HTML (captcha_html)"},
		{"ratelimit", func(r report) bool { return r.sig.Status == 429 && r.wait == 7*time.Minute },
			"a 429 with the 7 minutes x-rate-limit-reset named"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			h.fake.mode.Store(tc.mode)
			h.reports, h.posts = nil, nil
			err := h.read("earshot")
			var p *helper.Paused
			if !errors.As(err, &p) {
				t.Fatalf("Read = %v, want the pause the view asks for", err)
			}
			if len(h.reports) != 1 || !tc.check(h.reports[0]) {
				t.Fatalf("reported %+v, want %s", h.reports, tc.want)
			}
			if len(h.posts) != 0 {
				t.Errorf("posts from a refused page: %+v", h.posts)
			}
		})
	}
	if h.fake.unmarked.Load() != 0 {
		t.Errorf("%d requests went around the proxy", h.fake.unmarked.Load())
	}
}

func ids(ps []helper.Post) string {
	var out []string
	for _, p := range ps {
		out = append(out, p.ExternalID)
	}
	return strings.Join(out, ",")
}

// New posts spread over two pages are all read, oldest first; the page
// that shows a post already seen is the last one asked for, and it
// waited the pace as a search of its own does.
func TestReadsPagesUntilASeenPost(t *testing.T) {
	h := newHarness(t)
	h.fake.allPages(t)
	h.since[x.Key("earshot")] = "1860000000000000011"
	if err := h.read("earshot"); err != nil {
		t.Fatal(err)
	}
	if got := ids(h.posts); got != "1860000000000000012,1861000000000000001,1861000000000000002" {
		t.Fatalf("posts %s", got)
	}
	if p := h.posts[0]; p.AuthorName != "linus_t" || p.Likes != 2 || p.Comments != 1 || p.URL != "https://x.com/linus_t/status/1860000000000000012" {
		t.Errorf("the second page's post: %+v", p)
	}
	if m := h.marks[len(h.marks)-1]; m != (helper.Mark{Key: x.Key("earshot"), Value: "1861000000000000002"}) {
		t.Errorf("last mark %+v", m)
	}
	if c := h.fake.Cursors(); strings.Join(c, ",") != ",DAACCgACGdy" {
		t.Errorf("pages asked by cursor: %q, want the first and second only", c)
	}
	if len(h.sleeps) != 1 || h.sleeps[0] != x.DefaultPace {
		t.Errorf("sleeps %v, want the second page to wait %s", h.sleeps, x.DefaultPace)
	}
	if len(h.reports) != 1 || !h.reports[0].sig.OK() {
		t.Errorf("reports %+v", h.reports)
	}
}

// With no post seen yet, a search reads at most Pages pages (3 by
// default), every one paced.
func TestReadsAtMostThePageCap(t *testing.T) {
	h := newHarness(t)
	h.fake.allPages(t)
	if err := h.read("earshot"); err != nil {
		t.Fatal(err)
	}
	if got := ids(h.posts); got != "1859000000000000011,1859000000000000012,1860000000000000011,1860000000000000012,1861000000000000001,1861000000000000002" {
		t.Fatalf("posts %s", got)
	}
	if c := h.fake.Cursors(); strings.Join(c, ",") != ",DAACCgACGdy,DAACCgACGdz" {
		t.Errorf("pages asked by cursor: %q, want the first three", c)
	}
	if len(h.sleeps) != 2 {
		t.Errorf("sleeps %v, want two of %s", h.sleeps, x.DefaultPace)
	}
	h.r.Pages = 1
	h.posts, h.since = nil, map[string]string{}
	if err := h.read("other"); err != nil {
		t.Fatal(err)
	}
	if c := h.fake.Cursors(); len(c) != 4 || len(h.posts) != 2 {
		t.Errorf("with Pages 1: cursors %q, %d posts", c, len(h.posts))
	}
}

// A later page that x refuses is reported as the first page's refusal
// is, and no post of the search is sent: the checkpoint stays, and the
// next read, after the pause, reads the search again from its first
// page rather than skip what the refused page held.
func TestRateLimitOnALaterPage(t *testing.T) {
	h := newHarness(t)
	h.fake.allPages(t)
	h.fake.reset = h.now.Add(5 * time.Minute).Unix()
	h.fake.mode.Store("ratelimit-later")
	err := h.read("earshot")
	var p *helper.Paused
	if !errors.As(err, &p) {
		t.Fatalf("Read = %v, want the pause", err)
	}
	// The reset x named is 5 minutes after the first page, which the
	// second followed by the pace.
	if len(h.reports) != 1 || h.reports[0].sig.Status != 429 || h.reports[0].wait != 5*time.Minute-x.DefaultPace {
		t.Fatalf("reports %+v, want the 429 with the wait to its reset", h.reports)
	}
	if len(h.posts) != 0 || h.since[x.Key("earshot")] != "" {
		t.Errorf("posts %s sent, checkpoint %q", ids(h.posts), h.since[x.Key("earshot")])
	}
	if c := h.fake.Cursors(); strings.Join(c, ",") != ",DAACCgACGdy" {
		t.Errorf("pages asked by cursor: %q", c)
	}
}

// An ad on the first page, older than the checkpoint, neither is sent nor
// ends the search: the second page, whose posts are new, is read too.
// The first page is testdata's search_timeline_promoted.json (its ad in
// the shape the README names).
func TestAnAdDoesNotEndTheSearch(t *testing.T) {
	h := newHarness(t)
	h.fake.allPages(t)
	ad, err := os.ReadFile("testdata/search_timeline_promoted.json")
	if err != nil {
		t.Fatal(err)
	}
	pages := maps.Clone(h.fake.pages.Load().(map[string][]byte))
	pages[""] = ad
	h.fake.pages.Store(pages)
	h.since[x.Key("earshot")] = "1860000000000000011"
	if err := h.read("earshot"); err != nil {
		t.Fatal(err)
	}
	if got := ids(h.posts); got != "1860000000000000012,1861000000000000001,1861000000000000002" {
		t.Errorf("posts %s, want the second page's new one and the first page's two, without the ad", got)
	}
	if c := h.fake.Cursors(); strings.Join(c, ",") != ",DAACCgACGdy" {
		t.Errorf("pages asked by cursor: %q, want the first and second", c)
	}
}
