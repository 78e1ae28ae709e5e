package legacymock

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/go-kit/kit/endpoint"
	httptransport "github.com/go-kit/kit/transport/http"
)

// Config configures the mock.
type Config struct {
	// StatePath is the JSON file that keeps the state across restarts. It
	// is read at start (a missing file means the seeded state) and
	// rewritten atomically after every mutation. Empty keeps the state in
	// memory only.
	StatePath string
	// Logger receives one line per call (debug) and internal errors;
	// nil discards.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Server is the legacy mock management API. It is safe for concurrent use.
type Server struct {
	store *store
	feed  []feedItem
	log   *slog.Logger
	mux   *http.ServeMux
}

// New loads or seeds the state and builds the routes. It fails when the
// state file exists but cannot be parsed, or cannot be written.
func New(cfg Config) (*Server, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	st, err := openStore(cfg.StatePath, cfg.Now)
	if err != nil {
		return nil, err
	}
	feed, err := seedFeed()
	if err != nil {
		return nil, err
	}
	s := &Server{store: st, feed: feed, log: cfg.Logger, mux: http.NewServeMux()}
	s.routes()
	return s, nil
}

// Handler returns the HTTP handler serving every route at the root.
func (s *Server) Handler() http.Handler { return s }

func (s *Server) routes() {
	for _, rt := range []struct {
		pattern string
		name    string
		e       endpoint.Endpoint
		dec     httptransport.DecodeRequestFunc
	}{
		{"GET /api-keys", "listAPIKeys", s.listAPIKeys, decodeNone},
		{"POST /api-keys", "createAPIKey", s.createAPIKey, decodeCreateAPIKey},
		{"DELETE /api-keys/{id}", "revokeAPIKey", s.revokeAPIKey, decodeRevokeAPIKey},

		{"GET /communities", "listCommunities", s.listCommunities, decodeListCommunities},
		{"POST /communities/{id}/join", "joinCommunity", s.joinCommunity, decodeJoinCommunity},
		{"POST /communities/join-by-url", "joinByURL", s.joinByURL, decodeJoinByURL},
		{"POST /communities/resolve", "resolveCommunity", s.resolveCommunity, decodeResolveCommunity},
		{"POST /communities/resolve-reddit", "resolveReddit", s.resolveReddit, decodeResolveReddit},
		{"POST /communities/{id}/accept", "acceptCommunity", s.acceptCommunity, decodeAcceptCommunity},
		{"DELETE /communities/{id}", "leaveCommunity", s.leaveCommunity, decodeLeaveCommunity},

		{"GET /brand", "getBrand", s.getBrand, decodeNone},
		{"PUT /brand", "putBrand", s.putBrand, decodePutBrand},
		{"DELETE /brand", "deleteBrand", s.deleteBrand, decodeNone},
		{"POST /brand/intelligence", "brandIntelligence", s.brandIntelligence, decodeBrandIntelligence},
		{"GET /brand/sources", "listBrandSources", s.listBrandSources, decodeNone},
		{"DELETE /brand/sources", "deleteBrandSource", s.deleteBrandSource, decodeDeleteBrandSource},
		{"POST /brand/index", "indexBrand", s.indexBrand, decodeIndexBrand},

		{"GET /listings", "listListings", s.listListings, decodeNone},
		{"POST /listings", "createListing", s.createListing, decodeCreateListing},
		{"PATCH /listings/{listingId}", "updateListing", s.updateListing, decodeUpdateListing},
		{"DELETE /listings/{listingId}", "deleteListing", s.deleteListing, decodeDeleteListing},
		{"GET /listings/{listingId}/status", "getListingStatus", s.getListingStatus, decodeGetListingStatus},
		{"PATCH /listings/{listingId}/status", "setListingStatus", s.setListingStatus, decodeSetListingStatus},

		{"GET /accounts", "listAccounts", s.listAccounts, decodeNone},
		{"POST /accounts", "createAccount", s.createAccount, decodeCreateAccount},
		{"PATCH /accounts/{accountId}", "updateAccount", s.updateAccount, decodeUpdateAccount},
		{"DELETE /accounts/{accountId}", "deleteAccount", s.deleteAccount, decodeDeleteAccount},
		{"POST /accounts/{accountId}/resolve", "resolveAccount", s.resolveAccount, decodeResolveAccount},

		{"GET /keywords", "listKeywords", s.listKeywords, decodeListKeywords},
		{"POST /keywords", "createKeyword", s.createKeyword, decodeCreateKeyword},
		{"POST /keywords/reset", "resetKeywords", s.resetKeywords, decodeNone},
		{"PATCH /keywords/{id}", "updateKeyword", s.updateKeyword, decodeUpdateKeyword},
		{"DELETE /keywords/{id}", "deleteKeyword", s.deleteKeyword, decodeDeleteKeyword},

		{"GET /feed", "listFeed", s.listFeed, decodeListFeed},
		{"GET /feed/{platform}", "listFeedByPlatform", s.listFeed, decodeListFeedByPlatform},
	} {
		s.mux.Handle(rt.pattern, s.route(rt.name, rt.e, rt.dec))
	}
}
