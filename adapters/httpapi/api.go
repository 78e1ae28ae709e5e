package httpapi

import (
	"bytes"
	"context"
	"io"
	"iter"
	"log/slog"
	"net/http"
	"path"
	"strings"
	"sync"

	"github.com/go-kit/kit/endpoint"
	httptransport "github.com/go-kit/kit/transport/http"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Authenticator checks a key's secret. app.Keys is one.
type Authenticator interface {
	Authenticate(ctx context.Context, kind core.KeyKind, secret string) (core.Key, error)
}

// PhraseService is what the API asks of phrases. app.Phrases is one.
type PhraseService interface {
	AddWithFilters(ctx context.Context, ownerID, phrase, platform, community string, f core.PhraseFilters, idemKey string) (core.Phrase, bool, error)
	Get(ctx context.Context, ownerID, id string) (core.Phrase, error)
	List(ctx context.Context, ownerID string, f ports.PhraseFilter) ([]core.Phrase, error)
	Update(ctx context.Context, ownerID, id string, status *string, ch core.PhraseFiltersChange) (core.Phrase, error)
	Delete(ctx context.Context, ownerID, id string) error
	Plan(ctx context.Context, ownerID string) (core.Plan, error)
}

// MatchService is what the API asks of matches. app.Matches is one.
type MatchService interface {
	List(ctx context.Context, ownerID string, q ports.MatchQuery) (ports.MatchPage, error)
	Get(ctx context.Context, ownerID, id string) (core.Match, error)
	// Export returns every match of q's view, newest first, page by
	// page. KindInvalid before anything is read.
	Export(ctx context.Context, ownerID string, q ports.MatchQuery) (iter.Seq2[[]core.Match, error], error)
}

// Config is the API's part of the settings.
type Config struct {
	RateLimit int // requests per key per minute, and failed keys per address per minute
	Logger    *slog.Logger
}

// Deps are the services behind the API.
type Deps struct {
	Keys     Authenticator
	Phrases  PhraseService
	Matches  MatchService
	Limiter  ports.RateLimiter
	Webhooks WebhookService // nil: every webhook route answers plan_limit
	Channels ChannelService // nil: every channel route answers plan_limit
	Triage   TriageService  // nil: the triage routes answer not_found
	Trends   TrendService   // nil: GET /api/v1/trends answers not_found
	Window   WindowService  // nil: the preview and apply-filters routes answer not_found
}

// route is one row of the API: the OpenAPI test checks every row is
// documented and every documented operation is a row.
type route struct {
	method, path string
	scope        core.Scope // "" for routes without a key
	endpoint     endpoint.Endpoint
	decode       httptransport.DecodeRequestFunc
}

// API serves /api/v1.
type API struct {
	cfg  Config
	deps Deps
	mux  *http.ServeMux

	mu        sync.Mutex
	exporting map[string]bool // owners with an export being written: see startExport
}

// New returns the API handler. It serves paths under /api/v1 only.
func New(cfg Config, deps Deps) *API {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.RateLimit <= 0 {
		cfg.RateLimit = DefaultRateLimit
	}
	a := &API{cfg: cfg, deps: deps, mux: http.NewServeMux(), exporting: map[string]bool{}}
	opts := []httptransport.ServerOption{
		httptransport.ServerErrorEncoder(a.encodeError),
	}
	paths, routed, allow := map[string]bool{}, map[string]bool{}, map[string][]string{}
	for _, r := range a.routes() {
		decode := r.decode
		if gate := a.planGate(r.method, r.path); gate != nil {
			decode = requirePlan(gate, decode)
		}
		if r.scope != "" {
			decode = requireScope(r.scope, decode)
		}
		var h http.Handler = httptransport.NewServer(r.endpoint, decode, encodeResponse, opts...)
		if outboundRoutes[r.method+" "+r.path] {
			h = a.limitOutbound(h)
		}
		a.mux.Handle(r.method+" "+r.path, h)
		paths[r.path], routed[r.method+" "+r.path] = true, true
		allow[r.path] = allowed(allow[r.path], r.method)
	}
	// A known path with another method, and any unknown path, answer in
	// the documented error body rather than the mux's plain text. The
	// common methods are named: a pattern without one would clash with a
	// route of a method on a wider path (POST /keywords/preview beside
	// GET /keywords/{id}). Any other method falls through to "/", which
	// tells a known path by the paths alone (known), so it is refused as
	// a wrong method too rather than as an unknown path.
	known := http.NewServeMux()
	for p := range paths {
		known.Handle(p, http.NotFoundHandler())
		for _, m := range []string{"GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
			if routed[m+" "+p] {
				continue
			}
			a.mux.HandleFunc(m+" "+p, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Allow", strings.Join(allow[p], ", "))
				a.encodeError(r.Context(), wrongMethod(r.Method, p), w)
			})
		}
	}
	a.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if _, p := known.Handler(r); p != "" {
			w.Header().Set("Allow", strings.Join(allow[p], ", "))
			a.encodeError(r.Context(), wrongMethod(r.Method, p), w)
			return
		}
		a.encodeError(r.Context(), core.Errorf(core.KindNotFound, "no such route: %s %s", r.Method, r.URL.Path), w)
	})
	return a
}

