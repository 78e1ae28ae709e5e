package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	httptransport "github.com/go-kit/kit/transport/http"

	"github.com/earshothq/earshot/core"
)

// maxHelperBody is the largest ingest request read.
const maxHelperBody = 1 << 20

// IngestService is what the helper endpoints ask of ingest.
type IngestService interface {
	Ingest(ctx context.Context, ownerID, platform string, posts []core.IngestPost) (accountID string, ingested, skipped int, err error)
	Phrases(ctx context.Context, ownerID, platform string) ([]string, error)
}

// SessionService returns an owner's opened cookie jar.
type SessionService interface {
	Session(ctx context.Context, ownerID, platform string) (json.RawMessage, error)
}

// HelperConfig holds the proxy handed to helper programs.
type HelperConfig struct {
	ProxyURL      string // empty: GET /proxy answers 503
	ProxyRequired bool
	Logger        *slog.Logger
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
}

// NewHelper returns the helper endpoints' handler.
func NewHelper(cfg HelperConfig, keys Authenticator, ingest IngestService, sessions SessionService) *Helper {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	h := &Helper{cfg: cfg, keys: keys, ingest: ingest, sessions: sessions, mux: http.NewServeMux(),
		api: &API{cfg: Config{Logger: cfg.Logger}}}
	opts := []httptransport.ServerOption{httptransport.ServerErrorEncoder(h.api.encodeError)}
	for _, r := range h.routes() {
		h.mux.Handle(r.method+" "+r.path, httptransport.NewServer(r.endpoint, r.decode, encodeResponse, opts...))
	}
	return h
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
		{method: "GET", path: "/proxy", endpoint: h.proxy, decode: noRequest},
	}
}

// ServeHTTP checks the ingest key, then routes.
func (h *Helper) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	auth := r.Header.Get("Authorization")
	scheme, secret, ok := strings.Cut(auth, " ")
	if auth == "" || !ok || !strings.EqualFold(scheme, "Bearer") {
		h.api.encodeError(ctx, core.Errorf(core.KindUnauthorized, "missing ingest key: send Authorization: Bearer <INGEST_KEY>"), w)
		return
	}
	k, err := h.keys.Authenticate(ctx, core.IngestKey, strings.TrimSpace(secret))
	if err != nil {
		h.api.encodeError(ctx, err, w)
		return
	}
	if r.ContentLength > maxHelperBody {
		h.api.encodeError(ctx, core.Errorf(core.KindPayloadTooLarge, "request body is over %d bytes", maxHelperBody), w)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxHelperBody)
	h.mux.ServeHTTP(w, r.WithContext(withKey(ctx, k)))
}

type ingestRequest struct {
	platform string
	posts    []core.IngestPost
}

// ingestPostJSON is one post on the wire. A row that does not decode is
// not an error: it is skipped and counted, like any invalid row.
type ingestPostJSON struct {
	ExternalID string   `json:"externalId"`
	AuthorName string   `json:"authorName"`
	Body       []string `json:"body"`
	URL        string   `json:"url"`
	Likes      int      `json:"likes"`
	Comments   int      `json:"comments"`
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
	t := bytes.TrimSpace(body)
	if len(t) == 0 || t[0] != '{' {
		return nil, core.Errorf(core.KindInvalidJSON, "request body must be a JSON object")
	}
	if platform, posts, ok := parseIngest(body); ok {
		out := ingestRequest{platform: platform, posts: make([]core.IngestPost, len(posts))}
		for i, p := range posts {
			out.posts[i] = core.IngestPost(p)
		}
		return out, nil
	}
	// What parseIngest leaves is decoded by encoding/json, which decides.
	// Nearly every batch is well formed: decode it in one pass, and go row
	// by row only when some row has the wrong shape. Unmarshal checks the
	// syntax of the whole body before it decodes, so a body it takes is
	// valid JSON and is not scanned a second time for that.
	var whole struct {
		Platform *string          `json:"platform"`
		Posts    []ingestPostJSON `json:"posts"`
	}
	if json.Unmarshal(body, &whole) == nil && whole.Platform != nil {
		if err := core.CheckIngestBatch(len(whole.Posts)); err != nil {
			return nil, err
		}
		out := ingestRequest{platform: *whole.Platform, posts: make([]core.IngestPost, len(whole.Posts))}
		for i, p := range whole.Posts {
			out.posts[i] = core.IngestPost(p)
		}
		return out, nil
	}
	if !json.Valid(t) {
		return nil, core.Errorf(core.KindInvalidJSON, "request body must be a JSON object")
	}
	var req struct {
		Platform *string           `json:"platform"`
		Posts    []json.RawMessage `json:"posts"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, core.Errorf(core.KindInvalid, "platform must be a string and posts an array")
	}
	if req.Platform == nil {
		return nil, core.Errorf(core.KindInvalid, "platform is required: facebook, x or reddit")
	}
	if err := core.CheckIngestBatch(len(req.Posts)); err != nil {
		return nil, err
	}
	out := ingestRequest{platform: *req.Platform, posts: make([]core.IngestPost, len(req.Posts))}
	for i, raw := range req.Posts {
		var p ingestPostJSON
		if json.Unmarshal(raw, &p) == nil {
			out.posts[i] = core.IngestPost(p)
		} // else the zero post fails validation and is skipped
	}
	return out, nil
}

func decodePlatformQuery(_ context.Context, r *http.Request) (any, error) {
	return r.URL.Query().Get("platform"), nil
}

func (h *Helper) ingestPosts(ctx context.Context, req any) (any, error) {
	r := req.(ingestRequest)
	acc, ingested, skipped, err := h.ingest.Ingest(ctx, keyFrom(ctx).OwnerID, r.platform, r.posts)
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
	return response{body: struct {
		Platform string   `json:"platform"`
		Phrases  []string `json:"phrases"`
	}{platform, ps}}, nil
}

func (h *Helper) session(ctx context.Context, req any) (any, error) {
	jar, err := h.sessions.Session(ctx, keyFrom(ctx).OwnerID, req.(string))
	if err != nil {
		return nil, err
	}
	return response{body: jar}, nil
}

func (h *Helper) proxy(context.Context, any) (any, error) {
	if h.cfg.ProxyURL == "" {
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
