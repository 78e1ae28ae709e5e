package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	httptransport "github.com/go-kit/kit/transport/http"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// maxHelperBody is the largest ingest request read.
const maxHelperBody = 1 << 20

// IngestService is what the helper endpoints ask of ingest.
type IngestService interface {
	// IngestBatch validates, stores and matches a batch (app.Ingest).
	IngestBatch(ctx context.Context, ownerID string, b core.IngestBatch) (accountID string, ingested, skipped int, err error)
	// Phrases returns the owner's listening phrases on the platform.
	Phrases(ctx context.Context, ownerID, platform string) ([]core.Phrase, error)
}

// SessionService returns an owner's opened cookie jar and stores a new
// one. app.Accounts is one.
type SessionService interface {
	Session(ctx context.Context, ownerID, platform string) (json.RawMessage, error)
	// SetSession parses jar with core.ParseCookieJar and stores it; it
	// returns the account and the cookies kept.
	SetSession(ctx context.Context, ownerID, platform string, jar []byte) (core.Account, int, error)
}

// Defaults of HelperConfig.
const (
	DefaultHelperRateLimit = 60000           // requests per ingest key per minute
	DefaultHelperBodies    = 8               // ingest requests handled at once
	DefaultHelperBodyWait  = 2 * time.Second // a request's wait for one of them
)

// HelperConfig holds the helper endpoints' settings.
type HelperConfig struct {
	ProxyURL      string // empty: GET /proxy answers 503
	ProxyRequired bool
	// RateLimit is the requests per ingest key per minute, counted on
	// Limiter apart from the public API's; 0 is DefaultHelperRateLimit.
	// A nil Limiter counts nothing.
	RateLimit int
	Limiter   ports.RateLimiter
	// FailedKeyLimit is the failed keys an address may send a minute:
	// the public API's RateLimit, counted on Limiter together with the
	// API's failed keys (one quota per address, whichever edge). 0 is
	// DefaultRateLimit.
	FailedKeyLimit int
	// Bodies bounds the requests with a body (POST /ingest) read,
	// decoded and stored at once, so that memory does not grow with the
	// requests in flight; one key holds at most half of them, so that a
	// key sending slowly cannot hold up every other owner. A request
	// that finds no room within BodyWait answers 503 with Retry-After.
	// 0 is the default.
	Bodies   int
	BodyWait time.Duration
	Logger   *slog.Logger
}

// Helper serves the endpoints helper programs use with an ingest key:
// POST /ingest, GET /phrases, GET /session, GET /proxy. The owner always
// comes from the key.
type Helper struct {
	cfg      HelperConfig
	keys     Authenticator
	ingest   IngestService
	sessions SessionService
	mux      *http.ServeMux
	api      *API // for its error encoder
	bodies   *slots
	paths    map[string]bool     // the paths with a route, each with its wrong-method answer
	allow    map[string][]string // the methods of each path, for a wrong method's Allow
}

// NewHelper returns the helper endpoints' handler.
func NewHelper(cfg HelperConfig, keys Authenticator, ingest IngestService, sessions SessionService) *Helper {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RateLimit <= 0 {
		cfg.RateLimit = DefaultHelperRateLimit
	}
	if cfg.FailedKeyLimit <= 0 {
		cfg.FailedKeyLimit = DefaultRateLimit
	}
	if cfg.Bodies <= 0 {
		cfg.Bodies = DefaultHelperBodies
	}
	if cfg.BodyWait <= 0 {
		cfg.BodyWait = DefaultHelperBodyWait
	}
	if cfg.ProxyURL == "" {
		// Said once here: each GET /proxy then answers 503 as designed,
		// and its request line is debug.
		cfg.Logger.Info("EARSHOT_PROXY_URL is unset: GET /proxy answers 503 and helpers stop unless their operator turned the proxy off")
	}
	h := &Helper{cfg: cfg, keys: keys, ingest: ingest, sessions: sessions, mux: http.NewServeMux(),
		api: &API{cfg: Config{Logger: cfg.Logger}}, bodies: newSlots(cfg.Bodies), paths: map[string]bool{}, allow: map[string][]string{}}
	for _, r := range h.routes() {
		// A route with a body answers service_unavailable as its body
		// slots do: with Retry-After, so the helper sends it again.
		encodeError := h.api.encodeError
		if r.method != http.MethodGet {
			encodeError = h.retryLater
		}
		var handler http.Handler = httptransport.NewServer(r.endpoint, r.decode, encodeResponse,
			httptransport.ServerErrorEncoder(encodeError))
		if r.method != http.MethodGet {
			handler = h.bounded(handler)
		}
		h.handle(r.method, r.path, handler)
	}
	return h
}

