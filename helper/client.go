package helper

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
)

// Errors a Client returns, to be matched with errors.Is.
var (
	// ErrUnauthorized: the server refused the ingest key (401): it is
	// wrong, revoked, or an API key. A helper stops on it.
	ErrUnauthorized = errors.New("the server refused the ingest key (401): it is wrong, revoked or not an ingest key; make a new one in the dashboard")
	// ErrNoProxy: GET /proxy answered 503, the deployment has no proxy,
	// and the spec says the helper must then stop.
	ErrNoProxy = errors.New("the deployment has no proxy (GET /proxy answered 503): a helper must not read without the operator's proxy, so it stops; ask the operator to set EARSHOT_PROXY_URL")
	// ErrNoSession: the owner has no session stored for the platform.
	ErrNoSession = errors.New("no session stored for this platform")
)

// MaxBatch is the most posts one POST /ingest carries.
const MaxBatch = 100

// maxAnswer bounds what is read of any answer of the server.
const maxAnswer = 4 << 20

// Defaults of the retries of a Client.
const (
	DefaultAttempts = 6                // tries of one request, the first included
	DefaultBackoff  = time.Second      // the first wait after a 5xx or a network error
	DefaultMaxWait  = 5 * time.Minute  // the longest wait between two tries
	defaultTimeout  = 60 * time.Second // one request's time-out
)

// Client speaks the helper protocol with one deployment and one ingest
// key. Its methods are safe for concurrent use. The key is kept
// unexported and never written into an error or a log line.
type Client struct {
	server string
	key    string
	http   *http.Client

	// Attempts, Backoff and MaxWait bound the retries of a request that
	// got a 429, a 503, another 5xx or no answer; zero values are the
	// defaults. A 429 and a 503 wait their Retry-After (at most MaxWait);
	// the others wait Backoff doubled each time, with full jitter.
	Attempts int
	Backoff  time.Duration
	MaxWait  time.Duration
	// Sleep waits d or until ctx ends; nil uses a timer. Tests replace it.
	Sleep func(ctx context.Context, d time.Duration) error

	mu   sync.Mutex
	last map[string]reported // POST /account-status, the last report per platform
}

type reported struct {
	key  string
	view AccountView
}

// NewClient returns a client of the deployment at server (its site
// address, as http(s)://host[:port]) with the ingest key. hc may be nil.
// The server is reached directly: the proxy is for the platforms.
func NewClient(server, key string, hc *http.Client) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(server, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("the server address %q is not an http(s) address", server)
	}
	key = strings.TrimSpace(key)
	if key == "" {
		return nil, errors.New("no ingest key")
	}
	if hc == nil {
		hc = &http.Client{Timeout: defaultTimeout}
	}
	return &Client{server: u.String(), key: key, http: hc, last: map[string]reported{}}, nil
}

// Phrase is one listening phrase: its text and, on reddit, the
// community it listens in.
type Phrase struct {
	Phrase    string `json:"phrase"`
	Community string `json:"community"`
}

// Phrases returns the owner's listening phrases on platform (GET
// /phrases). A server that sends only the spec's list of texts gives
// phrases without communities.
func (c *Client) Phrases(ctx context.Context, platform string) ([]Phrase, error) {
	var out struct {
		Phrases []string `json:"phrases"`
		Items   []Phrase `json:"items"`
	}
	if err := c.do(ctx, http.MethodGet, "/phrases?platform="+url.QueryEscape(platform), nil, &out); err != nil {
		return nil, err
	}
	if out.Items != nil {
		return out.Items, nil
	}
	ps := make([]Phrase, len(out.Phrases))
	for i, p := range out.Phrases {
		ps[i] = Phrase{Phrase: p}
	}
	return ps, nil
}

// Session returns the owner's cookie jar for platform (GET /session) as
// the server stored it; ErrNoSession when there is none.
func (c *Client) Session(ctx context.Context, platform string) (json.RawMessage, error) {
	var jar json.RawMessage
	err := c.do(ctx, http.MethodGet, "/session?platform="+url.QueryEscape(platform), nil, &jar)
	var se *StatusError
	if errors.As(err, &se) && se.Status == http.StatusNotFound {
		return nil, ErrNoSession
	}
	return jar, err
}

