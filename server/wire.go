package server

// This file binds adapters to the ports app needs, picked from the Config.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
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
	"github.com/earshothq/earshot/app"
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

type busParams struct {
	fx.In
	Lifecycle fx.Lifecycle
	Config    Config
	Log       *slog.Logger
	Metrics   ports.Metrics
	Scoring   *app.Scoring
}

// openBus opens the bus. An event the in-process bus drops when full is
// counted, and a dropped new-match event wakes the scoring sweep at once:
// the match is in the database, so the sweep finds it.
func openBus(p busParams) (*bus.Bus, error) {
	b, err := bus.Open(p.Config.BusURL, bus.Config{Logger: p.Log, Group: bus.DefaultGroup, QueuePrefix: p.Config.BusPrefix,
		Dropped: busDropped(p.Metrics, p.Scoring)})
	if err != nil {
		return nil, err
	}
	p.Lifecycle.Append(fx.StopHook(b.Close))
	return b, nil
}

// busDropped counts events the in-process bus dropped and wakes the
// scoring sweep when they announced new matches.
func busDropped(m ports.Metrics, scoring *app.Scoring) func(topic string, n int) {
	return func(topic string, n int) {
		m.Count(ports.EventBusDropped, n)
		if topic == app.TopicMatchStored {
			scoring.Wake()
		}
	}
}

// ServiceModule provides the use cases and runs their loops.
var ServiceModule = fx.Module("services",
	fx.Provide(
		func() ports.Clock { return ports.SystemClock{} },
		planLimits,
		app.NewKeys,
		app.NewOwners,
		app.NewPhrases,
		app.NewMatches,
		newSealer,
		app.NewAccounts,
		app.NewMatchers,
		newIngest,
		newScorer,
		newScoring,
		newWebhookSender,
		func() ports.MatchRenderer { return httpapi.MatchRenderer{} },
		newDeliveryWorker,
		newWebhooks,
		newHolder,
		newRedditSource,
		newReddit,
		newMailer,
		newAlerts,
		newAccountHealth,
		newNotifications,
		app.NewRedditHealth,
		app.NewInbox,
		newSessions,
		newAddressChanges,
	),
	fx.Invoke(runScoring, runPeriodic, runWebhooks, runNotifications, sweepSessions, vacuumQueues),
)

// planLimits are the plan limits of the whole deployment, which the
// services check.
func planLimits(cfg Config) core.Limits { return cfg.Limits }

type ingestParams struct {
	fx.In
	Matches   ports.MatchStore
	Accounts  ports.AccountStore
	Matchers  *app.Matchers
	Publisher ports.Publisher
	Log       *slog.Logger
	Metrics   ports.Metrics
	Limits    core.Limits
}

func newIngest(p ingestParams) *app.Ingest {
	return app.NewIngest(app.IngestDeps{Matches: p.Matches, Accounts: p.Accounts, Matchers: p.Matchers, Publisher: p.Publisher,
		Log: p.Log, Metrics: p.Metrics}, p.Limits)
}

type scoringParams struct {
	fx.In
	Matches ports.MatchStore
	Scorer  ports.Scorer
	Log     *slog.Logger
	Metrics ports.Metrics
	Worker  *app.DeliveryWorker
	Config  Config
}

// newScoring scores as many matches at once as the scorer gains from:
// one per processor for the rules, as many as the model takes in flight
// for the LLM scorer. A model call can take seconds, so the LLM scorer
// claims four calls' worth per worker: a batch then ends well within the
// lease that keeps other replicas off its matches. Each score stored
// wakes the delivery worker, so a message leaves within milliseconds.
func newScoring(p scoringParams) *app.Scoring {
	// The rules score a batch within milliseconds, so a claim needs only
	// a short lease, and a killed process's claims are free again soon.
	// A batch is a thousand: each batch's scores are one transaction, and
	// on SQLite that transaction waits its turn with ingest's, so smaller
	// batches fall behind a fast ingest (docs/adr/0005-scoring-in-batches.md).
	sc := app.ScoringConfig{Interval: p.Config.ScoringInterval, Workers: runtime.GOMAXPROCS(0), Lease: rulesLease, Batch: rulesBatch}
	if p.Config.LLMURL != "" {
		sc.Workers = llmscorer.DefaultMaxInFlight
		sc.Batch = 4 * sc.Workers
		sc.Lease = app.DefaultScoreLease
	}
	return app.NewScoring(app.ScoringDeps{Matches: p.Matches, Scorer: p.Scorer, Log: p.Log, Metrics: p.Metrics,
		Scored: func(context.Context, core.Match) { p.Worker.Poke() }}, sc)
}