// handle serves method on path with handler. Any other method on the
// path answers in the documented error body, as on /api/v1, rather than
// in the mux's plain text.
func (h *Helper) handle(method, path string, handler http.Handler) {
	h.mux.Handle(method+" "+path, handler)
	h.allow[path] = allowed(h.allow[path], method)
	if h.paths[path] {
		return
	}
	h.paths[path] = true
	h.mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", strings.Join(h.allow[path], ", "))
		h.api.encodeError(r.Context(), core.Errorf(core.KindInvalidRequest, "method %s is not allowed on %s", r.Method, path), w)
	})
}

// Paths lists the paths the helper serves, for the root mux.
func (h *Helper) Paths() []string {
	return []string{"/ingest", "/phrases", "/session", "/proxy", "/account-status"}
}

func (h *Helper) routes() []route {
	return []route{
		{method: "POST", path: "/ingest", endpoint: h.ingestPosts, decode: decodeIngest},
		{method: "GET", path: "/phrases", endpoint: h.phrases, decode: decodePlatformQuery},
		{method: "GET", path: "/session", endpoint: h.session, decode: decodePlatformQuery},
		{method: "PUT", path: "/session", endpoint: h.saveSession, decode: decodeSessionJar},
		{method: "GET", path: "/proxy", endpoint: h.proxy, decode: noRequest},
	}
}

// ServeHTTP runs the edge checks every helper route shares, in order:
// the ingest key (authenticateKey, as on the API and with the same
// quota and count: an address past its quota of failed keys is refused
// before any lookup); the
// key's rate limit (its headers go on every answer from here); the body
// limit; then the route.
func (h *Helper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	k, err := authenticateKey(ctx, r, w, h.keys, core.IngestKey, h.cfg.Limiter, h.cfg.Logger, h.cfg.FailedKeyLimit)
	if err != nil {
		h.api.encodeError(ctx, err, w)
		return
	}
	if !h.takeQuota(ctx, w, "helper:key:"+k.ID) {
		h.api.encodeError(ctx, rateLimited(w, h.cfg.RateLimit), w)
		return
	}
	if r.ContentLength > maxHelperBody {
		h.api.encodeError(ctx, core.Errorf(core.KindPayloadTooLarge, "request body is over %d bytes", maxHelperBody), w)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxHelperBody)
	h.mux.ServeHTTP(w, r.WithContext(withKey(ctx, k)))
}

func (h *Helper) takeQuota(ctx context.Context, w http.ResponseWriter, key string) bool {
	if h.cfg.Limiter == nil {
		return true
	}
	return takeQuota(ctx, h.cfg.Limiter, h.cfg.Logger, w, key, h.cfg.RateLimit)
}

// bounded lets next run only while it holds one of the body slots: a
// batch of up to 1 MB is read, decoded into posts and stored under it,
// so the memory all requests hold at once is bounded by the slots, not
// by the connections. A request that finds none free within BodyWait
// answers 503 with Retry-After: the helper sends the batch again.
func (h *Helper) bounded(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := keyFrom(r.Context()).ID
		if !h.bodies.acquire(r.Context(), key, h.cfg.BodyWait) {
			if r.Context().Err() != nil {
				return // the client left
			}
			h.retryLater(r.Context(), core.Errorf(core.KindUnavailable,
				"the server is busy with other batches: send this one again after Retry-After seconds"), w)
			return
		}
		defer h.bodies.release(key)
		next.ServeHTTP(w, r)
	})
}