// SavedSession is PUT /session's answer: what the server kept.
type SavedSession struct {
	AccountID string `json:"accountId"`
	Platform  string `json:"platform"`
	Cookies   int    `json:"cookies"`
}

// SaveSession stores cookies as the owner's jar for platform (PUT
// /session), in the canonical form core.EncodeCookieJar writes: the
// session a browser holds after the owner solved a challenge in it.
func (c *Client) SaveSession(ctx context.Context, platform string, cookies []core.Cookie) (SavedSession, error) {
	var out SavedSession
	err := c.do(ctx, http.MethodPut, "/session?platform="+url.QueryEscape(platform), core.EncodeCookieJar(cookies), &out)
	return out, err
}

// ProxyInfo is GET /proxy's answer.
type ProxyInfo struct {
	Required bool `json:"required"`
	Proxy    struct {
		Server   string `json:"server"`
		Username string `json:"username"`
		Password string `json:"password"`
	} `json:"proxy"`
}

// Proxy returns the operator's proxy (GET /proxy); ErrNoProxy when the
// server answers 503 without Retry-After, which is not retried: the
// helper must stop. A 503 naming a Retry-After (a server at capacity, a
// reverse proxy during a deploy) and a 429 are waited and asked again,
// as every other request is: taken for "no proxy", they would stop a
// helper for good over a moment's unavailability.
func (c *Client) Proxy(ctx context.Context) (ProxyInfo, error) {
	var p ProxyInfo
	err := c.do(ctx, http.MethodGet, "/proxy", nil, &p)
	var se *StatusError
	if errors.As(err, &se) && se.Status == http.StatusServiceUnavailable && !se.busy {
		return ProxyInfo{}, ErrNoProxy
	}
	return p, err
}

// Post is one post as POST /ingest takes it.
type Post struct {
	ExternalID string   `json:"externalId"`
	AuthorName string   `json:"authorName"`
	Body       []string `json:"body"`
	URL        string   `json:"url"`
	Likes      int      `json:"likes"`
	Comments   int      `json:"comments"`
	Title      string   `json:"title,omitempty"`
	PostedAt   int64    `json:"postedAt,omitempty"` // ms since 1970
	Community  string   `json:"community,omitempty"`
}

// Count is n as a post's likes or comments: at least 0, since the server
// refuses a negative count, and at most 2^31-1, since a float past int's
// range converts to an unspecified number; NaN is 0.
func Count(n float64) int {
	if !(n > 0) {
		return 0
	}
	return int(min(n, 1<<31-1))
}

// IngestResult is POST /ingest's answer.
type IngestResult struct {
	AccountID string `json:"accountId"`
	Ingested  int    `json:"ingested"`
	Skipped   int    `json:"skipped"`
}

// Ingest sends one batch of at most MaxBatch posts (POST /ingest). A
// batch that got no answer, a 429, a 503 or another 5xx is sent again as
// it was, within the retry bounds: the server skips the posts it has, so
// a batch stored before its answer was lost is not stored twice.
func (c *Client) Ingest(ctx context.Context, platform string, posts []Post) (IngestResult, error) {
	return c.IngestUnread(ctx, platform, posts, nil)
}

// IngestUnread is Ingest of a reddit batch that names the communities
// its pass did not read (unreadCommunities): IngestBatch with those
// communities only.
func (c *Client) IngestUnread(ctx context.Context, platform string, posts []Post, unread []string) (IngestResult, error) {
	return c.IngestBatch(ctx, platform, posts, Unread{Communities: unread})
}

// Unread is what a batch names as not read by its pass, whose phrases
// the server then leaves as they were rather than record as read.
type Unread struct {
	// Communities are reddit communities (unreadCommunities): every
	// phrase in them.
	Communities []string
	// Phrases are the texts of phrases, as GET /phrases gave them
	// (unreadPhrases), on any platform.
	Phrases []string
}

