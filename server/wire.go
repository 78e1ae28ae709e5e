package server

// This file binds adapters to the ports app needs, picked from the Config.

import (
	"context"
	"errors"
	"fmt"
	"github.com/earshothq/earshot/app"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"

	"github.com/earshothq/earshot/adapters/bus"
	"github.com/earshothq/earshot/adapters/dashboard"
	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/httpapi"
	"github.com/earshothq/earshot/adapters/legacymock"
	"github.com/earshothq/earshot/adapters/llmscorer"
	"github.com/earshothq/earshot/adapters/metrics"
	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/adapters/reddit"
	"github.com/earshothq/earshot/adapters/smtpmail"
	"github.com/earshothq/earshot/adapters/webhooksender"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/score"
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
		fx.Annotate(gormstore.NewAccountStore, fx.As(new(ports.AccountStore))),
		fx.Annotate(gormstore.NewWebhookStore, fx.As(new(ports.WebhookStore))),
		fx.Annotate(gormstore.NewLeaseStore, fx.As(new(ports.LeaseStore))),
		fx.Annotate(gormstore.NewAlertStore, fx.As(new(ports.AlertStore))),
		fx.Annotate(gormstore.NewRedditStore, fx.As(new(ports.RedditStore))),
		fx.Annotate(gormstore.NewAccountHealthStore, fx.As(new(ports.AccountHealthStore))),
		fx.Annotate(gormstore.NewNotificationStore, fx.As(new(ports.NotificationStore))),
		fx.Annotate(gormstore.NewSessionStore, fx.As(new(ports.SessionStore))),
		fx.Annotate(gormstore.NewTriageStore, fx.As(new(ports.TriageStore))),
	),
)

// BusModule opens the event bus the settings name and binds it as
// publisher and subscriber.
var BusModule = fx.Module("bus",
	fx.Provide(
		openBus,
		func(b *bus.Bus) ports.Publisher { return b },
		func(b *bus.Bus) ports.Subscriber { return b },
	),
)

// openBus opens the bus. An event the in-process bus drops when full is
// counted, and a dropped new-match event wakes the scoring sweep at once:
// the match is in the database, so the sweep finds it.
func openBus(lc fx.Lifecycle, cfg Config, log *slog.Logger, m ports.Metrics, scoring *app.Scoring) (*bus.Bus, error) {
	b, err := bus.Open(cfg.BusURL, bus.Config{Logger: log, Group: bus.DefaultGroup, QueuePrefix: cfg.BusPrefix,
		Dropped: busDropped(m, scoring)})
	if err != nil {
		return nil, err
	}
	lc.Append(fx.StopHook(b.Close))
	return b, nil
}

// busDropped counts events the in-process bus dropped and wakes the
// scoring sweep when they announced new matches.
func busDropped(m ports.Metrics, scoring *app.Scoring) func(topic string, n int) {
	return func(topic string, n int) {
		m.Count(ports.EventBusDropped, n)
		if topic == app.TopicMatchCreated {
			scoring.Wake()
		}
	}
}

