package server

// This file is the composition root: what each command runs, built from
// the settings top to bottom with app's plain constructors. fx runs the
// lifecycle (hooks start in the order they are added and stop in
// reverse, a failed start stops what started) and checks the few values
// it passes between these functions (fx.ValidateApp).

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"

	"github.com/earshothq/earshot/adapters/bus"
	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/adapters/llmscorer"
	"github.com/earshothq/earshot/adapters/metrics"
	"github.com/earshothq/earshot/adapters/ratelimit"
	"github.com/earshothq/earshot/adapters/smtpmail"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Serve returns the fx application of `earshot serve`. Bootstrap keys go
// to out; logs go to log.
func Serve(cfg Config, log *slog.Logger, out io.Writer, extra ...fx.Option) *fx.App {
	return fx.New(append(serveOptions(cfg, log, out), extra...)...)
}

// serveOptions is the whole option list of `earshot serve`, so the wiring
// test validates exactly what runs.
func serveOptions(cfg Config, log *slog.Logger, out io.Writer) []fx.Option {
	return []fx.Option{
		lifecycle(cfg, log),
		fx.Provide(func() io.Writer { return out }),
		fx.Provide(newSite, openDB, newMetrics, newScorer, newServices, newAPI, newHelper, newDashboard, newRootHandler),
		// These add their hooks in this order, after the database's
		// (openDB) and the bus's (newServices). So on stop the dashboard's
		// live streams end, the server waits for the requests in flight,
		// the loops stop, and the bus and then the database close; at
		// start the first owner's keys are printed once the server
		// listens, under the address bound.
		fx.Invoke(runLoops, startServer, stopLive, printBootstrap),
	}
}

// Mock returns the fx application of `earshot mock`: the legacy mock
// management API at the root, seeded, its state in cfg.MockState when set.
func Mock(cfg Config, log *slog.Logger) *fx.App { return fx.New(mockOptions(cfg, log)...) }

func mockOptions(cfg Config, log *slog.Logger) []fx.Option {
	return []fx.Option{
		lifecycle(cfg, log),
		fx.Provide(newSite, newMockHandler),
		fx.Invoke(startServer),
	}
}

// lifecycle is what the applications of serve and mock start from: the
// settings, the logger, fx's own log silenced and the stop's time limit.
func lifecycle(cfg Config, log *slog.Logger) fx.Option {
	return fx.Options(
		fx.Supply(cfg, log),
		fx.WithLogger(func() fxevent.Logger { return fxevent.NopLogger }),
		fx.StopTimeout(30*time.Second),
	)
}

// services are the use cases `earshot serve` runs: the console's, and
// those the server and its loops add.
type services struct {
	Console
	Matches       *app.Matches
	Inbox         *app.Inbox
	Ingest        *app.Ingest
	Backlog       *app.Backlog
	Notifications *app.Notifications
	AccountHealth *app.AccountHealth
	Deliveries    *app.DeliveryWorker
	Webhooks      *app.Webhooks
	Channels      *app.Channels
	Digests       *app.ChannelDigests
	Scoring       *app.Scoring
	Poller        *app.Reddit
	Alerts        *app.Alerts
	Addresses     *app.AddressChanges
	Trends        *app.Trends
	Window        *app.Window

	limiter ports.RateLimiter
	bus     *bus.Bus
	// abandoned is closed when the start gave up waiting for a step on
	// the bus (backgroundAfter), which the bus's Close would wait for.
	abandoned chan struct{}
	abandon   sync.Once
	log       *slog.Logger
}