// rulesLease and rulesBatch are the claim lease and batch of the
// rule-based scorer.
const (
	rulesLease = 5 * time.Second
	rulesBatch = 1000
)

// runScoring subscribes the scorer to new matches and runs its loop for
// the life of the app; on stop it waits for the sweep under way.
func runScoring(lc fx.Lifecycle, s *app.Scoring, sub ports.Subscriber) {
	backgroundAfter(lc, func(ctx context.Context) error { return s.Listen(ctx, sub) }, s.Run)
}

type deliveryParams struct {
	fx.In
	Store         ports.WebhookStore
	Sender        ports.WebhookSender
	Renderer      ports.MatchRenderer
	Sealer        *core.Sealer
	Clock         ports.Clock
	Log           *slog.Logger
	Metrics       ports.Metrics
	Notifications *app.Notifications
	Config        Config
}

// newDeliveryWorker sends the queued webhook deliveries; a webhook it
// switches off becomes a notification to its owner.
func newDeliveryWorker(p deliveryParams) *app.DeliveryWorker {
	switchedOff := func(ctx context.Context, wh core.Webhook) {
		if err := p.Notifications.WebhookSwitchedOff(ctx, wh); err != nil {
			p.Log.Warn("recording a webhook switch-off for its owner failed", "webhook", wh.ID, "owner", wh.OwnerID, "err", err)
		}
	}
	return app.NewDeliveryWorker(
		app.DeliveryDeps{Store: p.Store, Sender: p.Sender, Renderer: p.Renderer, Sealer: p.Sealer, Clock: p.Clock, Log: p.Log,
			Metrics: p.Metrics, SwitchedOff: switchedOff},
		app.DeliveryConfig{Schedule: p.Config.WebhookRetrySchedule, Timeout: p.Config.WebhookTimeout})
}

// runWebhooks runs the delivery worker for the life of the app. Each
// score stored wakes it; its poll finds retries and what other replicas
// queued. On stop it lets the sends under way finish.
func runWebhooks(lc fx.Lifecycle, w *app.DeliveryWorker) { background(lc, w.Run) }

type webhookParams struct {
	fx.In
	Store   ports.WebhookStore
	Sender  ports.WebhookSender
	Sealer  *core.Sealer
	Clock   ports.Clock
	Log     *slog.Logger
	Metrics ports.Metrics
	Worker  *app.DeliveryWorker
	Config  Config
	Owners  ports.OwnerStore
}

func newWebhooks(p webhookParams) *app.Webhooks {
	return app.NewWebhooks(
		app.WebhookDeps{Store: p.Store, Sender: p.Sender, Sealer: p.Sealer, Clock: p.Clock, Log: p.Log, Metrics: p.Metrics,
			Wake: p.Worker.Poke, Owners: p.Owners},
		app.WebhookConfig{Limits: p.Config.Limits, AllowPrivate: p.Config.WebhookAllowPrivate})
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
		KeylessPerMinute: cfg.RedditKeylessPerMinute, RefusedRest: cfg.RedditRefusedRest,
	})
}

type redditParams struct {
	fx.In
	Phrases     ports.PhraseStore
	Matches     ports.MatchStore
	Source      ports.RedditSource
	Checkpoints ports.RedditStore
	Leases      ports.LeaseStore
	Publisher   ports.Publisher
	Clock       ports.Clock
	Log         *slog.Logger
	Metrics     ports.Metrics
	Sources     ports.SourceMetrics
	Holder      Holder
	Config      Config
}

func newReddit(p redditParams) *app.Reddit {
	return app.NewReddit(app.RedditDeps{Phrases: p.Phrases, Matches: p.Matches, Source: p.Source, Checkpoints: p.Checkpoints,
		Leases: p.Leases, Publisher: p.Publisher, Clock: p.Clock, Log: p.Log, Metrics: p.Metrics, Sources: p.Sources,
		Holder: string(p.Holder), Overlap: p.Config.RedditOverlap})
}