// retryLater writes err, adding Retry-After to a service_unavailable
// answer: the server is busy (no body slot free, scoring behind on
// ingest) and the request is worth sending again as it is.
func (h *Helper) retryLater(ctx context.Context, err error, w http.ResponseWriter) {
	if core.IsKind(err, core.KindUnavailable) {
		w.Header().Set("Retry-After", "1")
	}
	h.api.encodeError(ctx, err, w)
}

// slots counts the requests with a body in hand, in all and per key.
type slots struct {
	mu     sync.Mutex
	total  int
	perKey int
	used   int
	byKey  map[string]int // only keys holding a slot: at most total entries
	freed  chan struct{}  // closed, and replaced, when a slot frees
}

func newSlots(total int) *slots {
	return &slots{total: total, perKey: max(1, total/2), byKey: map[string]int{}, freed: make(chan struct{})}
}

// acquire takes a slot for key, waiting up to wait for one; false when
// none came in time or ctx ended.
func (s *slots) acquire(ctx context.Context, key string, wait time.Duration) bool {
	var timeout <-chan time.Time
	for {
		s.mu.Lock()
		if s.used < s.total && s.byKey[key] < s.perKey {
			s.used++
			s.byKey[key]++
			s.mu.Unlock()
			return true
		}
		freed := s.freed
		s.mu.Unlock()
		if timeout == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-freed:
		case <-timeout:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func (s *slots) release(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.used--
	if s.byKey[key]--; s.byKey[key] == 0 {
		delete(s.byKey, key)
	}
	close(s.freed)
	s.freed = make(chan struct{})
}

type ingestRequest struct {
	platform string
	posts    []core.IngestPost
	// unread is unreadCommunities as sent: judged with the platform, by
	// ingest, since it is reddit's only and ignored elsewhere.
	unread core.UnreadCommunities
	// unreadPhrases is unreadPhrases as sent, judged by ingest.
	unreadPhrases core.UnreadPhrases
}

// ingestPostJSON is one post on the wire. A row that does not decode is
// not an error: it is skipped and counted, like any invalid row.
type ingestPostJSON struct {
	ExternalID string      `json:"externalId"`
	AuthorName string      `json:"authorName"`
	Body       []string    `json:"body"`
	URL        string      `json:"url"`
	Likes      wholeNumber `json:"likes"`
	Comments   wholeNumber `json:"comments"`
	Title      string      `json:"title"`
	PostedAt   *float64    `json:"postedAt"`
	Community  string      `json:"community"`
}

func decodeIngest(_ context.Context, r *http.Request) (any, error) {
	var body []byte
	var err error
	if n := r.ContentLength; n > 0 && n <= maxHelperBody {
		// The size is known: read into one buffer rather than grow one.
		body = make([]byte, n)
		_, err = io.ReadFull(r.Body, body)
	} else {
		body, err = io.ReadAll(r.Body)
	}
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, core.Errorf(core.KindPayloadTooLarge, "request body is over %d bytes", maxHelperBody)
		}
		return nil, core.Wrap(core.KindInvalidRequest, err, "could not read the request body")
	}
	req, err := readIngest(body)
	if err != nil {
		return nil, err
	}
	return req, nil
}

// decodePlatformQuery reads platform as /api/v1 reads its parameters:
// the query whole, the parameter once.
func decodePlatformQuery(_ context.Context, r *http.Request) (any, error) {
	return platformQuery(r)
}

func platformQuery(r *http.Request) (string, error) {
	q, err := query(r)
	if err != nil {
		return "", err
	}
	if err := onlyOnce(q, "platform"); err != nil {
		return "", err
	}
	return q.Get("platform"), nil
}

func (h *Helper) ingestPosts(ctx context.Context, req any) (any, error) {
	r := req.(ingestRequest)
	acc, ingested, skipped, err := h.ingest.IngestBatch(ctx, keyFrom(ctx).OwnerID, core.IngestBatch{Platform: r.platform, Posts: r.posts, Unread: r.unread, UnreadPhrases: r.unreadPhrases})
	if err != nil {
		return nil, err
	}
	return response{body: struct {
		AccountID string `json:"accountId"`
		Ingested  int    `json:"ingested"`
		Skipped   int    `json:"skipped"`
	}{acc, ingested, skipped}}, nil
}

