// Package x is the helper's x reader: the newest posts for each of an
// owner's x phrases, read from x's live search as the signed-in web
// client sees it. A real browser (helper/browser) opens
// /search?q=<phrase>&f=live with the owner's cookies, through the
// operator's proxy, and the reader parses the SearchTimeline GraphQL
// answers that the page itself receives.
//
// Why a browser rather than x's private API called directly: the web
// client's GraphQL calls carry query ids, feature flags and a signed
// transaction header that x changes every few weeks, and a call that
// misses one is refused or flags the account. The page makes those calls
// correctly by definition; only the answer's shape is ours to follow,
// and it lives in one parser (timeline.go).
package x

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/helper/browser"
)

// Defaults of a Reader.
const (
	// DefaultBaseURL is x's web address.
	DefaultBaseURL = "https://x.com"
	// DefaultPace is the least time between two SearchTimeline pages of
	// one account, a search's first page or a later one alike: one every
	// 20 seconds, three a minute, about what a person searching and
	// scrolling asks for, and 45 per 15 minutes, under the web client's
	// own budget (50 SearchTimeline calls per 15 minutes per account),
	// which counts every page.
	DefaultPace = 20 * time.Second
	// DefaultPages is the most pages read per search: the first, and two
	// more when the posts not seen yet go on past it (about 20 a page).
	DefaultPages = 3
)

// Reader reads x for one account. One Reader serves one account: its
// pacing is that account's. It reads with Browsers, the browser it shares
// with the helper's other readers, or else keeps one of its own across
// reads (started at the first, restarted when the proxy changes) that
// Close stops.
type Reader struct {
	BaseURL string        // "" is DefaultBaseURL; a mirror or a test server
	Pace    time.Duration // 0 is DefaultPace; below zero does not pace (tests)
	// Pages is the most SearchTimeline pages read per search; 0 is
	// DefaultPages.
	Pages int
	// Browsers is the browser shared with the helper's other readers,
	// which its owner closes; nil starts one of the reader's own.
	Browsers *browser.Shared
	// Browser are the options of the reader's own browser; its Proxy is
	// set from each read's In.
	Browser browser.Options
	// Now and Sleep are the clock; nil uses the system's. Tests replace them.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error

	next time.Time
	own  *browser.Shared
	// phrases are the phrases of the current (or last) read, sorted;
	// searched those of them it searched to the end. The others are
	// UnreadPhrases: not come to, or the search the read stopped in.
	phrases  []string
	searched map[string]bool
}

var (
	_ helper.PhraseUnreader = (*Reader)(nil)
	_ helper.Keeper         = (*Reader)(nil)
)

// searched are the texts Read searches for phrases: trimmed, sorted,
// each once.
func searched(ps []helper.Phrase) []string {
	var phrases []string
	for _, p := range ps {
		if t := strings.TrimSpace(p.Phrase); t != "" {
			phrases = append(phrases, t)
		}
	}
	slices.Sort(phrases)
	return slices.Compact(phrases)
}

// Keeps implements helper.Keeper: the searches' checkpoints of phrases.
func (r *Reader) Keeps(phrases []helper.Phrase, _ func(string) string) func(string) bool {
	live := map[string]bool{}
	for _, ph := range searched(phrases) {
		live[Key(ph)] = true
	}
	return func(k string) bool { return !strings.HasPrefix(k, Key("")) || live[k] }
}

// UnreadPhrases implements helper.PhraseUnreader: the phrases of the
// read that it has not searched to the end, x having refused the search
// (a login wall, a challenge, a rate limit), the read having stopped in
// it (no answer, the context ended, emit failed) or not having come to
// them yet; nil when it searched them all. The server leaves their
// lastCheckedAt where it was.
func (r *Reader) UnreadPhrases() []string {
	var out []string
	for _, p := range r.phrases {
		if !r.searched[p] {
			out = append(out, p)
		}
	}
	return out
}

// Platform implements helper.Reader.
func (r *Reader) Platform() string { return "x" }

// Key is the checkpoint key of a phrase's search.
func Key(phrase string) string { return "x:search:" + strings.ToLower(phrase) }

// Close stops the reader's own browser; a shared one is its owner's.
func (r *Reader) Close() error {
	if r.own == nil {
		return nil
	}
	return r.own.Close()
}

// Read implements helper.Reader: one live search per phrase, the posts
// newer than the phrase's checkpoint, oldest first. A search reads on
// past its first page as the web client does, by scrolling the page to
// its end so that it asks the next page with the last one's Bottom
// cursor, until a page shows a post at or before the checkpoint, a page
// has no posts, or Pages pages were read. Each page waits the pace: x
// counts every page against the account's search budget.
func (r *Reader) Read(ctx context.Context, in helper.In, emit func(helper.Post, helper.Mark) error) error {
	phrases := searched(in.Phrases)
	r.phrases, r.searched = phrases, make(map[string]bool, len(phrases))
	for _, ph := range phrases {
		if err := r.search(ctx, in, ph, emit); err != nil {
			return err
		}
		r.searched[ph] = true
	}
	return nil
}