// newMailer sends through EARSHOT_SMTP_URL, or writes alerts to the log
// when it is unset.
func newMailer(cfg Config, log *slog.Logger) (ports.Mailer, error) {
	if cfg.SMTPURL == "" {
		return smtpmail.NewLogMailer(log), nil
	}
	return smtpmail.New(cfg.SMTPURL, cfg.MailFrom, log)
}

type alertParams struct {
	fx.In
	Store   ports.AlertStore
	Leases  ports.LeaseStore
	Mailer  ports.Mailer
	Clock   ports.Clock
	Log     *slog.Logger
	Metrics ports.Metrics
	Holder  Holder
	Config  Config
	Site    *Site
}

func newAlerts(p alertParams) *app.Alerts {
	return app.NewAlerts(app.AlertDeps{Store: p.Store, Leases: p.Leases, Mailer: p.Mailer, Clock: p.Clock, Log: p.Log,
		Metrics: p.Metrics, Holder: string(p.Holder)}, app.AlertConfig{MinScore: p.Config.AlertMinScore, SiteURL: p.Site.URL})
}

// runPeriodic runs the reddit poller and the alert sweep for the life of
// the app.
func runPeriodic(lc fx.Lifecycle, r *app.Reddit, a *app.Alerts, cfg Config) {
	background(lc, func(ctx context.Context) { r.Run(ctx, cfg.RedditInterval) })
	background(lc, func(ctx context.Context) { a.Run(ctx, cfg.AlertInterval) })
}

type accountHealthParams struct {
	fx.In
	Accounts      ports.AccountStore
	Store         ports.AccountHealthStore
	Clock         ports.Clock
	Notifications *app.Notifications
	Limits        core.Limits
}

// newAccountHealth classifies what helpers report; a change that owes
// its owner an email wakes the email sender at once.
func newAccountHealth(p accountHealthParams) *app.AccountHealth {
	return app.NewAccountHealth(app.AccountHealthDeps{Accounts: p.Accounts, Store: p.Store, Clock: p.Clock,
		Notified: p.Notifications.Poke}, p.Limits)
}

type notificationParams struct {
	fx.In
	Store  ports.NotificationStore
	Owners ports.OwnerStore
	Mailer ports.Mailer
	Clock  ports.Clock
	Log    *slog.Logger
	Site   *Site
}

func newNotifications(p notificationParams) *app.Notifications {
	return app.NewNotifications(app.NotificationDeps{Store: p.Store, Owners: p.Owners, Mailer: p.Mailer, Clock: p.Clock, Log: p.Log},
		p.Site.URL)
}

// notificationSweep is how often owed notification emails are looked
// for; a new one wakes the sender at once, so this only catches retries
// and what another replica left.
const notificationSweep = time.Minute

// runNotifications runs the notification email sender for the life of
// the app.
func runNotifications(lc fx.Lifecycle, n *app.Notifications) {
	background(lc, func(ctx context.Context) { n.Run(ctx, notificationSweep) })
}

type sessionParams struct {
	fx.In
	Store   ports.SessionStore
	Mailer  ports.Mailer
	Limiter ports.RateLimiter
	Clock   ports.Clock
	Log     *slog.Logger
	Config  Config
	Site    *Site
}

// newSessions is the dashboard's sign-in, its links made under the
// site address as bound.
func newSessions(p sessionParams) *app.Sessions {
	return app.NewSessions(app.SessionDeps{Store: p.Store, Mailer: p.Mailer, Limiter: p.Limiter, Clock: p.Clock, Log: p.Log},
		app.SessionConfig{Idle: p.Config.SessionIdle, SiteURL: func() string { return p.Site.URL }})
}

// newAddressChanges lets a signed-in owner change their own address
// through a link mailed to the new one, made under the site address as
// bound.
func newAddressChanges(p sessionParams, owners ports.OwnerStore) *app.AddressChanges {
	return app.NewAddressChanges(app.AddressChangeDeps{Owners: owners, Mailer: p.Mailer, Limiter: p.Limiter, Clock: p.Clock, Log: p.Log,
		SiteURL: func() string { return p.Site.URL }})
}

// sweepSessions sends the sign-in links asked for, and removes idle
// dashboard sessions and dead sign-in links every hour, so the tables
// stay as small as what is in use.
func sweepSessions(lc fx.Lifecycle, s *app.Sessions, log *slog.Logger) {
	background(lc, s.Run)
	every(lc, log, time.Hour, "sweeping dashboard sessions", func(ctx context.Context) error {
		_, err := s.Sweep(ctx)
		return err
	})
}