// newServices builds every use case of `earshot serve` over the database,
// each after the ones it tells of its work: a webhook switched off
// becomes its owner's notification, a score stored wakes the delivery
// worker, a new-match event (or the bus dropping one) wakes scoring.
func newServices(lc fx.Lifecycle, cfg Config, log *slog.Logger, db *gormstore.DB, reg *metrics.Registry, scorer ports.Scorer,
	site *Site) (*services, error) {
	st := newStores(db)
	clock := ports.SystemClock{}
	sender := newWebhookSender(cfg, log)
	sealer, links, err := newKeys(cfg, log)
	if err != nil {
		return nil, err
	}
	mailer, err := newMailer(cfg, log)
	if err != nil {
		return nil, err
	}
	limiter := newRateLimiter(db)
	// Links are made under the site address as bound.
	siteURL := site.URL
	s := &services{limiter: limiter, abandoned: make(chan struct{}), log: log}
	s.Console = newConsole(db, st, cfg, sealer, app.SessionDeps{Mailer: mailer, Limiter: limiter, Log: log}, siteURL)
	s.Matches = app.NewMatches(st.matches)
	s.Inbox = app.NewInbox(st.triage)
	s.Trends = app.NewTrends(st.trends, st.phrases, clock)
	s.Notifications = app.NewNotifications(app.NotificationDeps{Store: st.notifications, Owners: st.owners, Mailer: mailer, Clock: clock,
		Log: log}, siteURL)
	s.AccountHealth = app.NewAccountHealth(app.AccountHealthDeps{Accounts: st.accounts, Store: st.accountHealth, Clock: clock,
		Notified: s.Notifications.Poke}, cfg.Limits)
	s.Deliveries = app.NewDeliveryWorker(app.DeliveryDeps{Queue: st.deliveries, Sender: sender, Channels: sender, Sealer: sealer, Clock: clock,
		Log: log, Metrics: reg, SwitchedOff: s.Notifications.SwitchedOff, SiteURL: siteURL},
		app.DeliveryConfig{Schedule: cfg.WebhookRetrySchedule, Timeout: cfg.WebhookTimeout})
	s.Webhooks = app.NewWebhooks(app.WebhookDeps{Store: st.webhooks, Sender: sender, Sealer: sealer, Clock: clock, Log: log,
		Metrics: reg, Owners: st.owners, Wake: s.Deliveries.Poke, Off: s.Deliveries.Off},
		app.WebhookConfig{Limits: cfg.Limits, AllowPrivate: cfg.WebhookAllowPrivate})
	s.Digests = app.NewChannelDigests(app.ChannelDigestDeps{Store: st.channels, Clock: clock, Log: log, Wake: s.Deliveries.Poke,
		SiteURL: siteURL})
	s.Channels = app.NewChannels(app.ChannelDeps{Webhooks: s.Webhooks, Store: st.channels, Sender: sender, Digests: s.Digests})
	s.Scoring = app.NewScoring(app.ScoringDeps{Matches: st.matches, Scorer: scorer, Log: log, Metrics: reg,
		Scored: s.Deliveries.Scored}, scoringConfig(cfg))
	s.bus, err = bus.Open(cfg.BusURL, bus.Config{Logger: log, Group: bus.DefaultGroup, QueuePrefix: cfg.BusPrefix,
		Dropped: app.BusDrops{Metrics: reg, Scoring: s.Scoring}.Dropped})
	if err != nil {
		return nil, err
	}
	lc.Append(fx.StopHook(s.closeBus))
	holder := newHolder()
	// Every post read is kept in its owner's window, which fills a
	// phrase as it is added.
	s.Window = app.NewWindow(app.WindowDeps{Recent: st.recent, Archives: st.archives, Phrases: st.phrases, Publisher: s.bus,
		Limiter: limiter, Leases: st.leases, Holder: holder, Clock: clock, Log: log, Metrics: reg}, windowConfig(cfg))
	s.Phrases.OnAdd(s.Window.Added)
	s.Backlog = app.NewBacklog(st.backlog, cfg.IngestBacklog, log)
	s.Ingest = app.NewIngest(app.IngestDeps{Matches: st.matches, Accounts: st.accounts, Matchers: app.NewMatchers(st.listening),
		Publisher: s.bus, Log: log, Metrics: reg, Backlog: s.Backlog, Window: s.Window}, cfg.Limits)
	source, err := newRedditSource(cfg, log)
	if err != nil {
		return nil, err
	}
	s.Poller = app.NewReddit(app.RedditDeps{Phrases: st.listening, Matches: st.matches, Source: source, Checkpoints: st.reddit,
		Leases: st.leases, Publisher: s.bus, Clock: clock, Log: log, Metrics: reg, Sources: reg, Holder: holder,
		Overlap: cfg.RedditOverlap, Window: s.Window})
	s.Alerts = app.NewAlerts(app.AlertDeps{Store: st.alerts, Leases: st.leases, Mailer: mailer, Clock: clock, Log: log,
		Metrics: reg, Holder: holder}, app.AlertConfig{MinScore: cfg.AlertMinScore, SiteURL: siteURL, Links: links})
	s.Addresses = app.NewAddressChanges(app.AddressChangeDeps{Owners: st.owners, Mailer: mailer, Limiter: limiter, Clock: clock,
		Log: log, SiteURL: siteURL})
	return s, nil
}

