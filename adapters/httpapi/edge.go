package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	httptransport "github.com/go-kit/kit/transport/http"

	"github.com/earshothq/earshot/clientip"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/httpstatus"
	"github.com/earshothq/earshot/ports"
)

// maxBody is the largest request body the public API reads.
const maxBody = 4 << 10

type keyContext struct{}

func withKey(ctx context.Context, k core.Key) context.Context {
	return context.WithValue(ctx, keyContext{}, k)
}

// keyFrom returns the key that authenticated the request.
func keyFrom(ctx context.Context) core.Key {
	k, _ := ctx.Value(keyContext{}).(core.Key)
	return k
}

// DefaultRateLimit is the requests per API key per minute when Config
// leaves it 0, and so the default quota of failed keys per address.
const DefaultRateLimit = 60

// authenticateKey is the one key check of every edge, API and helper
// alike. An address past its quota of failed keys gets 429 before any
// lookup; otherwise the Bearer token is parsed and looked up as a key of
// kind, and a missing, malformed, unknown or revoked one is
// KindUnauthorized and counts against the address; any other failure of
// the lookup is the service's and counts nothing. The quota (limit:
// the public API's rate limit, on every edge) and its count
// (failedKeys) are the address's, whichever edge the keys went to, so
// an edge with a higher request limit is no cheaper place to guess. A
// nil l counts nothing.
func authenticateKey(ctx context.Context, r *http.Request, w http.ResponseWriter, keys Authenticator, kind core.KeyKind,
	l ports.RateLimiter, log *slog.Logger, limit int) (core.Key, error) {
	failKey := failedKeys(r)
	if l != nil && !keyCheckAllowed(ctx, l, log, w, failKey, limit) {
		return core.Key{}, tooManyFailedKeys(w)
	}
	k, err := bearerKey(ctx, r, keys, kind)
	// Only a key refused counts: a lookup that failed on our side (the
	// store unreachable, the caller gone) says nothing of the key, and
	// counting it would lock an address's valid keys out after an outage.
	if core.IsKind(err, core.KindUnauthorized) {
		// Every 401 names the scheme that would work (RFC 9110, RFC 6750).
		w.Header().Set("WWW-Authenticate", "Bearer")
		if l != nil {
			takeQuota(ctx, l, log, w, failKey, limit)
		}
	}
	return k, err
}

// failedKeys names the caller's address's count of failed keys, one for
// every edge.
func failedKeys(r *http.Request) string { return "auth:" + clientIP(r) }

// bearerKey reads `Authorization: Bearer <key>` and looks the key up.
func bearerKey(ctx context.Context, r *http.Request, keys Authenticator, kind core.KeyKind) (core.Key, error) {
	name, placeholder := "API key", "<API_KEY>"
	if kind == core.IngestKey {
		name, placeholder = "ingest key", "<INGEST_KEY>"
	}
	h := r.Header.Get("Authorization")
	if h == "" {
		return core.Key{}, core.Errorf(core.KindUnauthorized, "missing %s: send Authorization: Bearer %s", name, placeholder)
	}
	scheme, secret, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return core.Key{}, core.Errorf(core.KindUnauthorized, "malformed Authorization header: send Authorization: Bearer %s", placeholder)
	}
	return keys.Authenticate(ctx, kind, strings.TrimSpace(secret))
}

// takeQuota counts the request and sets the rate headers; false means
// the caller is over the limit (Retry-After is set then).
func (a *API) takeQuota(ctx context.Context, w http.ResponseWriter, key string) bool {
	return takeQuota(ctx, a.deps.Limiter, a.cfg.Logger, w, key, a.cfg.RateLimit)
}

// takeQuota counts one request of key against limit on l and sets the
// rate headers; false means the caller is over the limit (Retry-After is
// set then). A limiter that fails lets the request through: better a
// lost count than a down API.
func takeQuota(ctx context.Context, l ports.RateLimiter, log *slog.Logger, w http.ResponseWriter, key string, limit int) bool {
	q, err := l.Take(ctx, key, limit)
	if err != nil {
		log.WarnContext(ctx, "rate limiter failed", "err", err)
		return true
	}
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(q.Limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(q.Remaining))
	if !q.Allowed {
		h.Set("Retry-After", strconv.Itoa(q.RetryAfter()))
	}
	return q.Allowed
}

// outboundRoutes are the routes that send traffic out of the service:
// a test message, a redelivery, a replay (up to 1000 deliveries a call).
// No other route of the API sends anything: creating or changing a
// webhook or channel only stores it.
var outboundRoutes = map[string]bool{
	"POST /api/v1/webhooks/{id}/test":                          true,
	"POST /api/v1/webhooks/{id}/deliveries/{deliveryId}/retry": true,
	"POST /api/v1/webhooks/{id}/replay":                        true,
	"POST /api/v1/channels/{id}/test":                          true,
	"POST /api/v1/channels/{id}/deliveries/{deliveryId}/retry": true,
	"POST /api/v1/channels/{id}/replay":                        true,
}