// every runs sweep each period for the life of the app, as background
// does; a failure is logged as what failed.
func every(lc fx.Lifecycle, log *slog.Logger, period time.Duration, what string, sweep func(ctx context.Context) error) {
	background(lc, func(ctx context.Context) {
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := sweep(ctx); err != nil && ctx.Err() == nil {
					log.Warn(what+" failed", "err", err)
				}
			}
		}
	})
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

// NewLogger returns the program's logger: text or JSON on w from level
// up, each record carrying the id of the request it belongs to.
func NewLogger(format string, level slog.Level, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(w, opts)
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	}
	return slog.New(httpapi.LogHandler(h))
}

// MetricsModule provides the Prometheus registry as the metrics port,
// with gauges of the work queues read at scrape time.
var MetricsModule = fx.Module("metrics",
	fx.Provide(
		metrics.New,
		func(r *metrics.Registry) ports.Metrics { return r },
		func(r *metrics.Registry) ports.SourceMetrics { return r },
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
		newSite,
	),
	// stopLive is invoked after startServer, so on stop it runs first:
	// live streams end before the server waits for requests in flight.
	fx.Invoke(startServer, stopLive),
)

type dashboardParams struct {
	fx.In
	Config        Config
	Log           *slog.Logger
	Sessions      *app.Sessions
	Inbox         *app.Inbox
	Matches       *app.Matches
	Phrases       *app.Phrases
	Keys          *app.Keys
	Webhooks      *app.Webhooks
	Accounts      *app.AccountHealth
	Notifications *app.Notifications
	Reddit        *app.RedditHealth
	Limiter       ports.RateLimiter
	Addresses     *app.AddressChanges
	Jars          *app.Accounts
	Site          *Site
}

// newDashboard is the owners' web interface under /app/; its cookie is
// Secure when the site address is https.
func newDashboard(p dashboardParams) (*dashboard.Dashboard, error) {
	return dashboard.New(dashboard.Config{SecureCookies: p.Config.SiteHTTPS(), Logger: p.Log, RateLimit: p.Config.RateLimit,
		SiteURL: func() string { return p.Site.URL }},
		dashboard.Deps{Sessions: p.Sessions, Inbox: p.Inbox, Matches: p.Matches, Phrases: p.Phrases, Keys: p.Keys,
			Webhooks: p.Webhooks, Accounts: p.Accounts, Notifications: dashNotifications{p.Notifications}, Limiter: p.Limiter,
			Reddit: dashReddit{p.Reddit}, Addresses: p.Addresses, Jars: p.Jars})
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
	every(lc, log, time.Minute, "sweeping rate windows", l.SweepRateWindows)
	return l
}

// queueVacuum is how often the Postgres work queues are vacuumed
// (gormstore.DB.VacuumQueues).
const queueVacuum = 5 * time.Second

// vacuumQueues keeps the delivery queue's indexes free of dead entries
// on Postgres.
func vacuumQueues(lc fx.Lifecycle, db *gormstore.DB, log *slog.Logger) {
	if db.Postgres() {
		every(lc, log, queueVacuum, "vacuuming the delivery queue", db.VacuumQueues)
	}
}

type apiParams struct {
	fx.In
	Config   Config
	Log      *slog.Logger
	Keys     *app.Keys
	Phrases  *app.Phrases
	Matches  *app.Matches
	Limiter  ports.RateLimiter
	Webhooks *app.Webhooks
	Inbox    *app.Inbox
}

func newAPI(p apiParams) *httpapi.API {
	return httpapi.New(httpapi.Config{RateLimit: p.Config.RateLimit, Logger: p.Log}, httpapi.Deps{
		Keys: p.Keys, Phrases: p.Phrases, Matches: p.Matches, Limiter: p.Limiter, Webhooks: p.Webhooks, Triage: p.Inbox,
	})
}

type helperParams struct {
	fx.In
	Config        Config
	Log           *slog.Logger
	Keys          *app.Keys
	Ingest        *app.Ingest
	Accounts      *app.Accounts
	AccountHealth *app.AccountHealth
	Limiter       ports.RateLimiter
}

