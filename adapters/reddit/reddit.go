// Package reddit reads the newest posts and comments of subreddits
// (ports.RedditSource): from reddit's JSON listings through OAuth or
// keyless, from reddit's Atom feeds, and from a public archive when reddit
// refuses or fails.
//
// # Reading
//
// One Read reads one listing (new or comments) of up to
// ports.MaxRedditGroup communities in one merged listing
// (/r/a+b+c/new.json, or /r/a+b+c/new/.rss), limit=100 a page, following
// the after cursor until the oldest post seen is at or before every
// community's since, or MaxPages pages. It says, per community, which span
// of time it saw whole (ports.RedditCover), so the caller moves a
// checkpoint only over what was read. Nothing is filtered by phrase.
//
// The ways, in order: reddit's JSON through OAuth (application-only
// token, client_credentials grant, against the OAuth host) when a client
// id and secret are set; keyless JSON against BaseURL; keyless Atom feeds
// against BaseURL; the archive. A way that refuses (403, 5xx, a time-out,
// an HTML block page, an answer of the wrong shape) rests across reads and
// cycles, so a known refusal costs no request: keyless JSON for
// RefusedRest (reddit blocks it for server addresses, so it is tried
// again rarely), OAuth and the feeds for most of one Interval, at least a
// minute, so reddit's return shows within a cycle. A 429 rests every way
// on that budget until the time it names (Retry-After, or
// X-Ratelimit-Reset), and so does a failure that names one (a 503 in
// maintenance). The archive is read when every way of reddit's
// refused, failed or rests.
//
// Some refusals may be the communities' own as well as the address's:
// reddit answers a private or quarantined community's feed with a 403 and
// an HTML page, as it answers a blocked address, and a 451 withholds one
// community. Such a refusal (a 403 without reddit's JSON reason, a 451,
// an answer of the wrong shape) of communities the way answered within a
// day is a change at the address: the way rests at once, and forgets
// that answer, so a community that just closed costs one rest, once.
// Otherwise the communities are held as suspect, and a suspect's other
// listing passes the way over. At the fourth refused with no answer
// between, the way asks once, for one item, communities it answered
// lately (a control read, paced and counted as any request): answered,
// the suspects were closed, and the way stays open; refused, or with none
// answered lately to ask (keyless JSON, blocked for most server
// addresses, answers none; a single watched community), the way rests.
// So closed communities read one after the other, however many, do not
// rest the way for everyone, and a block first seen on communities the
// way has not answered lately costs up to four requests more per rest
// (three without a control read). Once the way answered others after
// them, the suspects' refusals are their own:
// their next refusal so is core.KindNotFound ("reddit says the community
// is not readable (feed: http 403)"), for a day, and rests nothing.
//
// # Budget
//
// Reddit allows about 10 requests a minute keyless (KeylessPerMinute;
// less for some addresses) and 100 with OAuth (the keyless ways share one
// budget). Requests are spaced by a minute divided by the budget, and no
// closer than X-Ratelimit-Reset divided by X-Ratelimit-Remaining;
// Remaining below 1 holds requests until Reset. A 429 naming no time
// halves the budget, down to one request a minute. A read waits for its slot
// (honouring ctx) unless the slot is after the query's deadline or more
// than Interval away: then nothing is read, the archive is not asked, and
// the error is core.KindRateLimited, so the caller keeps those communities
// for later. Pacing never sends a read to the archive.
//
// # Archive
//
// Arctic Shift (/api/posts/search, /api/comments/search) or PullPush
// (/reddit/search/submission/, /reddit/search/comment/), one community at
// a time (their subreddit parameter takes one name), both answering
// {"data": [...]} with reddit's field names. Its requests are paced by a
// budget of its own (MirrorPerMinute; MirrorBurst at once after a quiet
// spell), as reddit's are, and wait for their slot on the same terms. A
// 429 rests the archive until the time it names (Retry-After, trusted up
// to a day), or, naming none, for the rest of a refused OAuth or feed way
// with its budget halved; while it rests it is not asked. A read that
// meets the archive's budget or a 429 part way
// keeps the communities it read whole and leaves the others uncovered,
// for the next cycle; one that read none fails, core.KindRateLimited for
// the budget (nothing was sent) and core.KindUnavailable for a rest. An archive copies reddit
// late, so a read from it covers a community only up to the newest item
// it holds (its high-water mark), and the lag is reported. Its text search
// is stemmed and never used. Posts are keyed by reddit's fullname (t3_,
// t1_) from every source, so overlapping reads never double a post.
//
// Posts whose author or text is [deleted] or [removed], or that have a
// removed_by_category, are skipped. The whole text is kept (up to
// reddit's own 40,000 characters); the store cuts what a match keeps. A
// 404 from reddit, or its redirect to the community search (both say no
// such community), is core.KindNotFound, without the archive.
package reddit