// ServiceModule provides the use cases.
var ServiceModule = fx.Module("services",
	fx.Provide(
		func() ports.Clock { return ports.SystemClock{} },
		app.NewKeys,
		app.NewOwners,
		func(s ports.PhraseStore, cfg Config, c ports.Clock) *app.Phrases {
			return app.NewPhrases(s, cfg.Limits, c)
		},
		app.NewMatches,
		newSealer,
		func(s ports.AccountStore, sealer *core.Sealer, cfg Config) *app.Accounts {
			return app.NewAccounts(s, sealer, cfg.Limits)
		},
		app.NewMatchers,
		func(m ports.MatchStore, a ports.AccountStore, mm *app.Matchers, pub ports.Publisher, cfg Config, log *slog.Logger) *app.Ingest {
			return app.NewIngest(m, a, mm, pub, cfg.Limits, log)
		},
		newScorer,
		newScoring,
		newWebhookSender,
		func() ports.MatchRenderer { return httpapi.MatchRenderer{} },
		newDeliveryWorker,
		newWebhooks,
		newHolder,
		newRedditSource,
		func(ph ports.PhraseStore, m ports.MatchStore, src ports.RedditSource, cp ports.RedditStore, l ports.LeaseStore,
			pub ports.Publisher, c ports.Clock, log *slog.Logger, h Holder, cfg Config) *app.Reddit {
			r := app.NewReddit(app.RedditDeps{Phrases: ph, Matches: m, Source: src, Checkpoints: cp, Leases: l,
				Publisher: pub, Clock: c, Log: log, Holder: string(h)})
			r.Overlap = cfg.RedditOverlap
			return r
		},
		newMailer,
		func(st ports.AlertStore, l ports.LeaseStore, m ports.Mailer, c ports.Clock, log *slog.Logger, h Holder, cfg Config, site *Site) *app.Alerts {
			return app.NewAlerts(st, l, m, c, log, string(h), cfg.AlertMinScore, site.URL)
		},
		func(a ports.AccountStore, st ports.AccountHealthStore, c ports.Clock, cfg Config) *app.AccountHealth {
			return app.NewAccountHealth(a, st, cfg.Limits, c)
		},
		func(st ports.NotificationStore, o ports.OwnerStore, m ports.Mailer, c ports.Clock, log *slog.Logger, site *Site) *app.Notifications {
			return app.NewNotifications(st, o, m, c, log, site.URL)
		},
		app.NewInbox,
		newSessions,
	),
	fx.Invoke(setMetrics, runScoring, runPeriodic, runWebhooks, runNotifications, sweepSessions),
)

// notificationSweep is how often owed notification emails are looked
// for; a new one wakes the sender at once, so this only catches retries
// and what another replica left.
const notificationSweep = time.Minute

// runNotifications connects account health and webhook switch-offs to
// the notifications, serves POST /account-status, and runs the email
// sender for the life of the app.
func runNotifications(lc fx.Lifecycle, h *app.AccountHealth, n *app.Notifications, w *app.DeliveryWorker, helper *httpapi.Helper, log *slog.Logger) {
	h.Notified = n.Poke
	w.OnSwitchedOff(func(ctx context.Context, wh core.Webhook) {
		if err := n.WebhookSwitchedOff(ctx, wh); err != nil {
			log.Warn("recording a webhook switch-off for its owner failed", "webhook", wh.ID, "owner", wh.OwnerID, "err", err)
		}
	})
	helper.HandleAccountStatus(h)
	background(lc, func(ctx context.Context) { n.Run(ctx, notificationSweep) })
}

// setMetrics hands the metrics port to the services that count work.
func setMetrics(m ports.Metrics, i *app.Ingest, s *app.Scoring, a *app.Alerts, r *app.Reddit) {
	i.Metrics, s.Metrics, a.Metrics, r.Metrics = m, m, m, m
	if sm, ok := m.(ports.SourceMetrics); ok {
		r.Sources = sm
	}
}

// Holder names this process in leases.
type Holder string

func newHolder() Holder {
	host, _ := os.Hostname()
	return Holder(fmt.Sprintf("%s:%d:%s", host, os.Getpid(), randomSuffix()))
}

func randomSuffix() string {
	k, _ := randomKey()
	return k[:8]
}

func newRedditSource(cfg Config, log *slog.Logger) (ports.RedditSource, error) {
	return reddit.New(reddit.Config{
		BaseURL: cfg.RedditBaseURL, ClientID: cfg.RedditClientID, ClientSecret: cfg.RedditClientSecret,
		UserAgent: cfg.RedditUserAgent, MirrorURL: cfg.RedditMirrorURL, MirrorAPI: cfg.RedditMirrorAPI,
		Interval: cfg.RedditInterval, Logger: log,
	})
}

