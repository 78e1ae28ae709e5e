// Package reddit reads the newest posts and comments of a subreddit
// (ports.RedditSource) from reddit's JSON listings, and from a public
// archive mirror when reddit refuses or fails.
//
// # Reading
//
// One Read fetches /r/NAME/new.json and /r/NAME/comments.json (limit=100,
// raw_json=1 so text comes without HTML entities), following each
// listing's after cursor page by page until it reaches posts older than
// since, or MaxPages pages. Nothing is filtered by phrase here: the caller
// matches locally, once per community however many phrases watch it.
//
// With a client id and secret, reads use an application-only OAuth token
// (client_credentials grant, cached until a minute before it expires and
// replaced at once on a 401) against the OAuth host; without them, reads
// are anonymous against BaseURL. Every request carries the configured
// User-Agent, which reddit requires to be descriptive.
//
// # Budget
//
// Reddit allows about 10 requests a minute anonymously and 100 with OAuth.
// Requests are spaced by at least a minute divided by that budget (6 s
// anonymous, 0.6 s with OAuth), so the app, which calls Read for one
// community after another during a cycle, spreads the cycle's reads over
// time instead of bursting. When an answer says the budget is spent
// (X-Ratelimit-Remaining below 1) the next request waits until
// X-Ratelimit-Reset seconds have passed; a Retry-After header is honoured
// the same way. Waits honour ctx. A wait longer than one polling cycle
// (Config.Interval) is not sat out: reddit counts as failing and the mirror
// is read, so one stingy answer cannot hold up the whole poll.
//
// # Mirror
//
// On 403, 429, 5xx, a time-out or a 200 whose body is not a JSON listing
// (reddit's block page is HTML), and likewise on any other failure but a
// 404 (a transport error, a refused token, a budget wait longer than a
// cycle), the whole read of that community and window is made from the
// mirror instead, so one read has one source: Arctic Shift
// (/api/posts/search, /api/comments/search) or PullPush
// (/reddit/search/submission/, /reddit/search/comment/), both answering
// {"data": [...]} with reddit's own field names. Posts are keyed by
// reddit's fullname (t3_ + id, t1_ + id) from every source, so a post read
// from reddit and later from the mirror is the same post. The mirrors' text
// search is stemmed and is never used: only the subreddit and time window
// are asked for. The mirror is not paced: it is read only when reddit
// fails, two or a few requests per community.
//
// Posts whose author or text is [deleted] or [removed], or that have a
// removed_by_category, are skipped. The whole text is kept (up to
// reddit's own 40,000 characters) so a phrase near the end still
// matches; the store cuts what a match keeps. A 404 from reddit (no such community) is reported as
// core.KindNotFound without asking the mirror.
package reddit

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Defaults of Config.
const (
	DefaultBaseURL  = "https://www.reddit.com"
	DefaultOAuthURL = "https://oauth.reddit.com"
	DefaultInterval = 10 * time.Minute
	DefaultTimeout  = 30 * time.Second // of the default HTTP client
)

// The mirror APIs Config.MirrorAPI accepts.
const (
	MirrorArcticShift = "arcticshift"
	MirrorPullPush    = "pullpush"
)

// MaxPages bounds the pages read from one listing in one Read, so a busy
// community or a long gap since the last read costs a bounded number of
// requests. Older posts beyond it are not read.
const MaxPages = 10

// pageSize is the most reddit and both mirrors hand out per request.
const pageSize = 100

// maxBody bounds one answer. A full page of long self posts is a few MB.
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

	HTTPClient *http.Client                                     // default: a client with DefaultTimeout
	Logger     *slog.Logger                                     // default: slog.Default()
	Now        func() time.Time                                 // default: time.Now
	Sleep      func(ctx context.Context, d time.Duration) error // default: a timer that ends early with ctx
}