import (
	"cmp"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/redditjson"
)

// Defaults of Config.
const (
	DefaultBaseURL  = "https://www.reddit.com"
	DefaultOAuthURL = "https://oauth.reddit.com"
	DefaultInterval = 10 * time.Minute
	DefaultTimeout  = 30 * time.Second // of the default HTTP client
	// DefaultRefusedRest is how long keyless JSON that refused (a block
	// page, 403, 5xx, a time-out) is left alone before it is tried again.
	DefaultRefusedRest = time.Hour
)

// The mirror APIs Config.MirrorAPI accepts.
const (
	MirrorArcticShift = "arcticshift"
	MirrorPullPush    = "pullpush"
)

// MaxPages bounds the pages read from one listing in one Read, so a busy
// group or a long gap since the last read costs a bounded number of
// requests; reddit's own listings end near 1,000 items anyway. What lies
// beyond is reported as not covered.
const MaxPages = 10

// pageSize is the most reddit and both mirrors hand out per request.
const pageSize = 100

// maxBody bounds one answer. A full page of long self posts is a few MB.
// A feed is held to the smaller maxFeedBody (feed.go).
const maxBody = 16 << 20

// Config configures a Source. The first block is the operator's settings;
// the second is for tests and the composition root, and defaults sensibly.
type Config struct {
	BaseURL      string        // EARSHOT_REDDIT_BASE_URL; DefaultBaseURL when empty
	OAuthURL     string        // DefaultOAuthURL when empty; where OAuth reads go
	TokenURL     string        // BaseURL + /api/v1/access_token when empty
	ClientID     string        // EARSHOT_REDDIT_CLIENT_ID; with ClientSecret, reads use OAuth
	ClientSecret string        // EARSHOT_REDDIT_CLIENT_SECRET; never logged
	UserAgent    string        // EARSHOT_REDDIT_USER_AGENT, e.g. server:earshot:1.2.0 (by /u/NAME)
	MirrorURL    string        // EARSHOT_REDDIT_MIRROR_URL; empty: no mirror
	MirrorAPI    string        // EARSHOT_REDDIT_MIRROR_API: MirrorArcticShift (default) or MirrorPullPush
	Interval     time.Duration // EARSHOT_REDDIT_INTERVAL; the longest single wait for reddit's budget
	// KeylessPerMinute is EARSHOT_REDDIT_KEYLESS_PER_MINUTE, the keyless
	// budget (JSON and feeds together); DefaultKeylessPerMinute when 0.
	KeylessPerMinute int
	// RefusedRest is EARSHOT_REDDIT_REFUSED_REST, how long keyless JSON
	// that refused is left alone; DefaultRefusedRest when 0.
	RefusedRest time.Duration
	// MirrorPerMinute is the archive's budget, in requests a minute;
	// DefaultMirrorPerMinute when 0.
	MirrorPerMinute int

	HTTPClient *http.Client                                     // default: a client with DefaultTimeout
	Logger     *slog.Logger                                     // default: slog.Default()
	Now        func() time.Time                                 // default: time.Now
	Sleep      func(ctx context.Context, d time.Duration) error // default: a timer that ends early with ctx
}

// Source reads subreddits from reddit or its archive. It is safe for
// concurrent use; concurrent reads share the request budgets.
type Source struct {
	base, oauthURL string
	ua             string
	tokens         *tokens // nil for keyless reads
	mirror         *mirror // nil when no archive is set
	maxWait        time.Duration
	shortRest      time.Duration // the rest of OAuth and the feeds, and of a 429 that names no time
	ways           []*way        // reddit's ways, most preferred first
	client         *http.Client
	log            *slog.Logger
	now            func() time.Time
	sleep          func(context.Context, time.Duration) error
}

var _ ports.RedditSource = (*Source)(nil)