// newHelper serves the helper programs: ingest, their phrases, the
// proxy, cookie jars and POST /account-status.
func newHelper(p helperParams) *httpapi.Helper {
	h := httpapi.NewHelper(httpapi.HelperConfig{ProxyURL: p.Config.ProxyURL, ProxyRequired: p.Config.ProxyRequired,
		RateLimit: p.Config.HelperRateLimit, FailedKeyLimit: p.Config.RateLimit, Limiter: p.Limiter, Logger: p.Log}, p.Keys, p.Ingest, p.Accounts)
	h.HandleAccountStatus(p.AccountHealth)
	return h
}

type rootParams struct {
	fx.In
	API       *httpapi.API
	Helper    *httpapi.Helper
	Dashboard *dashboard.Dashboard
	DB        *gormstore.DB
	Bus       *bus.Bus
	Metrics   *metrics.Registry
	Log       *slog.Logger
}

func newRootHandler(p rootParams) (http.Handler, error) {
	db, b, log := p.DB, p.Bus, p.Log
	mux := http.NewServeMux()
	// routes are the pattern of every route served, each router's from
	// its own list, so that each has its label in the request metrics.
	routes := slices.Concat(p.API.Patterns(), p.Helper.Paths(), p.Dashboard.Patterns())
	own := func(pattern string, h http.HandlerFunc) {
		mux.Handle(pattern, h)
		routes = append(routes, pattern)
	}
	own("GET /metrics", p.Metrics.Handler().ServeHTTP)
	mux.Handle("/api/v1/", p.API)
	for _, path := range p.Helper.Paths() {
		mux.Handle(path, p.Helper)
	}
	for _, path := range p.Dashboard.Paths() {
		mux.Handle(path, p.Dashboard)
	}
	own("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		writeStatus(w, http.StatusOK, "ok")
	})
	own("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
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
	labels, err := metrics.NewRoutes(routes...)
	if err != nil {
		return nil, err
	}
	return httpapi.RequestLog(log, p.Metrics.RequestObserver(labels), mux), nil
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

func newSite(cfg Config) *Site { return &Site{URL: cfg.SiteURL} }

type serverParams struct {
	fx.In
	Lifecycle fx.Lifecycle
	Config    Config
	Handler   http.Handler
	Log       *slog.Logger
	Site      *Site
}

func startServer(p serverParams) {
	cfg, log, site := p.Config, p.Log, p.Site
	srv := &http.Server{
		Handler:           p.Handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	p.Lifecycle.Append(fx.Hook{
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

type bootstrapParams struct {
	fx.In
	Lifecycle fx.Lifecycle
	Config    Config
	Owners    *app.Owners
	Sessions  *app.Sessions
	Out       io.Writer
	Log       *slog.Logger
	Site      *Site
}

// printBootstrap creates the first owner on an empty database and prints
// its keys once on out.
func printBootstrap(p bootstrapParams) {
	log := p.Log
	if !p.Config.Bootstrap {
		log.Info("bootstrap skipped", "reason", "EARSHOT_BOOTSTRAP=false")
		return
	}
	p.Lifecycle.Append(fx.StartHook(func(ctx context.Context) error {
		b, err := p.Owners.Bootstrap(ctx)
		if err != nil {
			return err
		}
		if b == nil {
			log.Info("bootstrap skipped", "reason", "the database has an owner")
			return nil
		}
		link, err := p.Sessions.LoginLink(ctx, b.Owner.ID)
		if err != nil {
			return err
		}
		fmt.Fprintf(p.Out, `earshot: first start, created owner %s (%s). These keys are shown once:
  API key (every scope): %s
  ingest key:            %s
  dashboard sign-in:     %s (works once, within 15 minutes)
Try:
  curl -H "Authorization: Bearer %s" %s/api/v1/me
`, b.Owner.ID, b.Owner.Email, b.APIKey, b.IngestKey, link, b.APIKey, p.Site.URL)
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
		Sessions: app.NewSessions(app.SessionDeps{Store: gormstore.NewSessionStore(db), Mailer: smtpmail.NewLogMailer(slog.Default()),
			Limiter: ratelimit.NewMemory(nil), Clock: clock}, app.SessionConfig{Idle: cfg.SessionIdle, SiteURL: func() string { return cfg.SiteURL }}),
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
		fx.Provide(newSite),
		fx.Invoke(startServer),
	}
}
