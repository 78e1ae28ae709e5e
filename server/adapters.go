package server

// This file picks the adapters the settings name and binds them to the
// ports app needs.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"go.uber.org/fx"

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

// openDB opens and migrates the database for the life of the app. The
// migration has no time bound, as `earshot migrate` has none: a long
// documented step, or another replica's migration holding the lock,
// must be waited for, not failed and started again on every restart.
func openDB(lc fx.Lifecycle, cfg Config) (*gormstore.DB, error) {
	db, err := openMigrated(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	lc.Append(fx.StopHook(db.Close))
	return db, nil
}

// openMigrated opens the database and creates or upgrades its schema.
func openMigrated(ctx context.Context, cfg Config) (*gormstore.DB, error) {
	db, err := gormstore.Open(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate: %w", err)
	}
	return db, nil
}

// stores binds every store port to the database, one value each. The
// phrase store serves both phrase ports, and the webhook store both the
// owners' webhooks and the delivery queue.
type stores struct {
	owners        ports.OwnerStore
	keys          ports.KeyStore
	phrases       ports.PhraseStore
	listening     ports.ListeningStore
	matches       ports.MatchStore
	backlog       ports.ScoringBacklog // the match store's count of unscored matches
	accounts      ports.AccountStore
	webhooks      ports.WebhookStore
	channels      ports.ChannelStore
	deliveries    ports.DeliveryQueue
	leases        ports.LeaseStore
	alerts        ports.AlertStore
	reddit        ports.RedditStore
	accountHealth ports.AccountHealthStore
	notifications ports.NotificationStore
	sessions      ports.SessionStore
	triage        ports.TriageStore
	trends        ports.TrendStore // the daily counts the match store keeps
	recent        ports.RecentStore
	archives      ports.FilterArchiveStore
}

func newStores(db *gormstore.DB) stores {
	phrases, webhooks, matches := gormstore.NewPhraseStore(db), gormstore.NewWebhookStore(db), gormstore.NewMatchStore(db)
	return stores{
		owners:        gormstore.NewOwnerStore(db),
		keys:          gormstore.NewKeyStore(db),
		phrases:       phrases,
		listening:     phrases,
		matches:       matches,
		backlog:       matches,
		accounts:      gormstore.NewAccountStore(db),
		webhooks:      webhooks,
		channels:      gormstore.NewChannelStore(db),
		deliveries:    webhooks,
		leases:        gormstore.NewLeaseStore(db),
		alerts:        gormstore.NewAlertStore(db),
		reddit:        gormstore.NewRedditStore(db),
		accountHealth: gormstore.NewAccountHealthStore(db),
		notifications: gormstore.NewNotificationStore(db),
		sessions:      gormstore.NewSessionStore(db),
		triage:        gormstore.NewTriageStore(db),
		trends:        gormstore.NewTrendStore(db),
		recent:        gormstore.NewRecentStore(db),
		archives:      gormstore.NewFilterArchiveStore(db),
	}
}

// newRateLimiter counts in memory on SQLite (one process) and in the
// database on Postgres, where replicas must share one count per key; the
// database's windows are swept by runLoops.
func newRateLimiter(db *gormstore.DB) ports.RateLimiter {
	if !db.Postgres() {
		return ratelimit.NewMemory(nil)
	}
	return gormstore.NewRateLimiter(db)
}

// newMetrics is the Prometheus registry, with gauges of the work queues
// read at scrape time.
func newMetrics(db *gormstore.DB) *metrics.Registry {
	r := metrics.New()
	// A depth that cannot be read is -1, which a dashboard shows as
	// broken rather than as an empty queue.
	// One scrape reads the three gauges: they are read together once and
	// kept for a second, so a scrape costs one read and its values agree.
	var (
		mu   sync.Mutex
		last time.Time
		g    gormstore.Gauges
	)
	read := func() gormstore.Gauges {
		mu.Lock()
		defer mu.Unlock()
		if time.Since(last) < time.Second {
			return g
		}
		ctx, cancel := context.WithTimeout(context.Background(), gaugeWait)
		defer cancel()
		var err error
		if g, err = db.Gauges(ctx); err != nil {
			g = gormstore.Gauges{Unscored: -1, Queued: -1}
		}
		last = time.Now()
		return g
	}
	r.Gauge("earshot_unscored_matches", "Matches stored and not scored yet: the scoring queue.", func() float64 {
		return float64(read().Unscored)
	})
	r.Gauge("earshot_queued_deliveries", "Webhook deliveries waiting for a try: the delivery queue.", func() float64 {
		return float64(read().Queued)
	})
	r.Gauge("earshot_oldest_queued_delivery_seconds", "Age of the oldest queued webhook delivery; 0 when none, -1 when it cannot be read.", func() float64 {
		g := read()
		switch {
		case g.Queued < 0:
			return -1
		case g.OldestQueued.IsZero():
			return 0
		}
		return time.Since(g.OldestQueued).Seconds()
	})
	return r
}

// gaugeWait bounds the read of the queue gauges, so a database that does
// not answer (a table locked by a migration, a lost connection) leaves
// them at -1 rather than holding every scrape, and the other metrics
// with it, until it does.
const gaugeWait = 5 * time.Second

func newSealer(cfg Config, log *slog.Logger) (*core.Sealer, error) {
	key, err := SecretKey(cfg, log)
	if err != nil {
		return nil, err
	}
	return core.NewSealer(key)
}

// newKeys reads the secret key once and makes what the server keys with
// it: the sealer of secrets at rest, and the alert emails' stop links,
// whose MAC key is derived from it under a label of its own.
func newKeys(cfg Config, log *slog.Logger) (*core.Sealer, *app.AlertLinks, error) {
	key, err := SecretKey(cfg, log)
	if err != nil {
		return nil, nil, err
	}
	sealer, err := core.NewSealer(key)
	if err != nil {
		return nil, nil, err
	}
	links, err := app.NewAlertLinks(key)
	return sealer, links, err
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
func newWebhookSender(cfg Config, log *slog.Logger) *webhooksender.Sender {
	if cfg.WebhookAllowPrivate {
		log.Warn("EARSHOT_WEBHOOK_ALLOW_PRIVATE is on: webhooks may target http, IP, loopback and private addresses; never use this in production")
	}
	return webhooksender.New(webhooksender.Config{Timeout: cfg.WebhookTimeout, AllowPrivate: cfg.WebhookAllowPrivate, TelegramAPI: cfg.TelegramAPI})
}

// newMailer sends through EARSHOT_SMTP_URL, or writes alerts to the log
// when it is unset.
func newMailer(cfg Config, log *slog.Logger) (ports.Mailer, error) {
	if cfg.SMTPURL == "" {
		return smtpmail.NewLogMailer(log), nil
	}
	return smtpmail.New(cfg.SMTPURL, cfg.MailFrom, log)
}

func newRedditSource(cfg Config, log *slog.Logger) (ports.RedditSource, error) {
	return reddit.New(reddit.Config{
		BaseURL: cfg.RedditBaseURL, ClientID: cfg.RedditClientID, ClientSecret: cfg.RedditClientSecret,
		UserAgent: cfg.RedditUserAgent, MirrorURL: cfg.RedditMirrorURL, MirrorAPI: cfg.RedditMirrorAPI,
		Interval: cfg.RedditInterval, Logger: log,
		KeylessPerMinute: cfg.RedditKeylessPerMinute, RefusedRest: cfg.RedditRefusedRest,
	})
}

// newHolder names this process in leases.
func newHolder() string {
	host, _ := os.Hostname()
	k, _ := randomKey()
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), k[:8])
}

// newMockHandler is the legacy mock management API, seeded, its state in
// cfg.MockState when set.
func newMockHandler(cfg Config, log *slog.Logger) (http.Handler, error) {
	srv, err := legacymock.New(legacymock.Config{StatePath: cfg.MockState, Logger: log})
	if err != nil {
		return nil, err
	}
	return srv.Handler(), nil
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