// outboundKey names the owner's one bucket of outbound actions.
func outboundKey(ownerID string) string { return "api-outbound:owner:" + ownerID }

// limitOutbound puts in the request's context the take of one send
// from a bucket of the key's owner (spendOutbound), shared by all the
// owner's keys and across replicas wherever the per-key limit is, at the
// API's per-minute limit: the per-key limit alone lets an owner with N
// keys send N times as much, and this keeps the owner's sends from the
// API to what one key may make, as the dashboard does for its writes.
// The route hands it to the service, which takes it once it has decided
// to send: a request refused before then (scope, plan, body, an unknown
// id, anything the service refuses) sends nothing and counts nothing
// here. Past the limit nothing is sent: 429 rate_limited with
// Retry-After, and the rate headers name this bucket. A limiter that
// fails lets the request through, as takeQuota does.
func (a *API) limitOutbound(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		if a.deps.Limiter == nil {
			next.ServeHTTP(w, r)
			return
		}
		spend := func(ctx context.Context) error {
			k := keyFrom(ctx)
			q, err := a.deps.Limiter.Take(ctx, outboundKey(k.OwnerID), a.cfg.RateLimit)
			if err != nil {
				a.cfg.Logger.WarnContext(ctx, "rate limiter failed", "err", err)
				return nil
			}
			if q.Allowed {
				return nil
			}
			secs := strconv.Itoa(q.RetryAfter())
			h := w.Header()
			h.Set("X-RateLimit-Limit", strconv.Itoa(q.Limit))
			h.Set("X-RateLimit-Remaining", "0")
			h.Set("Retry-After", secs)
			return core.Errorf(core.KindRateLimited,
				"the owner's limit of %d test sends, redeliveries and replays a minute, shared by all its API keys, is reached: retry after %s seconds",
				a.cfg.RateLimit, secs)
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, outboundContext{}, spend)))
	})
}

type outboundContext struct{}

// spendOutbound takes one send of the owner's outbound bucket
// (limitOutbound): KindRateLimited past its limit, with the rate headers
// and Retry-After set on the answer. The outbound routes hand it to the
// service as its take.
func spendOutbound(ctx context.Context) error {
	if spend, ok := ctx.Value(outboundContext{}).(func(context.Context) error); ok {
		return spend(ctx)
	}
	return nil
}

// keyCheckAllowed says whether a key sent from the caller's address may
// be looked up at all, where failKey counts that address's failed keys
// on l against limit. Past the quota it sets the rate headers and
// Retry-After and answers false, so a guess costs no lookup and learns
// nothing about the key it tried: the caller then answers
// tooManyFailedKeys. Only failed keys use up this quota: a valid key
// from an address that never sent a bad one is never refused here. A
// limiter that fails lets the request through, as takeQuota does.
func keyCheckAllowed(ctx context.Context, l ports.RateLimiter, log *slog.Logger, w http.ResponseWriter, failKey string, limit int) bool {
	q, err := l.Peek(ctx, failKey, limit)
	if err != nil {
		log.WarnContext(ctx, "rate limiter failed", "err", err)
		return true
	}
	// The address's quota goes on the answer from here, so that one the
	// key lookup ends in (a 500 counts nothing) carries the rate headers
	// too; a key's own quota replaces them once it is known.
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(q.Limit))
	if q.Allowed {
		h.Set("X-RateLimit-Remaining", strconv.Itoa(q.Remaining))
		return true
	}
	h.Set("X-RateLimit-Remaining", "0")
	h.Set("Retry-After", strconv.Itoa(q.RetryAfter()))
	return false
}

// tooManyFailedKeys is the error of a request refused by keyCheckAllowed.
func tooManyFailedKeys(w http.ResponseWriter) error {
	return core.Errorf(core.KindRateLimited, "too many failed keys from this address: retry after %s seconds", w.Header().Get("Retry-After"))
}

// rateLimited is the error of a request over limit, once takeQuota has
// set Retry-After.
func rateLimited(w http.ResponseWriter, limit int) error {
	return core.Errorf(core.KindRateLimited, "rate limit of %d requests a minute reached: retry after %s seconds", limit, w.Header().Get("Retry-After"))
}

// clientIP is the name the caller's failed keys and keyless requests
// are counted under, the one every edge of the server uses
// (clientip.Key): an IPv4 address or an IPv6 /64, of the connection or,
// behind a trusted proxy, of the client the proxy names.
func clientIP(r *http.Request) string { return clientip.Key(r) }