// newMailer sends through EARSHOT_SMTP_URL, or writes alerts to the log
// when it is unset.
func newMailer(cfg Config, log *slog.Logger) (ports.Mailer, error) {
	if cfg.SMTPURL == "" {
		return smtpmail.NewLogMailer(log), nil
	}
	return smtpmail.New(cfg.SMTPURL, cfg.MailFrom, log)
}

// newSessions is the dashboard's sign-in, its links made under the
// site address as bound.
func newSessions(st ports.SessionStore, m ports.Mailer, l ports.RateLimiter, c ports.Clock, log *slog.Logger, cfg Config, site *Site) *app.Sessions {
	return app.NewSessions(st, m, l, c, log, app.SessionConfig{Idle: cfg.SessionIdle, SiteURL: func() string { return site.URL }})
}

// sweepSessions removes idle dashboard sessions and dead sign-in links
// every hour, so the tables stay as small as what is in use.
func sweepSessions(lc fx.Lifecycle, s *app.Sessions, log *slog.Logger) {
	background(lc, func(ctx context.Context) {
		t := time.NewTicker(time.Hour)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
					log.Warn("sweeping dashboard sessions failed", "err", err)
				}
			}
		}
	})
}

// runPeriodic runs the reddit poller and the alert sweep for the life of
// the app.
func runPeriodic(lc fx.Lifecycle, r *app.Reddit, a *app.Alerts, cfg Config) {
	background(lc, func(ctx context.Context) { r.Run(ctx, cfg.RedditInterval) })
	background(lc, func(ctx context.Context) { a.Run(ctx, cfg.AlertInterval) })
}

// background runs loop in a goroutine for the life of the app. On stop it
// cancels the loop's context and waits for it to return, so no loop is
// still at work when the database closes.
func background(lc fx.Lifecycle, loop func(ctx context.Context)) { backgroundAfter(lc, nil, loop) }

// backgroundAfter is background with a first step run at start under the
// loop's context (a subscription, say); when it fails the app does not
// start and the loop never runs.
func backgroundAfter(lc fx.Lifecycle, first func(ctx context.Context) error, loop func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			if first != nil {
				if err := first(ctx); err != nil {
					cancel()
					close(done)
					return err
				}
			}
			go func() { defer close(done); loop(ctx) }()
			return nil
		},
		OnStop: func(stop context.Context) error {
			cancel()
			select {
			case <-done:
				return nil
			case <-stop.Done():
				return stop.Err()
			}
		},
	})
}

func newSealer(cfg Config, log *slog.Logger) (*core.Sealer, error) {
	key, err := SecretKey(cfg, log)
	if err != nil {
		return nil, err
	}
	return core.NewSealer(key)
}

// newScorer is the rule-based scorer, or an OpenAI-compatible model in
// front of it when EARSHOT_LLM_URL is set.
func newScorer(cfg Config, log *slog.Logger) (ports.Scorer, error) {
	rules := score.Rules{}
	if cfg.LLMURL == "" {
		return rules, nil
	}
	return llmscorer.New(llmscorer.Config{URL: cfg.LLMURL, Model: cfg.LLMModel, APIKey: cfg.LLMAPIKey, Fallback: rules, Logger: log})
}

// newWebhookSender is the SSRF-safe sender; letting it reach private
// addresses is for development only, so it is said loudly.
func newWebhookSender(cfg Config, log *slog.Logger) ports.WebhookSender {
	if cfg.WebhookAllowPrivate {
		log.Warn("EARSHOT_WEBHOOK_ALLOW_PRIVATE is on: webhooks may target http, IP, loopback and private addresses; never use this in production")
	}
	return webhooksender.New(webhooksender.Config{Timeout: cfg.WebhookTimeout, AllowPrivate: cfg.WebhookAllowPrivate})
}

func newDeliveryWorker(st ports.WebhookStore, sender ports.WebhookSender, r ports.MatchRenderer,
	sealer *core.Sealer, c ports.Clock, log *slog.Logger, mt ports.Metrics, cfg Config) *app.DeliveryWorker {
	return app.NewDeliveryWorker(
		app.DeliveryDeps{Store: st, Sender: sender, Renderer: r, Sealer: sealer, Clock: c, Log: log, Metrics: mt},
		app.DeliveryConfig{Schedule: cfg.WebhookRetrySchedule, Timeout: cfg.WebhookTimeout})
}

