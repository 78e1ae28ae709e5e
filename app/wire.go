package app

// This file is the composition root: the only file of package app that
// imports adapters. It picks them from the Config and binds them to ports.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/httpapi"
	"github.com/earshothq/earshot/adapters/legacymock"
	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/ports"
)

// StoreModule opens and migrates the database and binds every store port.
var StoreModule = fx.Module("store",
	fx.Provide(
		openDB,
		fx.Annotate(gormstore.NewOwnerStore, fx.As(new(ports.OwnerStore))),
		fx.Annotate(gormstore.NewKeyStore, fx.As(new(ports.KeyStore))),
		fx.Annotate(gormstore.NewPhraseStore, fx.As(new(ports.PhraseStore))),
		fx.Annotate(gormstore.NewMatchStore, fx.As(new(ports.MatchStore))),
	),
)

// ServiceModule provides the use cases.
var ServiceModule = fx.Module("services",
	fx.Provide(
		func() ports.Clock { return ports.SystemClock{} },
		NewKeys,
		NewOwners,
		func(s ports.PhraseStore, cfg Config, c ports.Clock) *Phrases { return NewPhrases(s, cfg.Limits, c) },
		NewMatches,
	),
)

// HTTPModule serves the public API and the operational endpoints.
var HTTPModule = fx.Module("http",
	fx.Provide(
		func() ports.RateLimiter { return ratelimit.NewMemory(nil) },
		newAPI,
		newRootHandler,
		func(cfg Config) *Site { return &Site{URL: cfg.SiteURL} },
	),
	fx.Invoke(startServer),
)

func openDB(lc fx.Lifecycle, cfg Config) (*gormstore.DB, error) {
	db, err := gormstore.Open(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	lc.Append(fx.StopHook(db.Close))
	return db, nil
}

func newAPI(cfg Config, log *slog.Logger, keys *Keys, phrases *Phrases, matches *Matches, limiter ports.RateLimiter) *httpapi.API {
	return httpapi.New(httpapi.Config{RateLimit: cfg.RateLimit, Logger: log}, httpapi.Deps{
		Keys: keys, Phrases: phrases, Matches: matches, Limiter: limiter,
	})
}

func newRootHandler(api *httpapi.API, db *gormstore.DB, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/api/v1/", api)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, http.StatusOK, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		if err := db.Ping(ctx); err != nil {
			log.WarnContext(ctx, "not ready: database", "err", err)
			writeStatus(w, http.StatusServiceUnavailable, "database unreachable")
			return
		}
		writeStatus(w, http.StatusOK, "ready")
	})
	return mux
}

func writeStatus(w http.ResponseWriter, code int, status string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	fmt.Fprintf(w, "{\"status\":%q}\n", status)
}

// Site is the public address of the running server. When the operator
// left EARSHOT_SITE_URL to its default, it follows the address actually
// bound, so links stay right when EARSHOT_ADDR asks for port 0.
type Site struct{ URL string }

func startServer(lc fx.Lifecycle, cfg Config, h http.Handler, log *slog.Logger, site *Site) {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			ln, err := net.Listen("tcp", cfg.Addr)
			if err != nil {
				return err
			}
			if cfg.SiteURL == "http://"+cfg.Addr {
				site.URL = "http://" + ln.Addr().String()
			}
			log.Info("listening", "addr", ln.Addr().String(), "site", site.URL)
			go func() {
				if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
					log.Error("server stopped", "err", err)
				}
			}()
			return nil
		},
		// Shutdown stops accepting and waits for requests in flight.
		OnStop: srv.Shutdown,
	})
}

// printBootstrap creates the first owner on an empty database and prints
// its keys once on out.
func printBootstrap(lc fx.Lifecycle, cfg Config, owners *Owners, out io.Writer, log *slog.Logger, site *Site) {
	if !cfg.Bootstrap {
		log.Info("bootstrap skipped", "reason", "EARSHOT_BOOTSTRAP=false")
		return
	}
	lc.Append(fx.StartHook(func(ctx context.Context) error {
		b, err := owners.Bootstrap(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			log.Info("bootstrap skipped", "reason", "the database has an owner")
			return nil
		}
		fmt.Fprintf(out, `earshot: first start, created owner %s (%s). These keys are shown once:
  API key (every scope): %s
  ingest key:            %s
Try:
  curl -H "Authorization: Bearer %s" %s/api/v1/me
`, b.Owner.ID, b.Owner.Email, b.APIKey, b.IngestKey, b.APIKey, site.URL)
		return nil
	}))
}

// Serve returns the fx application of `earshot serve`. Bootstrap keys go
// to out; logs go to log.
func Serve(cfg Config, log *slog.Logger, out io.Writer, extra ...fx.Option) *fx.App {
	opts := []fx.Option{
		fx.Supply(cfg, log),
		fx.Provide(func() io.Writer { return out }),
		fx.WithLogger(func() fxevent.Logger { return fxevent.NopLogger }),
		fx.StopTimeout(30 * time.Second),
		StoreModule,
		ServiceModule,
		HTTPModule,
		fx.Invoke(printBootstrap),
	}
	return fx.New(append(opts, extra...)...)
}

// Console is the admin console's set of services over an open database.
type Console struct {
	Owners  *Owners
	Keys    *Keys
	Phrases *Phrases
	db      *gormstore.DB
}

// OpenConsole opens and migrates the database for the admin commands.
// They are short-lived programs, so plain constructors serve better than
// an fx application here.
func OpenConsole(ctx context.Context, cfg Config) (*Console, error) {
	db, err := gormstore.Open(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	clock := ports.SystemClock{}
	keys := NewKeys(gormstore.NewKeyStore(db), gormstore.NewOwnerStore(db), clock)
	return &Console{
		Owners:  NewOwners(gormstore.NewOwnerStore(db), keys),
		Keys:    keys,
		Phrases: NewPhrases(gormstore.NewPhraseStore(db), cfg.Limits, clock),
		db:      db,
	}, nil
}

// Close closes the database.
func (c *Console) Close() error { return c.db.Close() }

// Migrate creates or upgrades the schema and returns the version reached.
func Migrate(ctx context.Context, cfg Config) (int, error) {
	db, err := gormstore.Open(cfg.DatabaseURL)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if err := db.Migrate(ctx); err != nil {
		return 0, err
	}
	return db.Version(ctx)
}

// Mock returns the fx application of `earshot mock`: the legacy mock
// management API at the root, seeded, its state in cfg.MockState when set.
func Mock(cfg Config, log *slog.Logger) *fx.App {
	return fx.New(
		fx.Supply(cfg, log),
		fx.WithLogger(func() fxevent.Logger { return fxevent.NopLogger }),
		fx.StopTimeout(30*time.Second),
		fx.Provide(func(cfg Config, log *slog.Logger) (http.Handler, error) {
			srv, err := legacymock.New(legacymock.Config{StatePath: cfg.MockState, Logger: log})
			if err != nil {
				return nil, err
			}
			return srv.Handler(), nil
		}),
		fx.Provide(func(cfg Config) *Site { return &Site{URL: cfg.SiteURL} }),
		fx.Invoke(startServer),
	)
}