func (r *Reader) base() string {
	if r.BaseURL == "" {
		return DefaultBaseURL
	}
	return strings.TrimRight(r.BaseURL, "/")
}

// browser returns the running browser, started for in's proxy.
func (r *Reader) browser(ctx context.Context, in helper.In) (*browser.Browser, error) {
	bs := r.Browsers
	if bs == nil {
		if r.own == nil {
			r.own = &browser.Shared{Options: r.Browser}
		}
		bs = r.own
	}
	px := in.Proxy
	switch {
	case !in.ViaProxy:
		px = nil
	case px == nil:
		// A browser started without a proxy reads from the owner's own
		// address: refused, as PlatformClient refuses for HTTP.
		return nil, errors.New("the read is to go through the proxy, but none is given (In.Proxy): x is not read directly")
	}
	return bs.Browser(ctx, px)
}

func (r *Reader) search(ctx context.Context, in helper.In, phrase string, emit func(helper.Post, helper.Mark) error) error {
	if err := r.pace(ctx); err != nil {
		return err
	}
	b, err := r.browser(ctx, in)
	if err != nil {
		return fmt.Errorf("x: %w", err)
	}
	key := Key(phrase)
	since := in.Since(key)
	req := browser.Request{
		URL:     r.base() + "/search?" + url.Values{"q": {phrase}, "f": {"live"}, "src": {"typed_query"}}.Encode(),
		Cookies: xCookies(in.Session),
		Match:   func(u string) bool { return strings.Contains(u, "/SearchTimeline") },
		Done:    done,
		More:    func(p *browser.Page) func(context.Context) error { return r.more(p, since) },
	}
	if h := hostOf(r.base()); h != "x.com" && !strings.HasSuffix(h, ".x.com") {
		// A mirror or a test server: the owner's x cookies go to its host.
		req.CookieURL = r.base()
	}
	pg, err := b.Read(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if rep := in.Report(ctx, helper.Signal{NoResponse: true}, 0); rep != nil {
			return rep
		}
		return fmt.Errorf("x: searching %q: no answer (through the proxy: %t): %w", phrase, in.ViaProxy, err)
	}
	sig, wait, tweets := classify(pg, r.now())
	if err := in.Report(ctx, sig, wait); err != nil {
		return err
	}
	if !sig.OK() {
		return fmt.Errorf("x: searching %q: %s", phrase, describe(sig))
	}
	slices.SortFunc(tweets, func(a, b tweet) int { return compareIDs(a.ID, b.ID) })
	tweets = slices.CompactFunc(tweets, func(a, b tweet) bool { return a.ID == b.ID })
	for _, t := range tweets {
		if since != "" && compareIDs(t.ID, since) <= 0 {
			continue
		}
		p := helper.Post{
			ExternalID: t.ID,
			AuthorName: t.Handle,
			Body:       []string{t.Text},
			URL:        "https://x.com/" + t.Handle + "/status/" + t.ID,
			Likes:      t.Likes,
			Comments:   t.Replies,
		}
		if !t.PostedAt.IsZero() {
			p.PostedAt = t.PostedAt.UnixMilli()
		}
		if err := emit(p, helper.Mark{Key: key, Value: t.ID}); err != nil {
			return err
		}
	}
	return nil
}

// done says when a search page has shown what it will: a search answer
// since the last scroll, or a page that is not the search (a login wall,
// a challenge).
func done(p *browser.Page) bool {
	return len(p.Answers) > p.Scrolls || !strings.HasPrefix(pathOf(p.URL), "/search") || p.Status != 200 || challenged(p.Document)
}

// more says whether a search reads its next page, and returns the wait
// before it: the pace, as for a search of its own. It reads on while the
// last page answered normally with posts all newer than since and named
// a next page, and fewer than Pages pages were read.
func (r *Reader) more(p *browser.Page, since string) func(context.Context) error {
	if len(p.Answers) == 0 || len(p.Answers) >= cmp.Or(r.Pages, DefaultPages) ||
		!strings.HasPrefix(pathOf(p.URL), "/search") || p.Status != 200 {
		return nil
	}
	last := p.Answers[len(p.Answers)-1]
	if last.Status != 200 || last.Body == nil {
		return nil
	}
	pg, err := parseSearch(last.Body)
	if err != nil || pg.errCode != 0 || len(pg.tweets) == 0 || pg.bottom == "" {
		return nil
	}
	if since != "" && slices.ContainsFunc(pg.tweets, func(t tweet) bool { return compareIDs(t.ID, since) <= 0 }) {
		return nil
	}
	return r.pace
}

// challengeMarkers are what x's challenge pages carry: Arkose Labs'
// FunCaptcha on /account/access and its interstitials, Cloudflare's
// challenge platform in front of the site.
var challengeMarkers = []string{"arkoselabs", "funcaptcha", "captcha", "challenge-platform", "cf-chl"}