func newWebhooks(st ports.WebhookStore, sender ports.WebhookSender, sealer *core.Sealer, c ports.Clock,
	log *slog.Logger, mt ports.Metrics, cfg Config, worker *app.DeliveryWorker) *app.Webhooks {
	return app.NewWebhooks(
		app.WebhookDeps{Store: st, Sender: sender, Sealer: sealer, Clock: c, Log: log, Metrics: mt, Wake: worker.Poke},
		app.WebhookConfig{Limits: cfg.Limits, AllowPrivate: cfg.WebhookAllowPrivate})
}

// runWebhooks runs the delivery worker for the life of the app. Each
// score stored here wakes it, so a message leaves within milliseconds;
// its poll finds retries and what other replicas queued. On stop it lets
// the sends under way finish.
func runWebhooks(lc fx.Lifecycle, w *app.DeliveryWorker, s *app.Scoring) {
	s.OnScored(func(context.Context, core.Match) error { w.Poke(); return nil })
	background(lc, w.Run)
}

// newScoring scores as many matches at once as the scorer gains from:
// one per processor for the rules, as many as the model takes in flight
// for the LLM scorer. A model call can take seconds, so the LLM scorer
// claims four calls' worth per worker: a batch then ends well within the
// lease that keeps other replicas off its matches.
func newScoring(m ports.MatchStore, scorer ports.Scorer, log *slog.Logger, cfg Config) *app.Scoring {
	sc := app.ScoringConfig{Interval: cfg.ScoringInterval, Workers: runtime.GOMAXPROCS(0)}
	if cfg.LLMURL != "" {
		sc.Workers = llmscorer.DefaultMaxInFlight
		sc.Batch = 4 * sc.Workers
	}
	return app.NewScoring(m, scorer, log, sc)
}

// runScoring subscribes the scorer to new matches and runs its loop for
// the life of the app; on stop it waits for the sweep under way.
func runScoring(lc fx.Lifecycle, s *app.Scoring, sub ports.Subscriber) {
	backgroundAfter(lc, func(ctx context.Context) error { return s.Listen(ctx, sub) }, s.Run)
}

// NewLogger returns the program's logger: text or JSON on w, each record
// carrying the id of the request it belongs to.
func NewLogger(format string, w io.Writer) *slog.Logger {
	var h slog.Handler = slog.NewTextHandler(w, nil)
	if format == "json" {
		h = slog.NewJSONHandler(w, nil)
	}
	return slog.New(httpapi.LogHandler(h))
}

// MetricsModule provides the Prometheus registry as the metrics port,
// with gauges of the work queues read at scrape time.
var MetricsModule = fx.Module("metrics",
	fx.Provide(
		metrics.New,
		func(r *metrics.Registry) ports.Metrics { return r },
	),
	fx.Invoke(registerGauges),
)

func registerGauges(r *metrics.Registry, db *gormstore.DB) {
	r.Gauge("earshot_unscored_matches", "Matches stored and not scored yet: the scoring queue.", func() float64 {
		return float64(db.Count("SELECT COUNT(*) FROM matches WHERE score IS NULL"))
	})
	r.Gauge("earshot_queued_deliveries", "Webhook deliveries waiting for a try: the delivery queue.", func() float64 {
		return float64(db.Count("SELECT COUNT(*) FROM webhook_deliveries WHERE status = 'queued'"))
	})
	r.Gauge("earshot_oldest_queued_delivery_seconds", "Age of the oldest queued webhook delivery; 0 when none.", func() float64 {
		oldest := db.Count("SELECT COALESCE(MIN(created_at), 0) FROM webhook_deliveries WHERE status = 'queued'")
		if oldest <= 0 {
			return 0
		}
		return time.Since(time.UnixMicro(oldest)).Seconds()
	})
}