func (h *Helper) phrases(ctx context.Context, req any) (any, error) {
	platform := req.(string)
	ps, err := h.ingest.Phrases(ctx, keyFrom(ctx).OwnerID, platform)
	if err != nil {
		return nil, err
	}
	// phrases is the spec's list; items, beyond it, gives each phrase its
	// community (the subreddit of a reddit phrase, "" elsewhere), which a
	// helper reading reddit needs to know where to listen.
	type item struct {
		Phrase    string `json:"phrase"`
		Community string `json:"community"`
	}
	texts, items := make([]string, len(ps)), make([]item, len(ps))
	for i, p := range ps {
		texts[i], items[i] = p.Phrase, item{p.Phrase, p.Community}
	}
	return response{body: struct {
		Platform string   `json:"platform"`
		Phrases  []string `json:"phrases"`
		Items    []item   `json:"items"`
	}{platform, texts, items}}, nil
}

func (h *Helper) session(ctx context.Context, req any) (any, error) {
	jar, err := h.sessions.Session(ctx, keyFrom(ctx).OwnerID, req.(string))
	if err != nil {
		return nil, err
	}
	return response{body: jar}, nil
}

type sessionJar struct {
	platform string
	jar      []byte
}

// decodeSessionJar reads PUT /session's body: a cookie jar, bounded like
// the dashboard's upload (core.MaxCookieJar).
func decodeSessionJar(_ context.Context, r *http.Request) (any, error) {
	platform, err := platformQuery(r)
	if err != nil {
		return nil, err
	}
	jar, err := io.ReadAll(io.LimitReader(r.Body, core.MaxCookieJar+1))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, core.Errorf(core.KindPayloadTooLarge, "the cookie jar must be at most %d bytes", core.MaxCookieJar)
		}
		return nil, core.Wrap(core.KindInvalidRequest, err, "could not read the request body")
	}
	if len(jar) > core.MaxCookieJar {
		return nil, core.Errorf(core.KindPayloadTooLarge, "the cookie jar must be at most %d bytes", core.MaxCookieJar)
	}
	return sessionJar{platform: platform, jar: jar}, nil
}

// saveSession stores the owner's refreshed cookie jar, as a helper read
// it back from its browser after the owner solved a challenge there. The
// answer says what was kept, never a cookie's value.
func (h *Helper) saveSession(ctx context.Context, req any) (any, error) {
	r := req.(sessionJar)
	acc, n, err := h.sessions.SetSession(ctx, keyFrom(ctx).OwnerID, r.platform, r.jar)
	if err != nil {
		return nil, err
	}
	return response{body: struct {
		AccountID string `json:"accountId"`
		Platform  string `json:"platform"`
		Cookies   int    `json:"cookies"`
	}{acc.ID, string(acc.Platform), n}}, nil
}

func (h *Helper) proxy(ctx context.Context, _ any) (any, error) {
	if h.cfg.ProxyURL == "" {
		answeredAsDesigned(ctx)
		return nil, core.Errorf(core.KindUnavailable, "this deployment has no proxy: the helper must stop")
	}
	u, err := url.Parse(h.cfg.ProxyURL)
	if err != nil {
		return nil, core.Wrap(core.KindInternal, err, "the proxy setting does not parse")
	}
	password, _ := u.User.Password()
	server := url.URL{Scheme: u.Scheme, Host: u.Host}
	return response{body: map[string]any{
		"required": h.cfg.ProxyRequired,
		"proxy":    map[string]string{"server": server.String(), "username": u.User.Username(), "password": password},
	}}, nil
}

// designedKey holds, in a request's context, whether the answer is the
// one designed for the case whatever its status, such as GET /proxy's
// 503 on a deployment without a proxy (said once at start): RequestLog
// logs its line at debug rather than as a failure.
type designedKey struct{}

// answeredAsDesigned marks the request of ctx as answered as designed.
func answeredAsDesigned(ctx context.Context) {
	if p, ok := ctx.Value(designedKey{}).(*bool); ok {
		*p = true
	}
}
