package server

// This file serves HTTP: the public API, the helper endpoints, the
// dashboard, metrics, health and readiness, on one listener.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/fx"

	"github.com/earshothq/earshot/adapters/dashboard"
	"github.com/earshothq/earshot/adapters/httpapi"
	"github.com/earshothq/earshot/adapters/metrics"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
)

func newAPI(cfg Config, log *slog.Logger, s *services) *httpapi.API {
	return httpapi.New(httpapi.Config{RateLimit: cfg.RateLimit, Logger: log}, httpapi.Deps{
		Keys: s.Keys, Phrases: s.Phrases, Matches: s.Matches, Limiter: s.limiter, Webhooks: s.Webhooks, Channels: s.Channels, Triage: s.Inbox,
		Trends: s.Trends, Window: s.Window,
	})
}

// newHelper serves the helper programs: ingest, their phrases, the
// proxy, cookie jars and POST /account-status.
func newHelper(cfg Config, log *slog.Logger, s *services) *httpapi.Helper {
	h := httpapi.NewHelper(httpapi.HelperConfig{ProxyURL: cfg.ProxyURL, ProxyRequired: cfg.ProxyRequired,
		RateLimit: cfg.HelperRateLimit, FailedKeyLimit: cfg.RateLimit, Limiter: s.limiter, Logger: log}, s.Keys, s.Ingest, s.Accounts)
	h.HandleAccountStatus(s.AccountHealth)
	return h
}

// newDashboard is the owners' web interface under /app/; its cookie is
// Secure when the site address is https.
func newDashboard(cfg Config, log *slog.Logger, s *services, site *Site) (*dashboard.Dashboard, error) {
	return dashboard.New(dashboard.Config{SecureCookies: cfg.SiteHTTPS(), Logger: log, RateLimit: cfg.RateLimit,
		SiteURL: site.URL},
		dashboard.Deps{Sessions: s.Sessions, Inbox: s.Inbox, Matches: s.Matches, Phrases: s.Phrases, Keys: s.Keys,
			Webhooks: s.Webhooks, Channels: s.Channels, Accounts: s.AccountHealth, Notifications: dashNotifications{s.Notifications}, Limiter: s.limiter,
			Reddit: dashReddit{s.Reddit}, Addresses: s.Addresses, Jars: s.Accounts, Exports: s.Inbox,
			AlertSchedules: s.Alerts.Schedules(), AlertsOff: s.Alerts, Trends: s.Trends, Window: s.Window})
}

// dashReddit gives the dashboard app.RedditHealth in its terms.
type dashReddit struct{ *app.RedditHealth }

func (r dashReddit) Communities(ctx context.Context) ([]dashboard.CommunityHealth, error) {
	rows, err := r.Status(ctx)
	out := make([]dashboard.CommunityHealth, len(rows))
	for i, s := range rows {
		out[i] = dashboard.CommunityHealth{Community: s.Community, Phrases: s.Phrases, Via: s.LastVia, LastSuccessAt: s.LastSuccessAt,
			LastError: s.LastError, LastErrorAt: s.LastErrorAt, ArchiveLag: s.ArchiveLag, Behind: s.Behind}
	}
	return out, err
}

// dashNotifications gives the dashboard app.Notifications in the
// dashboard's terms: adapters do not import app.
type dashNotifications struct{ *app.Notifications }

func (n dashNotifications) List(ctx context.Context, ownerID string, limit int) ([]core.Notification, int, error) {
	l, err := n.Notifications.List(ctx, ownerID, limit)
	return l.Items, l.Unread, err
}

// stopLive ends the dashboard's live streams on stop. Added after
// startServer, it runs first, so the server then waits only for
// requests that end.
func stopLive(lc fx.Lifecycle, d *dashboard.Dashboard) {
	lc.Append(fx.StopHook(d.Close))
}