// HTTPModule serves the public API and the operational endpoints.
var HTTPModule = fx.Module("http",
	fx.Provide(
		newRateLimiter,
		newAPI,
		newHelper,
		newDashboard,
		newRootHandler,
		func(cfg Config) *Site { return &Site{URL: cfg.SiteURL} },
	),
	// stopLive is invoked after startServer, so on stop it runs first:
	// live streams end before the server waits for requests in flight.
	fx.Invoke(startServer, stopLive),
)

// newDashboard is the owners' web interface under /app/; its cookie is
// Secure when the site address is https.
func newDashboard(cfg Config, log *slog.Logger, s *app.Sessions, inbox *app.Inbox, matches *app.Matches, phrases *app.Phrases,
	keys *app.Keys, hooks *app.Webhooks, accounts *app.AccountHealth, notes *app.Notifications) (*dashboard.Dashboard, error) {
	return dashboard.New(dashboard.Config{SecureCookies: strings.HasPrefix(cfg.SiteURL, "https://"), Logger: log},
		dashboard.Deps{Sessions: s, Inbox: inbox, Matches: matches, Phrases: phrases, Keys: keys, Webhooks: hooks,
			Accounts: accounts, Notifications: dashNotifications{notes}})
}

// dashNotifications gives the dashboard app.Notifications in the
// dashboard's terms: adapters do not import app.
type dashNotifications struct{ *app.Notifications }

func (n dashNotifications) List(ctx context.Context, ownerID string, limit int) ([]core.Notification, int, error) {
	l, err := n.Notifications.List(ctx, ownerID, limit)
	return l.Items, l.Unread, err
}

func stopLive(lc fx.Lifecycle, d *dashboard.Dashboard) {
	lc.Append(fx.StopHook(d.Close))
}

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

// newRateLimiter counts in memory on SQLite (one process) and in the
// database on Postgres, where replicas must share one count per key.
func newRateLimiter(lc fx.Lifecycle, db *gormstore.DB, log *slog.Logger) ports.RateLimiter {
	if !db.Postgres() {
		return ratelimit.NewMemory(nil)
	}
	l := gormstore.NewRateLimiter(db)
	background(lc, func(ctx context.Context) {
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := l.SweepRateWindows(ctx); err != nil && ctx.Err() == nil {
					log.Warn("sweeping rate windows failed", "err", err)
				}
			}
		}
	})
	return l
}

func newAPI(cfg Config, log *slog.Logger, keys *app.Keys, phrases *app.Phrases, matches *app.Matches, limiter ports.RateLimiter, webhooks *app.Webhooks, inbox *app.Inbox) *httpapi.API {
	return httpapi.New(httpapi.Config{RateLimit: cfg.RateLimit, Logger: log}, httpapi.Deps{
		Keys: keys, Phrases: phrases, Matches: matches, Limiter: limiter, Webhooks: webhooks, Triage: inbox,
	})
}

func newHelper(cfg Config, log *slog.Logger, keys *app.Keys, ingest *app.Ingest, accounts *app.Accounts, limiter ports.RateLimiter) *httpapi.Helper {
	return httpapi.NewHelper(httpapi.HelperConfig{ProxyURL: cfg.ProxyURL, ProxyRequired: cfg.ProxyRequired,
		RateLimit: cfg.HelperRateLimit, Limiter: limiter, Logger: log}, keys, ingest, accounts)
}