// closeBus closes the bus and waits for it, unless the start gave up on
// a subscription still waiting for the broker: Close waits for that
// subscription, which the AMQP library lets wait without end on a broker
// that never answers it. The bus is then left closing, and its
// connections end with the process; nothing was consumed on them.
func (s *services) closeBus(ctx context.Context) error {
	closed := make(chan error, 1)
	go func() { closed <- s.bus.Close() }()
	select {
	case err := <-closed:
		return err
	case <-s.abandoned:
		s.log.Warn("stopping: the bus's connections close with the process: a subscription still waits for the broker")
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// windowConfig is the window of recent posts the settings bound.
func windowConfig(cfg Config) app.WindowConfig {
	return app.WindowConfig{Days: cfg.RecentDays, Posts: cfg.RecentPosts}
}

// scoringConfig scores as many matches at once as the scorer gains from:
// one per processor for the rules, as many as the model takes in flight
// for the LLM scorer. A model call can take seconds, so the LLM scorer
// claims four calls' worth per worker: a batch then ends well within the
// lease that keeps other replicas off its matches.
func scoringConfig(cfg Config) app.ScoringConfig {
	// The rules score a batch within milliseconds, so a claim needs only
	// a short lease, and a killed process's claims are free again soon.
	// A batch is a thousand: each batch's scores are one transaction, and
	// on SQLite that transaction waits its turn with ingest's, so smaller
	// batches fall behind a fast ingest (docs/adr/0005-scoring-in-batches.md).
	sc := app.ScoringConfig{Interval: cfg.ScoringInterval, Workers: runtime.GOMAXPROCS(0), Lease: rulesLease, Batch: rulesBatch}
	if cfg.LLMURL != "" {
		sc.Workers = llmscorer.DefaultMaxInFlight
		sc.Batch = 4 * sc.Workers
		sc.Lease = app.DefaultScoreLease
	}
	return sc
}

// rulesLease and rulesBatch are the claim lease and batch of the
// rule-based scorer.
const (
	rulesLease = 5 * time.Second
	rulesBatch = 1000
)

// notificationSweep is how often owed notification emails are looked
// for; a new one wakes the sender at once, so this only catches retries
// and what another replica left.
const notificationSweep = time.Minute

// queueVacuum is how often the Postgres work queues are vacuumed
// (gormstore.DB.VacuumQueues).
const queueVacuum = 5 * time.Second

// matchVacuum is how often the counts of matches are read to tell
// whether it wants a vacuum (gormstore.DB.VacuumMatches).
const matchVacuum = 10 * time.Second

// runLoops runs every background loop for the life of the app, each
// waited for on stop so that none is still at work when the bus and the
// database close. Scoring listens for new matches first, and the app
// does not start when it cannot; the delivery worker lets the sends
// under way finish; the session loop sends the sign-in links asked for,
// the backlog watcher counts the matches waiting for a score, and the
// sweeps keep the tables as small as what is in use. On Postgres
// the rate windows are swept, the delivery queue's indexes vacuumed
// free of dead entries, and matches vacuumed as autovacuum would.
func runLoops(lc fx.Lifecycle, cfg Config, log *slog.Logger, s *services) {
	backgroundAfter(lc, func(ctx context.Context) error { return s.Scoring.Listen(ctx, s.bus) }, s.Scoring.Run,
		func() { s.abandon.Do(func() { close(s.abandoned) }) })
	background(lc, func(ctx context.Context) { s.Poller.Run(ctx, cfg.RedditInterval) })
	background(lc, func(ctx context.Context) { s.Alerts.Run(ctx, cfg.AlertInterval) })
	background(lc, s.Deliveries.Run)
	background(lc, func(ctx context.Context) { s.Digests.Run(ctx, app.DefaultDigestSweep) })
	background(lc, s.Backlog.Run)
	background(lc, s.Window.Run)
	background(lc, func(ctx context.Context) { s.Notifications.Run(ctx, notificationSweep) })
	if l, ok := s.limiter.(*gormstore.RateLimiter); ok {
		every(lc, log, time.Minute, "sweeping rate windows", l.SweepRateWindows)
	}
	background(lc, s.Sessions.Run)
	every(lc, log, time.Hour, "sweeping dashboard sessions", func(ctx context.Context) error {
		_, err := s.Sessions.Sweep(ctx)
		return err
	})
	if s.db.Postgres() {
		every(lc, log, queueVacuum, "vacuuming the delivery queue", s.db.VacuumQueues)
		every(lc, log, matchVacuum, "vacuuming matches", func(ctx context.Context) error {
			_, err := s.db.VacuumMatches(ctx)
			return err
		})
	}
}

// every runs app.Sweep for the life of the app, as background does.
func every(lc fx.Lifecycle, log *slog.Logger, period time.Duration, what string, sweep func(ctx context.Context) error) {
	background(lc, func(ctx context.Context) { app.Sweep(ctx, period, log, what, sweep) })
}

// background runs loop in a goroutine for the life of the app. On stop it
// cancels the loop's context and waits for it to return, so no loop is
// still at work when the database closes.
func background(lc fx.Lifecycle, loop func(ctx context.Context)) { backgroundAfter(lc, nil, loop, nil) }

// backgroundAfter is background with a first step run at start under the
// loop's context (a subscription, say); when it fails the app does not
// start and the loop never runs. The start waits for the step only while
// the start lasts (see WithStartAbort): a broker that opens the
// connection and never answers the subscription would otherwise hold
// the start, and a stop asked for meanwhile, for as long as the step
// itself waits, which the AMQP library does without a context. A step
// given up on is left to end by itself; its loop's context has ended,
// so a subscription it makes after all ends at once; abandoned, when
// set, is called first.
func backgroundAfter(lc fx.Lifecycle, first func(ctx context.Context) error, loop func(ctx context.Context), abandoned func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	lc.Append(fx.Hook{
		OnStart: func(start context.Context) error {
			if first != nil {
				if gaveUp, err := waitStep(start, func() error { return first(ctx) }); err != nil {
					if gaveUp && abandoned != nil {
						abandoned()
					}
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

// startAbortKey is the key under which the context App.Start is given
// carries the start's abort (WithStartAbort).
type startAbortKey struct{}

// WithStartAbort returns ctx, for App.Start, carrying abort: the start's
// steps that wait on a peer give up when abort ends (with its cause),
// the start fails, and fx stops what had started under ctx, which must
// outlast abort by the time that stop may take. Ending ctx itself would
// leave that stop undone: fx stops a failed start under the start's own
// context, and runs no hook once it has ended.
func WithStartAbort(ctx, abort context.Context) context.Context {
	return context.WithValue(ctx, startAbortKey{}, abort)
}

// waitStep runs step and waits for it until it returns or the start
// ends (untilAbort); then it gives up, returning the cause without
// waiting further. The step goes on in the background.
func waitStep(start context.Context, step func() error) (gaveUp bool, err error) {
	ctx, cancel := untilAbort(start)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- step() }()
	select {
	case err := <-done:
		return false, err
	case <-ctx.Done():
		return true, fmt.Errorf("start cut short: %w", context.Cause(ctx))
	}
}

// untilAbort returns a context that ends with start or with the abort it
// carries (WithStartAbort), with that one's cause.
func untilAbort(start context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(start)
	abort, ok := start.Value(startAbortKey{}).(context.Context)
	if !ok {
		return ctx, func() { cancel(nil) }
	}
	unlink := context.AfterFunc(abort, func() { cancel(context.Cause(abort)) })
	return ctx, func() { unlink(); cancel(nil) }
}

// abortCause is err, of a step run under untilAbort's ctx, as the start
// reports it: when ctx has ended, the database said only "context
// canceled", so the abort's cause is returned, as waitStep does, and
// serve reads a signal's as a stop asked for, not a failed start.
func abortCause(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	return fmt.Errorf("start cut short: %w (%v)", context.Cause(ctx), err)
}

// printBootstrap creates the first owner on an empty database and prints
// its keys once on out. Once Bootstrap returns them they are stored and
// no later start makes them again, so they are printed whatever follows:
// a sign-in link that cannot be made is left to the console.
func printBootstrap(lc fx.Lifecycle, cfg Config, log *slog.Logger, s *services, out io.Writer, site *Site) {
	if !cfg.Bootstrap {
		log.Info("bootstrap skipped", "reason", "EARSHOT_BOOTSTRAP=false")
		return
	}
	lc.Append(fx.StartHook(func(start context.Context) error {
		// The start's abort ends the database's wait too (on Postgres).
		ctx, cancel := untilAbort(start)
		defer cancel()
		b, err := s.Owners.Bootstrap(ctx)
		if err != nil {
			return abortCause(ctx, err)
		}
		if b == nil {
			// The reminder first, so that whoever waits for the skip
			// has it too.
			s.remindUnseenKeys(ctx, log)
			log.Info("bootstrap skipped", "reason", "the database has an owner")
			return nil
		}
		link, linkErr := s.Sessions.LoginLink(ctx, b.Owner.ID)
		if linkErr != nil {
			log.Warn("first start: no dashboard sign-in link made", "owner", b.Owner.ID, "err", linkErr)
			link = "not made now; earshot admin owner login-link --owner " + b.Owner.ID + " prints one"
		} else {
			link += " (works once, within 15 minutes)"
		}
		_, printErr := fmt.Fprintf(out, `earshot: first start, created owner %s (%s). These keys are shown once:
  API key (every scope): %s
  ingest key:            %s
  dashboard sign-in:     %s
Try:
  curl -H "Authorization: Bearer %s" %s/api/v1/me
`, b.Owner.ID, b.Owner.Email, b.APIKey, b.IngestKey, link, b.APIKey, site.URL())
		if printErr != nil {
			log.Warn("first start: the keys could not be printed and are not shown again; make new ones",
				append([]any{"err", printErr}, newKeyCommands(b.Owner.ID)...)...)
		}
		if linkErr != nil && ctx.Err() != nil {
			// A stop asked for during the link: the keys are out, the
			// start ends as any start cut short does.
			return abortCause(ctx, linkErr)
		}
		return nil
	}))
}

// remindUnseenKeys names the commands that make the first owner's keys
// again while none of its keys has been used. Its keys are stored before
// they are printed, and a start that stops in between (killed, its
// stdout gone) leaves keys no one saw and no later start prints; a
// database cannot tell that start from one whose keys were seen and are
// not in use yet, so the reminder says both. Reading fails quietly: it
// is advice, and the start goes on.
func (s *services) remindUnseenKeys(ctx context.Context, log *slog.Logger) {
	// Counted first: a deployment of many owners is not read whole.
	if n, err := gormstore.NewOwnerStore(s.db).CountOwners(ctx); err != nil || n != 1 {
		return
	}
	owners, err := s.Owners.List(ctx)
	if err != nil || len(owners) != 1 || owners[0].Email != app.BootstrapEmail {
		return
	}
	id := owners[0].ID
	for _, kind := range []core.KeyKind{core.APIKey, core.IngestKey} {
		keys, err := s.Keys.List(ctx, id, kind)
		if err != nil {
			return
		}
		for _, k := range keys {
			if !k.LastUsedAt.IsZero() {
				return
			}
		}
	}
	log.Info("the first owner's keys were printed once, by the start that made them, and none is used yet; "+
		"if that start stopped before printing them, make new ones", newKeyCommands(id)...)
}

// newKeyCommands are the log attributes naming the console commands that
// make an owner an API key of every scope and an ingest key.
func newKeyCommands(ownerID string) []any {
	scopes := make([]string, len(core.AllScopes))
	for i, sc := range core.AllScopes {
		scopes[i] = string(sc)
	}
	return []any{"owner", ownerID,
		"new_api_key", "earshot admin key create --owner " + ownerID + " --name first --scopes " + strings.Join(scopes, ","),
		"new_ingest_key", "earshot admin ingest-key create --owner " + ownerID}
}

// Console is the admin console's set of services over an open database,
// built as `earshot serve` builds them.
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
// They are short-lived programs with nothing to start or stop but the
// database, so they need no fx application. Postgres must answer the
// read of the schema's version within bound (gormstore.Open bounds the
// connect and the first statement after it); a pending migration is
// never cut, as `earshot migrate`'s is not.
func OpenConsole(ctx context.Context, cfg Config, bound time.Duration) (*Console, error) {
	db, err := gormstore.Open(cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	if err := migrateBehind(ctx, db, bound); err != nil {
		db.Close()
		return nil, err
	}
	// Its logs (the secret key's warning) follow EARSHOT_LOG_FORMAT and
	// EARSHOT_LOG_LEVEL on stderr, as every other command's do.
	log := NewLogger(cfg.LogFormat, cfg.LogLevel, os.Stderr)
	sealer, err := newSealer(cfg, log)
	if err != nil {
		db.Close()
		return nil, err
	}
	// The console only prints links; it sends no mail.
	st := newStores(db)
	con := newConsole(db, st, cfg, sealer,
		app.SessionDeps{Mailer: smtpmail.NewLogMailer(log), Limiter: ratelimit.NewMemory(nil)},
		func() string { return cfg.SiteURL })
	// A phrase added here is filled from the window by the server's next
	// sweep: the request waits in the database.
	con.Phrases.OnAdd(app.NewWindow(app.WindowDeps{Recent: st.recent, Log: log}, windowConfig(cfg)).Added)
	return &con, nil
}

// newConsole builds the services over the owners' own records; sessions
// names the mailer, limiter and logger sign-in uses.
func newConsole(db *gormstore.DB, st stores, cfg Config, sealer *core.Sealer, sessions app.SessionDeps, siteURL func() string) Console {
	clock := ports.SystemClock{}
	keys := app.NewKeys(st.keys, st.owners, clock)
	sessions.Store, sessions.Clock = st.sessions, clock
	return Console{
		Owners:   app.NewOwners(st.owners, keys),
		Keys:     keys,
		Phrases:  app.NewPhrases(st.phrases, cfg.Limits, clock),
		Accounts: app.NewAccounts(st.accounts, sealer, cfg.Limits),
		Reddit:   app.NewRedditHealth(st.listening, st.reddit, clock),
		Sessions: app.NewSessions(sessions, app.SessionConfig{Idle: cfg.SessionIdle, SiteURL: siteURL}),
		db:       db,
	}
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