// IngestBatch is Ingest of a batch that names what its pass did not
// read. At most core.MaxUnreadCommunities communities and
// core.MaxUnreadPhrases phrases are named: past that the rest are
// recorded as read, as every phrase was before the fields. A server
// older than a field ignores it, as it ignores every member it does not
// know, and records all as read.
func (c *Client) IngestBatch(ctx context.Context, platform string, posts []Post, u Unread) (IngestResult, error) {
	if len(posts) > MaxBatch {
		return IngestResult{}, fmt.Errorf("a batch holds at most %d posts, not %d", MaxBatch, len(posts))
	}
	if posts == nil {
		posts = []Post{}
	}
	body, err := json.Marshal(struct {
		Platform      string   `json:"platform"`
		Posts         []Post   `json:"posts"`
		Unread        []string `json:"unreadCommunities,omitempty"`
		UnreadPhrases []string `json:"unreadPhrases,omitempty"`
	}{platform, posts, u.Communities[:min(len(u.Communities), core.MaxUnreadCommunities)], u.Phrases[:min(len(u.Phrases), core.MaxUnreadPhrases)]})
	if err != nil {
		return IngestResult{}, err
	}
	var r IngestResult
	return r, c.do(ctx, http.MethodPost, "/ingest", body, &r)
}

// Signal is what a platform answered on the owner's behalf, as POST
// /account-status takes it.
type Signal struct {
	Platform   string `json:"platform"`
	Status     int    `json:"status,omitempty"`
	Code       int    `json:"code,omitempty"`
	Subcode    int    `json:"subcode,omitempty"`
	Location   string `json:"location,omitempty"`
	Body       string `json:"body,omitempty"` // the start of the answer
	NoResponse bool   `json:"noResponse,omitempty"`
	ViaProxy   bool   `json:"viaProxy"`
	// RetryAfter is the wait the platform named, in seconds; 0 for none.
	RetryAfter int `json:"retryAfter,omitempty"`
	// Unusable is set by a reader for an answer that was not what it
	// asked for, status 200 or not (a login page where JSON was due).
	Unusable bool `json:"-"`
}

// MaxSignalBody is the most of an answer's body a Signal carries, and
// MaxSignalLocation of its redirect target, in bytes of UTF-8: what the
// server takes.
const (
	MaxSignalBody     = 8 << 10
	MaxSignalLocation = 2048
)

// fit returns s as valid UTF-8 of at most n bytes, cut at a character's
// start. The server measures the text it decodes, in which each byte
// that is not UTF-8 (a page in Latin-1, an answer cut in the middle of a
// character) has become U+FFFD, three bytes: cutting the bytes alone
// could leave a report the server refuses.
func fit(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// OK reports whether s is a normal answer: 2xx, usable, with no redirect.
func (s Signal) OK() bool {
	return !s.NoResponse && !s.Unusable && s.Status >= 200 && s.Status < 300 && s.Location == ""
}

// key is what makes two signals the same state for reporting.
func (s Signal) key() string {
	if s.OK() {
		return "ok"
	}
	return fmt.Sprintf("%d/%d/%d/%t/%t", s.Status, s.Code, s.Subcode, s.NoResponse, s.Location != "")
}

// AccountView is POST /account-status's answer.
type AccountView struct {
	AccountID      *string `json:"accountId"`
	Platform       string  `json:"platform"`
	State          string  `json:"state"`
	Issue          *string `json:"issue"`
	Action         string  `json:"action"`
	RequiresAction bool    `json:"requiresAction"`
	// RetryAfter is how long the server decided the account waits, in
	// seconds from the report (the platform's wait, or the server's own
	// for a rate limit that named none); 0 for none, or from a server
	// older than the field.
	RetryAfter int `json:"retryAfter"`
}

// Report sends s (POST /account-status) when it differs from the last
// signal reported for its platform, and returns the account's view: the
// first answer, every change, and the recovery after a problem are sent;
// the same answer again is not, unless the Runner took the platform up
// again after a pause. sent says whether it went out.
func (c *Client) Report(ctx context.Context, s Signal) (view AccountView, sent bool, err error) {
	s.Body, s.Location = fit(s.Body, MaxSignalBody), fit(s.Location, MaxSignalLocation)
	k := s.key()
	c.mu.Lock()
	last, ok := c.last[s.Platform]
	c.mu.Unlock()
	if ok && last.key == k {
		return last.view, false, nil
	}
	body, err := json.Marshal(s)
	if err != nil {
		return AccountView{}, false, err
	}
	if err := c.do(ctx, http.MethodPost, "/account-status", body, &view); err != nil {
		return AccountView{}, false, err
	}
	c.mu.Lock()
	c.last[s.Platform] = reported{key: k, view: view}
	c.mu.Unlock()
	return view, true, nil
}

// forget drops the last report of platform, so that the next is sent
// whatever it says.
func (c *Client) forget(platform string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.last, platform)
}