// requireScope refuses keys that lack s with KindForbidden before the
// request is decoded: a key that may not use the route learns that, not
// what its body would have to be.
func requireScope(s core.Scope, decode httptransport.DecodeRequestFunc) httptransport.DecodeRequestFunc {
	return func(ctx context.Context, r *http.Request) (any, error) {
		if err := keyFrom(ctx).Allow(s); err != nil {
			return nil, err
		}
		return decode(ctx, r)
	}
}

// planGate is the plan's check of the webhook and channel routes, nil
// for the others: on a plan without webhooks every one of them answers
// plan_limit (spec section 4), whatever its body holds, except that an
// owner who still has webhooks or channels, made before the limit went
// to 0, may read, change and delete them (GET, PATCH, DELETE): limits
// refuse only new things. Every POST adds a row or sends a message.
func (a *API) planGate(method, path string) func(context.Context) error {
	type gates interface {
		Gate(ctx context.Context) error
		Keep(ctx context.Context, ownerID string) error
	}
	check := func(ctx context.Context, s gates) error {
		if method == http.MethodPost {
			return s.Gate(ctx)
		}
		return s.Keep(ctx, keyFrom(ctx).OwnerID)
	}
	switch {
	case strings.HasPrefix(path, "/api/v1/webhooks"):
		return func(ctx context.Context) error {
			s, err := a.webhooks()
			if err != nil {
				return err
			}
			return check(ctx, s)
		}
	case strings.HasPrefix(path, "/api/v1/channels"):
		return func(ctx context.Context) error {
			s, err := a.channels()
			if err != nil {
				return err
			}
			return check(ctx, s)
		}
	}
	return nil
}

// requirePlan refuses a request the plan does not allow before it is
// decoded, as requireScope does for a key's scopes.
func requirePlan(gate func(context.Context) error, decode httptransport.DecodeRequestFunc) httptransport.DecodeRequestFunc {
	return func(ctx context.Context, r *http.Request) (any, error) {
		if err := gate(ctx); err != nil {
			return nil, err
		}
		return decode(ctx, r)
	}
}

// Status returns the HTTP status of err's kind, from the table every
// HTTP edge shares.
func Status(err error) int { return httpstatus.Of(err) }

type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// encodeError writes {error: {code, message}}. Internal errors are logged
// with their cause and shown only as server_error.
func (a *API) encodeError(ctx context.Context, err error, w http.ResponseWriter) {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		err = core.Errorf(core.KindPayloadTooLarge, "request body is over %d bytes", maxBody)
	}
	kind := core.KindOf(err)
	if kind == core.KindInternal {
		a.cfg.Logger.ErrorContext(ctx, "request failed", "err", err)
	}
	if kind == core.KindRateLimited && w.Header().Get("Retry-After") == "" {
		// A 429 says when to come back; the quotas set their own wait,
		// and the one other refusal is an export's (startExport).
		w.Header().Set("Retry-After", strconv.Itoa(exportRetryAfter))
	}
	WriteError(w, err)
}

// WriteError writes err in the documented error body with its status.
func WriteError(w http.ResponseWriter, err error) {
	kind := core.KindOf(err)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(Status(err))
	_ = json.NewEncoder(w).Encode(errorBody{Error: errorDetail{Code: kind.Code(), Message: core.Message(err)}})
}

// response is what an endpoint returns: a payload under `data`, extra
// fields beside it, a status and headers.
type response struct {
	status  int
	headers map[string]string
	body    any
}

var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// encodeResponse renders the whole body before writing, so the answer
// goes out with a Content-Length in one write, and an encoding failure
// can still become a clean server_error. A download (export.go) is
// written as it is read instead.
func encodeResponse(ctx context.Context, w http.ResponseWriter, resp any) error {
	if d, ok := resp.(download); ok {
		return d.write(ctx, w)
	}
	r := resp.(response)
	buf := buffers.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= 1<<20 {
			buf.Reset()
			buffers.Put(buf)
		}
	}()
	if err := json.NewEncoder(buf).Encode(r.body); err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(buf.Len()))
	for k, v := range r.headers {
		h.Set(k, v)
	}
	if r.status == 0 {
		r.status = http.StatusOK
	}
	w.WriteHeader(r.status)
	_, err := w.Write(buf.Bytes())
	return err
}

type data struct {
	Data any `json:"data"`
}

func ok(v any) response { return response{body: data{Data: v}} }

// created is the 201 of a thing made at under+id: Location names it
// (RFC 9110), the address its own routes take.
func created(v any, under, id string) response {
	return response{status: http.StatusCreated, body: data{Data: v},
		headers: map[string]string{"Location": under + url.PathEscape(id)}}
}