// New returns a Source for cfg. KindInvalid for a malformed address, an
// unknown mirror API, or a client id without a secret (or the reverse).
// Nothing is requested until Read.
func New(cfg Config) (*Source, error) {
	s := &Source{
		ua:      strings.TrimSpace(cfg.UserAgent),
		maxWait: cfg.Interval,
		client:  cfg.HTTPClient,
		log:     cfg.Logger,
		now:     cfg.Now,
		sleep:   cfg.Sleep,
	}
	var err error
	if s.base, err = baseURL("EARSHOT_REDDIT_BASE_URL", cfg.BaseURL, DefaultBaseURL); err != nil {
		return nil, err
	}
	if s.oauthURL, err = baseURL("reddit OAuth URL", cfg.OAuthURL, DefaultOAuthURL); err != nil {
		return nil, err
	}
	tokenURL, err := baseURL("reddit token URL", cfg.TokenURL, s.base+"/api/v1/access_token")
	if err != nil {
		return nil, err
	}
	if s.ua == "" {
		// Reddit throttles empty and generic agents hardest.
		s.ua = "server:earshot:unknown"
	}
	if s.maxWait <= 0 {
		s.maxWait = DefaultInterval
	}
	perMinute, refusedRest := cfg.KeylessPerMinute, cfg.RefusedRest
	if perMinute <= 0 {
		perMinute = DefaultKeylessPerMinute
	}
	if refusedRest <= 0 {
		refusedRest = DefaultRefusedRest
	}
	// OAuth and the feeds rest most of one cycle, at least a minute: asked
	// again once a cycle, so reddit's return shows within one, while a
	// short interval does not ask a refusing reddit at every read.
	s.shortRest = min(max(s.maxWait*9/10, time.Minute), refusedRest)
	if s.client == nil {
		s.client = &http.Client{Timeout: DefaultTimeout}
	}
	s.client = stopAtCommunitySearch(s.client)
	if s.log == nil {
		s.log = slog.Default()
	}
	s.log = s.log.With("component", "reddit")
	if s.now == nil {
		s.now = time.Now
	}
	if s.sleep == nil {
		s.sleep = sleep
	}

	id, secret := strings.TrimSpace(cfg.ClientID), strings.TrimSpace(cfg.ClientSecret)
	keyless := newPacer(perMinute)
	switch {
	case id != "" && secret != "":
		s.tokens = &tokens{url: tokenURL, id: id, secret: secret, ua: s.ua, client: s.client, now: s.now}
		s.ways = append(s.ways, &way{via: ports.RedditViaOAuth, pace: newPacer(oauthPerMinute), rest: s.shortRest, remaining: -1})
	case id != "" || secret != "":
		return nil, core.Errorf(core.KindInvalid, "EARSHOT_REDDIT_CLIENT_ID and EARSHOT_REDDIT_CLIENT_SECRET must be set together")
	}
	s.ways = append(s.ways,
		&way{via: ports.RedditViaJSON, pace: keyless, rest: refusedRest, remaining: -1},
		&way{via: ports.RedditViaFeed, pace: keyless, rest: s.shortRest, remaining: -1})

	api := strings.ToLower(strings.TrimSpace(cfg.MirrorAPI))
	if api == "" {
		api = MirrorArcticShift
	}
	if api != MirrorArcticShift && api != MirrorPullPush {
		return nil, core.Errorf(core.KindInvalid, "EARSHOT_REDDIT_MIRROR_API must be %s or %s", MirrorArcticShift, MirrorPullPush)
	}
	if strings.TrimSpace(cfg.MirrorURL) != "" {
		u, err := baseURL("EARSHOT_REDDIT_MIRROR_URL", cfg.MirrorURL, "")
		if err != nil {
			return nil, err
		}
		perMinute := cfg.MirrorPerMinute
		if perMinute <= 0 {
			perMinute = DefaultMirrorPerMinute
		}
		pace := newPacer(perMinute)
		pace.burst = MirrorBurst
		s.mirror = &mirror{url: u, api: api, pace: pace}
	}
	return s, nil
}

// baseURL checks an http(s) address and drops a trailing slash. The value
// is never quoted in the error: a mirror address may carry credentials.
func baseURL(name, v, def string) (string, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		v = def
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return "", core.Errorf(core.KindInvalid, "%s must be an http or https address", name)
	}
	return strings.TrimRight(v, "/"), nil
}