// StatusError is an answer of the server other than 2xx, with the
// error body's code and message.
type StatusError struct {
	Method, Path string
	Status       int
	Code         string
	Message      string
	busy         bool // a 429 or 503 that named a Retry-After
}

func (e *StatusError) Error() string {
	if e.Status == http.StatusUnauthorized {
		return fmt.Sprintf("%s %s: %v (the server said: %s)", e.Method, e.Path, ErrUnauthorized, e.Message)
	}
	return fmt.Sprintf("%s %s: %d %s: %s", e.Method, e.Path, e.Status, e.Code, e.Message)
}

// Unwrap makes a 401 match ErrUnauthorized.
func (e *StatusError) Unwrap() error {
	if e.Status == http.StatusUnauthorized {
		return ErrUnauthorized
	}
	return nil
}

// do makes the request, retrying within the bounds, and decodes a 2xx
// answer into out.
func (c *Client) do(ctx context.Context, method, path string, body []byte, out any) error {
	attempts := c.Attempts
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	backoff := c.Backoff
	if backoff <= 0 {
		backoff = DefaultBackoff
	}
	maxWait := c.MaxWait
	if maxWait <= 0 {
		maxWait = DefaultMaxWait
	}
	for try := 1; ; try++ {
		wait, err := c.once(ctx, method, path, body, out)
		if err == nil {
			return nil
		}
		if wait < 0 || try >= attempts || ctx.Err() != nil {
			return err
		}
		if wait == 0 {
			// Full jitter: helpers that failed together do not come back together.
			ceiling := min(maxWait, backoff<<(try-1))
			wait = time.Duration(rand.Int64N(int64(ceiling))) + time.Millisecond
		}
		if err := c.sleep(ctx, min(wait, maxWait)); err != nil {
			return err
		}
	}
}

// once makes one request. wait is -1 when the failure is final, 0 for a
// backoff, or the wait the server named.
func (c *Client) once(ctx context.Context, method, path string, body []byte, out any) (wait time.Duration, err error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, rd)
	if err != nil {
		return -1, err
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return 0, fmt.Errorf("%s %s: reading the answer: %w", method, path, err)
	}
	if resp.StatusCode/100 == 2 {
		if err := json.Unmarshal(b, out); err != nil {
			return -1, fmt.Errorf("%s %s: the answer is not the JSON expected: %w", method, path, err)
		}
		return 0, nil
	}
	se := &StatusError{Method: method, Path: strings.SplitN(path, "?", 2)[0], Status: resp.StatusCode}
	var e struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if json.Unmarshal(b, &e) == nil {
		se.Code, se.Message = e.Error.Code, e.Error.Message
	}
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable && path == "/proxy" && resp.Header.Get("Retry-After") == "":
		// The spec's answer of a deployment without a proxy: final.
		return -1, se
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable:
		se.busy = resp.Header.Get("Retry-After") != ""
		return retryAfter(resp.Header.Get("Retry-After")), se
	case resp.StatusCode >= 500:
		return 0, se
	}
	return -1, se
}

// retryAfter reads a Retry-After in seconds; 0 (a backoff) when absent.
// Seconds are capped at a billion (about 31 years, past any MaxWait):
// more would overflow a Duration and read as final.
func retryAfter(v string) time.Duration {
	if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n >= 0 {
		return time.Duration(min(n, 1e9))*time.Second + time.Millisecond
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return d
		}
	}
	return 0
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	return Sleep(ctx, d)
}

// Sleep waits d or until ctx ends.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Pace spaces one account's requests: it waits until *next, then sets
// *next gap after the moment the request goes (a negative gap: none).
// now and sleep are the reader's clock, nil for the system's; readers
// share this so each platform's pacing is the same rule with its own gap.
func Pace(ctx context.Context, next *time.Time, gap time.Duration, now func() time.Time, sleep func(context.Context, time.Duration) error) error {
	if now == nil {
		now = time.Now
	}
	if sleep == nil {
		sleep = Sleep
	}
	at := now()
	if wait := next.Sub(at); wait > 0 {
		if err := sleep(ctx, wait); err != nil {
			return err
		}
		at = *next
	}
	*next = at.Add(max(gap, 0))
	return nil
}