// allowed adds method to methods, the list a wrong method's Allow
// header names (RFC 9110), with HEAD after GET, as the mux serves it.
func allowed(methods []string, method string) []string {
	methods = append(methods, method)
	if method == http.MethodGet {
		methods = append(methods, http.MethodHead)
	}
	return methods
}

func wrongMethod(method, path string) error {
	return core.Errorf(core.KindInvalidRequest, "method %s is not allowed on %s", method, path)
}

func (a *API) routes() []route {
	webhookRows, channelRows := rows(a.webhookRows), rows(a.channelRows)
	return []route{
		{"GET", "/api/v1/openapi.json", "", a.openAPI, noRequest},
		{"GET", "/api/v1/me", core.ScopeRead, a.me, noRequest},
		{"GET", "/api/v1/keywords", core.ScopeRead, a.listPhrases, noRequest},
		{"POST", "/api/v1/keywords", core.ScopeWritePhrases, a.addPhrase, decodeAddPhrase},
		{"GET", "/api/v1/keywords/{id}", core.ScopeRead, a.getPhrase, decodeID},
		{"PATCH", "/api/v1/keywords/{id}", core.ScopeWritePhrases, a.patchPhrase, decodePatchPhrase},
		{"DELETE", "/api/v1/keywords/{id}", core.ScopeWritePhrases, a.deletePhrase, decodeID},
		// A preview reads and changes nothing; applying a phrase's
		// filters archives its matches, the owner's own bookkeeping, as
		// triage does: a read key may do both.
		{"POST", "/api/v1/keywords/preview", core.ScopeRead, a.previewPhrase, decodePreviewPhrase},
		{"POST", "/api/v1/keywords/{id}/preview", core.ScopeRead, a.previewChange, decodePreviewChange},
		{"POST", "/api/v1/keywords/{id}/apply-filters", core.ScopeRead, a.applyFilters, decodeID},
		{"POST", "/api/v1/keywords/{id}/apply-filters/{setId}/undo", core.ScopeRead, a.undoApply, decodeUndoApply},
		{"GET", "/api/v1/matches", core.ScopeRead, a.listMatches, decodeListMatches},
		{"GET", "/api/v1/matches/export", core.ScopeRead, a.exportMatches, decodeExport},
		{"GET", "/api/v1/matches/{id}", core.ScopeRead, a.getMatch, decodeID},
		// Triage is the key owner's own bookkeeping and changes nothing
		// anyone else sees, so a read key may set it too.
		{"GET", "/api/v1/matches/{id}/triage", core.ScopeRead, a.getTriage, decodeID},
		{"PATCH", "/api/v1/matches/{id}/triage", core.ScopeRead, a.patchTriage, decodePatchTriage},
		{"POST", "/api/v1/triage", core.ScopeRead, a.bulkTriage, decodeBulkTriage},
		{"GET", "/api/v1/trends", core.ScopeRead, a.trends, decodeTrends},
		{"POST", "/api/v1/webhooks", core.ScopeWebhooks, a.addWebhook, decodeAddWebhook},
		{"GET", "/api/v1/webhooks", core.ScopeWebhooks, a.listWebhooks, noRequest},
		{"PATCH", "/api/v1/webhooks/{id}", core.ScopeWebhooks, a.patchWebhook, decodePatchWebhook},
		{"DELETE", "/api/v1/webhooks/{id}", core.ScopeWebhooks, webhookRows.delete, decodeID},
		{"POST", "/api/v1/webhooks/{id}/test", core.ScopeWebhooks, webhookRows.test, decodeID},
		{"GET", "/api/v1/webhooks/{id}/deliveries", core.ScopeWebhooks, webhookRows.deliveries, decodeID},
		{"POST", "/api/v1/webhooks/{id}/deliveries/{deliveryId}/retry", core.ScopeWebhooks, webhookRows.retry, decodeRetry},
		{"POST", "/api/v1/webhooks/{id}/rotate-secret", core.ScopeWebhooks, a.rotateSecret, decodeRotate},
		{"POST", "/api/v1/webhooks/{id}/replay", core.ScopeWebhooks, webhookRows.replay, decodeReplay},
		// Channels, an extension: webhook rows of another kind, with
		// routes of their own so that the spec's /webhooks show webhooks
		// only.
		{"GET", "/api/v1/channels", core.ScopeWebhooks, a.listChannels, noRequest},
		{"POST", "/api/v1/channels", core.ScopeWebhooks, a.addChannel, decodeAddChannel},
		{"GET", "/api/v1/channels/{id}", core.ScopeWebhooks, a.getChannel, decodeID},
		{"PATCH", "/api/v1/channels/{id}", core.ScopeWebhooks, a.patchChannel, decodePatchChannel},
		{"DELETE", "/api/v1/channels/{id}", core.ScopeWebhooks, channelRows.delete, decodeID},
		{"POST", "/api/v1/channels/{id}/test", core.ScopeWebhooks, channelRows.test, decodeID},
		{"GET", "/api/v1/channels/{id}/deliveries", core.ScopeWebhooks, channelRows.deliveries, decodeID},
		{"POST", "/api/v1/channels/{id}/deliveries/{deliveryId}/retry", core.ScopeWebhooks, channelRows.retry, decodeRetry},
		{"POST", "/api/v1/channels/{id}/replay", core.ScopeWebhooks, channelRows.replay, decodeReplay},
	}
}