// stopAtCommunitySearch returns a copy of c that does not follow a
// redirect to reddit's community search: that redirect is reddit's way of
// saying no such community, and its answer, a listing of communities,
// would read as an empty listing. Other redirects are followed as c would.
func stopAtCommunitySearch(c *http.Client) *http.Client {
	out := *c
	next := c.CheckRedirect
	out.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if strings.HasPrefix(req.URL.Path, redditjson.CommunitySearch) {
			return http.ErrUseLastResponse
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &out
}

// redirectedToSearch reports whether resp is a redirect to reddit's
// community search, left unfollowed by stopAtCommunitySearch.
func redirectedToSearch(resp *http.Response) bool {
	if resp.StatusCode < 300 || resp.StatusCode > 399 {
		return false
	}
	u, err := resp.Location()
	return err == nil && strings.HasPrefix(u.Path, redditjson.CommunitySearch)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// validCommunity accepts what reddit accepts in a subreddit path. core
// normalises stored communities more strictly; this check only keeps the
// path well formed.
func validCommunity(s string) bool {
	if s == "" || len(s) > 21 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// failure is why one source could not be read. reason is brief and safe to
// show ("http 503", "timeout", "not JSON"); cause, when set, is the
// underlying error, for logs.
type failure struct {
	reason string
	status int
	cause  error
	closed string // the reason reddit gave for refusing the community itself ("private"), if it gave one
}

// closedReason is the reason a 403 in reddit's JSON gives for refusing a
// community itself (private, quarantined, gated, ...): `{"reason":
// "private", "message": "Forbidden", "error": 403}`, as reddit answers a
// private community. A block of the address answers an HTML page or no
// reason, and is "".
func closedReason(status int, body []byte) string {
	if status != http.StatusForbidden {
		return ""
	}
	return redditjson.Reason(body)
}

func (f *failure) Error() string { return f.reason }
func (f *failure) Unwrap() error { return f.cause }

func cause(err error) error {
	var f *failure
	if errors.As(err, &f) {
		return f.cause
	}
	return err
}

func causeText(err error) string {
	if c := cause(err); c != nil {
		return c.Error()
	}
	return ""
}

// transportFailure names a failed exchange: a time-out (the client's, not
// the caller's ctx, which Read checks first) or any other transport error.
func transportFailure(what string, err error) *failure {
	reason := "connection failed"
	var ne net.Error
	if (errors.As(err, &ne) && ne.Timeout()) || errors.Is(err, context.DeadlineExceeded) {
		reason = "timeout"
	}
	if what != "" {
		reason = what + " " + reason
	}
	return &failure{reason: reason, cause: err}
}

// do sends req to reddit, feeds the rate-limit headers to the pacer of
// the way it went, and reads the body.
func (s *Source) do(req *http.Request, w *way) (int, []byte, error) {
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, transportFailure("", err)
	}
	defer resp.Body.Close()
	w.pace.observe(s.now(), resp.Header)
	if r, ok := seconds(resp.Header.Get("X-Ratelimit-Remaining")); ok {
		w.setRemaining(r)
	}
	r := io.Reader(resp.Body)
	if w.via == ports.RedditViaFeed {
		// Past maxFeedBody decodeFeed refuses it; one byte more says so.
		r = io.LimitReader(r, maxFeedBody+1)
	}
	body, err := readBody(r)
	if err != nil {
		return 0, nil, err
	}
	if redirectedToSearch(resp) {
		return http.StatusNotFound, body, nil
	}
	return resp.StatusCode, body, nil
}

func readBody(r io.Reader) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r, maxBody+1))
	if err != nil {
		return nil, transportFailure("", err)
	}
	if len(body) > maxBody {
		return nil, &failure{reason: "answer too large"}
	}
	return body, nil
}

// newestFirst drops repeated fullnames (a post edited between two pages
// can show up on both) and orders posts newest first; equal times are
// ordered by fullname so the order never depends on the source.
func newestFirst(posts []ports.RedditPost) []ports.RedditPost {
	seen := make(map[string]bool, len(posts))
	out := posts[:0]
	for _, p := range posts {
		if seen[p.Post.ExternalID] {
			continue
		}
		seen[p.Post.ExternalID] = true
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b ports.RedditPost) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return cmp.Compare(b.Post.ExternalID, a.Post.ExternalID)
	})
	return out
}