func newRootHandler(api *httpapi.API, helper *httpapi.Helper, dash *dashboard.Dashboard, db *gormstore.DB, b *bus.Bus, m *metrics.Registry, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	mux.Handle("/api/v1/", api)
	for _, p := range helper.Paths() {
		mux.Handle(p, helper)
	}
	for _, p := range dash.Paths() {
		mux.Handle(p, dash)
	}
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
		if err := b.Ping(ctx); err != nil {
			log.WarnContext(ctx, "not ready: bus", "err", err)
			writeStatus(w, http.StatusServiceUnavailable, "bus unreachable")
			return
		}
		writeStatus(w, http.StatusOK, "ready")
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		httpapi.WriteError(w, core.Errorf(core.KindNotFound, "no such route: %s %s", r.Method, r.URL.Path))
	})
	return httpapi.RequestLog(log, m.ObserveRequest, mux)
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
func printBootstrap(lc fx.Lifecycle, cfg Config, owners *app.Owners, sessions *app.Sessions, out io.Writer, log *slog.Logger, site *Site) {
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
		link, err := sessions.LoginLink(ctx, b.Owner.ID)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, `earshot: first start, created owner %s (%s). These keys are shown once:
  API key (every scope): %s
  ingest key:            %s
  dashboard sign-in:     %s (works once, within 15 minutes)
Try:
  curl -H "Authorization: Bearer %s" %s/api/v1/me
`, b.Owner.ID, b.Owner.Email, b.APIKey, b.IngestKey, link, b.APIKey, site.URL)
		return nil
	}))
}

// Serve returns the fx application of `earshot serve`. Bootstrap keys go
// to out; logs go to log.
func Serve(cfg Config, log *slog.Logger, out io.Writer, extra ...fx.Option) *fx.App {
	return fx.New(append(serveOptions(cfg, log, out), extra...)...)
}

// serveOptions is the whole option list of `earshot serve`, so the wiring
// test validates exactly what runs.
func serveOptions(cfg Config, log *slog.Logger, out io.Writer) []fx.Option {
	return []fx.Option{
		fx.Supply(cfg, log),
		fx.Provide(func() io.Writer { return out }),
		fx.WithLogger(func() fxevent.Logger { return fxevent.NopLogger }),
		fx.StopTimeout(30 * time.Second),
		StoreModule,
		BusModule,
		MetricsModule,
		ServiceModule,
		HTTPModule,
		fx.Invoke(printBootstrap),
	}
}

// Console is the admin console's set of services over an open database.
type Console struct {
	Owners   *app.Owners
	Keys     *app.Keys
	Phrases  *app.Phrases
	Accounts *app.Accounts
	Reddit   *app.RedditHealth
	Sessions *app.Sessions
	db       *gormstore.DB
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
	keys := app.NewKeys(gormstore.NewKeyStore(db), gormstore.NewOwnerStore(db), clock)
	sealer, err := newSealer(cfg, slog.Default())
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Console{
		Accounts: app.NewAccounts(gormstore.NewAccountStore(db), sealer, cfg.Limits),
		Owners:   app.NewOwners(gormstore.NewOwnerStore(db), keys),
		Keys:     keys,
		Phrases:  app.NewPhrases(gormstore.NewPhraseStore(db), cfg.Limits, clock),
		Reddit:   app.NewRedditHealth(gormstore.NewPhraseStore(db), gormstore.NewRedditStore(db), clock),
		// The console only prints links; it sends no mail.
		Sessions: app.NewSessions(gormstore.NewSessionStore(db), smtpmail.NewLogMailer(slog.Default()), ratelimit.NewMemory(nil), clock,
			slog.Default(), app.SessionConfig{Idle: cfg.SessionIdle, SiteURL: func() string { return cfg.SiteURL }}),
		db: db,
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
func Mock(cfg Config, log *slog.Logger) *fx.App { return fx.New(mockOptions(cfg, log)...) }

func mockOptions(cfg Config, log *slog.Logger) []fx.Option {
	return []fx.Option{
		fx.Supply(cfg, log),
		fx.WithLogger(func() fxevent.Logger { return fxevent.NopLogger }),
		fx.StopTimeout(30 * time.Second),
		fx.Provide(func(cfg Config, log *slog.Logger) (http.Handler, error) {
			srv, err := legacymock.New(legacymock.Config{StatePath: cfg.MockState, Logger: log})
			if err != nil {
				return nil, err
			}
			return srv.Handler(), nil
		}),
		fx.Provide(func(cfg Config) *Site { return &Site{URL: cfg.SiteURL} }),
		fx.Invoke(startServer),
	}
}