// Source reads subreddits from reddit or its mirror. It is safe for
// concurrent use; concurrent reads share one request budget.
type Source struct {
	base, oauthURL string
	ua             string
	tokens         *tokens // nil for anonymous reads
	mirror         *mirror // nil when no mirror is set
	maxWait        time.Duration
	pace           *pacer
	client         *http.Client
	log            *slog.Logger
	now            func() time.Time
	sleep          func(context.Context, time.Duration) error

	mu      sync.Mutex
	failing bool // reddit failed on the last read; logged on change only
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
	if s.client == nil {
		s.client = &http.Client{Timeout: DefaultTimeout}
	}
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
	switch {
	case id != "" && secret != "":
		s.tokens = &tokens{url: tokenURL, id: id, secret: secret, ua: s.ua, client: s.client, now: s.now}
		s.pace = newPacer(oauthPerMinute)
	case id != "" || secret != "":
		return nil, core.Errorf(core.KindInvalid, "EARSHOT_REDDIT_CLIENT_ID and EARSHOT_REDDIT_CLIENT_SECRET must be set together")
	default:
		s.pace = newPacer(anonymousPerMinute)
	}

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
		s.mirror = &mirror{url: u, api: api}
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

// Read implements ports.RedditSource.
func (s *Source) Read(ctx context.Context, community string, since time.Time) (ports.RedditRead, error) {
	name := strings.ToLower(strings.TrimSpace(community))
	if !validCommunity(name) {
		return ports.RedditRead{}, core.Errorf(core.KindInvalid, "community must be 1 to 21 letters, digits or underscores")
	}
	posts, rerr := s.readReddit(ctx, name, since)
	if rerr == nil {
		s.setFailing(false, name, nil)
		s.log.Debug("read", "community", name, "source", core.SourceReddit, "posts", len(posts))
		return ports.RedditRead{Posts: posts, Source: core.SourceReddit}, nil
	}
	if err := ctx.Err(); err != nil {
		return ports.RedditRead{}, core.Wrap(core.KindUnavailable, err, "reading r/"+name+" stopped")
	}
	var f *failure
	if errors.As(rerr, &f) && f.status == http.StatusNotFound {
		return ports.RedditRead{}, core.Errorf(core.KindNotFound, "r/%s does not exist on reddit", name)
	}
	s.setFailing(true, name, rerr)
	if s.mirror == nil {
		return ports.RedditRead{}, core.Wrap(core.KindUnavailable, cause(rerr), fmt.Sprintf("r/%s: reddit %s; no mirror set", name, rerr))
	}
	posts, merr := s.readMirror(ctx, name, since)
	if merr != nil {
		if err := ctx.Err(); err != nil {
			return ports.RedditRead{}, core.Wrap(core.KindUnavailable, err, "reading r/"+name+" stopped")
		}
		return ports.RedditRead{}, core.Wrap(core.KindUnavailable, errors.Join(cause(rerr), cause(merr)),
			fmt.Sprintf("r/%s: reddit %s; mirror %s", name, rerr, merr))
	}
	s.log.Debug("read", "community", name, "source", core.SourceMirror, "posts", len(posts), "reddit", rerr.Error())
	return ports.RedditRead{Posts: posts, Source: core.SourceMirror}, nil
}

// setFailing logs when reddit starts or stops failing, not at every read:
// while reddit blocks the service, every community of every cycle would
// repeat the same line.
func (s *Source) setFailing(failing bool, community string, err error) {
	s.mu.Lock()
	changed := s.failing != failing
	s.failing = failing
	s.mu.Unlock()
	switch {
	case changed && failing:
		s.log.Warn("reddit read failed; reading the mirror until reddit answers again",
			"community", community, "reason", err.Error(), "mirror", s.mirror != nil, "cause", causeText(err))
	case changed:
		s.log.Info("reddit answers again", "community", community)
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

// readReddit reads both listings of community from reddit.
func (s *Source) readReddit(ctx context.Context, community string, since time.Time) ([]ports.RedditPost, error) {
	var out []ports.RedditPost
	for _, listing := range []string{"new", "comments"} {
		posts, err := s.readListing(ctx, community, listing, since)
		if err != nil {
			return nil, err
		}
		out = append(out, posts...)
	}
	return newestFirst(out), nil
}

// readListing follows one listing page by page until it reaches posts made
// at or before since, the last page, or MaxPages. A zero since reads one
// page: the first look at a community takes its newest posts, not its
// history.
func (s *Source) readListing(ctx context.Context, community, listing string, since time.Time) ([]ports.RedditPost, error) {
	var out []ports.RedditPost
	after := ""
	for range MaxPages {
		q := url.Values{"limit": {strconv.Itoa(pageSize)}, "raw_json": {"1"}}
		if after != "" {
			q.Set("after", after)
		}
		p, err := s.redditPage(ctx, "/r/"+community+"/"+listing+".json", q)
		if err != nil {
			return nil, err
		}
		older := false
		for _, it := range p.items {
			created := it.CreatedUTC.time()
			if !since.IsZero() && !created.IsZero() && !created.After(since) {
				// A pinned post can be old and still head a listing; only
				// ordinary posts say the rest of the listing is older.
				if !it.Stickied {
					older = true
				}
				continue
			}
			if rp, ok := it.post(community); ok {
				out = append(out, rp)
			}
		}
		if older || since.IsZero() || p.after == "" || len(p.items) == 0 {
			break
		}
		after = p.after
	}
	return out, nil
}

// redditPage fetches one page of a listing, within the budget. A 401 on
// an OAuth read drops the token and tries once more with a fresh one.
func (s *Source) redditPage(ctx context.Context, path string, q url.Values) (page, error) {
	for attempt := 0; ; attempt++ {
		wait, ok := s.pace.reserve(s.now(), s.maxWait)
		if !ok {
			return page{}, &failure{reason: fmt.Sprintf("rate limited for %s", wait.Round(time.Second))}
		}
		if wait > 0 {
			if err := s.sleep(ctx, wait); err != nil {
				return page{}, err
			}
		}
		base, token := s.base, ""
		if s.tokens != nil {
			var err error
			if token, err = s.tokens.get(ctx); err != nil {
				return page{}, err
			}
			base = s.oauthURL
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path+"?"+q.Encode(), nil)
		if err != nil {
			return page{}, &failure{reason: "request could not be built", cause: err}
		}
		req.Header.Set("User-Agent", s.ua)
		req.Header.Set("Accept", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "bearer "+token)
		}
		status, body, err := s.do(req)
		if err != nil {
			return page{}, err
		}
		if status == http.StatusUnauthorized && s.tokens != nil && attempt == 0 {
			s.tokens.drop(token)
			continue
		}
		if status < 200 || status > 299 {
			return page{}, &failure{reason: fmt.Sprintf("http %d", status), status: status}
		}
		p, err := decodeListing(body)
		if err != nil {
			if errors.Is(err, errNotListing) {
				return page{}, &failure{reason: "answer is not a listing", status: status}
			}
			return page{}, &failure{reason: "answer is not JSON", status: status, cause: err}
		}
		return p, nil
	}
}

// do sends req to reddit, feeds the rate-limit headers to the pacer, and
// reads the body.
func (s *Source) do(req *http.Request) (int, []byte, error) {
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, transportFailure("", err)
	}
	defer resp.Body.Close()
	s.pace.observe(s.now(), resp.Header)
	body, err := readBody(resp.Body)
	if err != nil {
		return 0, nil, err
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