// Patterns lists every route as "METHOD /path", for the request
// metrics' route label.
func (a *API) Patterns() []string {
	var ps []string
	for _, r := range a.routes() {
		ps = append(ps, r.method+" "+r.path)
	}
	return ps
}

// ServeHTTP runs the edge checks every route shares, in order: no key
// needed for the OpenAPI document; the key; the rate limit (its headers go
// on every answer); the body limit; then the route.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	public := r.URL.Path == "/api/v1/openapi.json"
	limitKey := "ip:" + clientIP(r)
	if !public {
		k, err := authenticateKey(ctx, r, w, a.deps.Keys, core.APIKey, a.deps.Limiter, a.cfg.Logger, a.cfg.RateLimit)
		if err != nil {
			a.encodeError(ctx, err, w)
			return
		}
		ctx = withKey(ctx, k)
		limitKey = "key:" + k.ID
	}
	if !a.takeQuota(ctx, w, limitKey) {
		a.encodeError(ctx, rateLimited(w, a.cfg.RateLimit), w)
		return
	}
	if r.ContentLength > maxBody {
		a.encodeError(ctx, core.Errorf(core.KindPayloadTooLarge, "request body is over %d bytes", maxBody), w)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if r.ContentLength < 0 {
		// A body of unknown length (chunked) is read here, at most the
		// limit and a byte, so it is refused in the same place as one that
		// announced its size: before the route, scope and plan, and on
		// routes that never read a body.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			a.encodeError(ctx, core.Wrap(core.KindInvalidRequest, err, "could not read the request body"), w)
			return
		}
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	}
	if !cleanPath(r.URL.Path) {
		// The mux would answer a redirect in HTML; no route has such a path.
		a.encodeError(ctx, core.Errorf(core.KindNotFound, "no such route: %s %s", r.Method, r.URL.Path), w)
		return
	}
	a.mux.ServeHTTP(w, r.WithContext(ctx))
}

// cleanPath says whether p is in the form http.ServeMux routes without
// redirecting: no empty or dot segment (a trailing slash is kept).
func cleanPath(p string) bool {
	c := path.Clean(p)
	if strings.HasSuffix(p, "/") && c != "/" {
		c += "/"
	}
	return c == p
}