func newRootHandler(cfg Config, api *httpapi.API, helper *httpapi.Helper, dash *dashboard.Dashboard, s *services, reg *metrics.Registry,
	log *slog.Logger) (http.Handler, error) {
	mux := http.NewServeMux()
	// routes are the pattern of every route served, each router's from
	// its own list, so that each has its label in the request metrics.
	routes := slices.Concat(api.Patterns(), helper.Paths(), dash.Patterns())
	own := func(pattern string, h http.HandlerFunc) {
		mux.Handle(pattern, h)
		routes = append(routes, pattern)
	}
	own("GET /metrics", reg.Handler().ServeHTTP)
	mux.Handle("/api/v1/", api)
	for _, path := range helper.Paths() {
		mux.Handle(path, helper)
	}
	for _, path := range dash.Paths() {
		mux.Handle(path, dash)
	}
	own("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, http.StatusOK, "ok")
	})
	own("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := s.db.Ping(ctx); err != nil {
			log.WarnContext(ctx, "not ready: database", "err", err)
			writeStatus(w, http.StatusServiceUnavailable, "database unreachable")
			return
		}
		if err := s.bus.Ping(ctx); err != nil {
			log.WarnContext(ctx, "not ready: bus", "err", err)
			writeStatus(w, http.StatusServiceUnavailable, "bus unreachable")
			return
		}
		writeStatus(w, http.StatusOK, "ready")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		httpapi.WriteError(w, core.Errorf(core.KindNotFound, "no such route: %s %s", r.Method, r.URL.Path))
	})
	labels, err := metrics.NewRoutes(routes...)
	if err != nil {
		return nil, err
	}
	// Every path under /api/v1/, and /api/v1 itself, goes to the API as
	// it came, not through the mux, which would redirect a path with //
	// or a dot segment, or without its last slash, in HTML, without the
	// rate headers and before any quota.
	root := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1" || strings.HasPrefix(r.URL.Path, "/api/v1/") {
			api.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
	// Every edge counts per client (failed keys, keyless requests,
	// sign-in requests) under clientip.Key; behind a trusted load
	// balancer the client is the one it names, found here once for all.
	if !cfg.TrustedProxies.Empty() {
		log.Info("clients behind the trusted proxies are read from X-Forwarded-For", "proxies", cfg.TrustedProxies.String())
	}
	return httpapi.RequestLog(log, reg.RequestObserver(labels), cfg.TrustedProxies.Handler(root)), nil
}

func writeStatus(w http.ResponseWriter, code int, status string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintf(w, "{\"status\":%q}\n", status)
}

// Site is the public address of the running server. When the operator
// left EARSHOT_SITE_URL to its default, it follows the address actually
// bound, so links stay right when EARSHOT_ADDR asks for port 0. The
// loops that put it in links start before the server listens, so it is
// read and set atomically.
type Site struct{ url atomic.Pointer[string] }

func newSite(cfg Config) *Site {
	s := &Site{}
	s.url.Store(&cfg.SiteURL)
	return s
}

// URL returns the address.
func (s *Site) URL() string { return *s.url.Load() }

// startServer listens at start and, on stop, stops accepting and waits
// for the requests in flight.
func startServer(lc fx.Lifecycle, cfg Config, handler http.Handler, log *slog.Logger, site *Site) {
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    maxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			ln, err := net.Listen("tcp", cfg.Addr)
			if err != nil {
				return err
			}
			if cfg.SiteURL == siteOf(cfg.Addr) {
				bound := siteOf(ln.Addr().String())
				site.url.Store(&bound)
				// Every interface, but no host a browser can reach: sign-in
				// links and alert links would name [::] or 0.0.0.0.
				if a, err := netip.ParseAddrPort(ln.Addr().String()); err == nil && a.Addr().IsUnspecified() {
					log.Warn("links name a wildcard address no browser can reach: set EARSHOT_SITE_URL to the address users type", "site", bound)
				}
			}
			log.Info("listening", "addr", ln.Addr().String(), "site", site.URL())
			go func() {
				if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					log.Error("server stopped", "err", err)
				}
			}()
			return nil
		},
		OnStop: boundedServer{srv, log}.Shutdown,
	})
}

// maxHeaderBytes bounds a request's header. net/http's default of 1 MB
// is held in memory by every connection that sends it and, as a refused
// request's path, written whole to the log; keys, session cookies and
// the longest path served fit many times over in 64 KB.
const maxHeaderBytes = 64 << 10

// boundedServer is the server whose stop (Shutdown) ends within the
// stop's time.
type boundedServer struct {
	srv *http.Server
	log *slog.Logger
}

// Shutdown stops accepting and waits for the requests in flight, for at
// most two thirds of the stop's time left: the hooks after it (the loops,
// the bus, the database) stop only while that time lasts, so a request
// that does not end (a body sent slowly, an export read slowly) would
// otherwise leave them never stopped and the stop failed. Past that
// share the requests' connections are closed.
func (b boundedServer) Shutdown(ctx context.Context) error {
	wait := ctx
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		wait, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(deadline)*2/3))
		defer cancel()
	}
	err := b.srv.Shutdown(wait)
	if err == nil || ctx.Err() != nil {
		return err
	}
	b.log.Warn("stopping: closing the connections of requests still in flight", "err", err)
	return b.srv.Close()
}