func challenged(doc []byte) bool {
	d := strings.ToLower(string(doc))
	for _, m := range challengeMarkers {
		if strings.Contains(d, m) {
			return true
		}
	}
	return false
}

// classify turns what the page saw into the signal reported, the wait x
// named, and the posts of its search answers. The server names the
// issue (core/health): a login wall is reported as the 401 x's API
// answers an expired session with; a redirect elsewhere by its address;
// a challenge page by its HTML; a refused search answer by its status
// and body.
func classify(p *browser.Page, now time.Time) (helper.Signal, time.Duration, []tweet) {
	path := pathOf(p.URL)
	doc := clip(p.Document)
	switch {
	case strings.HasPrefix(path, "/i/flow/login"), strings.HasPrefix(path, "/login"), strings.HasPrefix(path, "/i/flow/logout"):
		return helper.Signal{Status: 401, Body: "x sent the search page to its login wall (" + path + ")"}, 0, nil
	case path != "" && !strings.HasPrefix(path, "/search"):
		return helper.Signal{Status: p.Status, Location: p.URL, Body: doc}, 0, nil
	case p.Status != 200 && p.Status != 0:
		return helper.Signal{Status: p.Status, Body: doc}, waitNamed(p.Header, now), nil
	}
	var tweets []tweet
	answered := false
	for _, a := range p.Answers {
		if a.Status != 200 {
			return helper.Signal{Status: a.Status, Body: clip(a.Body)}, waitNamed(a.Header, now), nil
		}
		if a.Body == nil {
			continue
		}
		pg, err := parseSearch(a.Body)
		if err != nil || pg.errCode != 0 {
			body := clip(a.Body)
			if pg.errCode == 0 && json.Valid(a.Body) {
				// JSON in another shape holds people's posts, not a block
				// page's words: one speaking of a captcha would be read
				// by the server's markers as x's captcha.
				body = ""
			}
			return helper.Signal{Status: 200, Code: pg.errCode, Body: body, Unusable: true}, waitNamed(a.Header, now), nil
		}
		answered = true
		tweets = append(tweets, pg.tweets...)
	}
	switch {
	case answered:
		return helper.Signal{Status: 200}, 0, tweets
	case challenged(p.Document):
		return helper.Signal{Status: p.Status, Body: doc, Unusable: true}, 0, nil
	case p.CutOff != "":
		return helper.Signal{NoResponse: true}, 0, nil
	}
	return helper.Signal{Status: p.Status, Body: doc, Unusable: true}, 0, nil
}

// waitNamed is the wait a refusal names: x's x-rate-limit-reset (the
// Unix time the budget resets), else Retry-After; 0 for none.
func waitNamed(h map[string][]string, now time.Time) time.Duration {
	get := func(k string) string {
		for hk, v := range h {
			if strings.EqualFold(hk, k) && len(v) > 0 {
				return strings.TrimSpace(v[0])
			}
		}
		return ""
	}
	if n, err := strconv.ParseInt(get("x-rate-limit-reset"), 10, 64); err == nil && n > 0 {
		if d := time.Unix(n, 0).Sub(now); d > 0 {
			return min(d.Round(time.Second), maxNamedWait)
		}
	}
	if n, err := strconv.Atoi(get("Retry-After")); err == nil && n > 0 {
		// Bounded before the product, which past 292 years wraps round
		// to a negative wait or a short one.
		return time.Duration(min(n, int(maxNamedWait/time.Second))) * time.Second
	}
	return 0
}

// maxNamedWait bounds a wait x names, as the server bounds the account's
// retryAfter (core/health.MaxRetryAfter): a longer one is no plan.
const maxNamedWait = 24 * time.Hour

func describe(s helper.Signal) string {
	switch {
	case s.NoResponse:
		return "no answer"
	case s.Location != "":
		return "sent elsewhere (" + s.Location + ")"
	case s.Unusable:
		return "the page showed no search answer"
	}
	return fmt.Sprintf("answered %d", s.Status)
}

func clip(b []byte) string { return string(b[:min(len(b), helper.MaxSignalBody)]) }

func pathOf(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return pu.Path
}

func hostOf(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return strings.ToLower(pu.Hostname())
}

// xCookies keeps the jar's x cookies (x.com and the older twitter.com).
func xCookies(jar []core.Cookie) []core.Cookie {
	var out []core.Cookie
	for _, c := range jar {
		if d := strings.ToLower(strings.TrimPrefix(c.Domain, ".")); d == "x.com" || strings.HasSuffix(d, ".x.com") {
			out = append(out, c)
		}
	}
	return out
}

// compareIDs orders x's ids (decimal snowflakes, newer larger).
func compareIDs(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

// pace waits until the account's next search may go.
func (r *Reader) pace(ctx context.Context) error {
	return helper.Pace(ctx, &r.next, cmp.Or(r.Pace, DefaultPace), r.Now, r.Sleep)
}

func (r *Reader) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}
