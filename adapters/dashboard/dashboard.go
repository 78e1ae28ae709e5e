package dashboard

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/health"
	"github.com/earshothq/earshot/ports"
)

// SessionService signs owners in and out. app.Sessions is one.
type SessionService interface {
	RequestLink(ctx context.Context, email, addr string) error
	SignIn(ctx context.Context, linkToken string) (string, core.Session, error)
	Authenticate(ctx context.Context, token string) (core.Session, error)
	SignOut(ctx context.Context, token string) error
	SignOutEverywhere(ctx context.Context, ownerID string) (int, error)
	Idle() time.Duration
}

// InboxService lists matches with their triage and changes it. app.Inbox
// is one.
type InboxService interface {
	List(ctx context.Context, ownerID string, q ports.InboxQuery) (ports.InboxPage, error)
	Changes(ctx context.Context, ownerID string, q ports.InboxQuery, after, scoredAfter time.Time, limit int) (created, scored []ports.InboxItem, err error)
	Set(ctx context.Context, ownerID, id string, c core.TriageChange) (core.Triage, error)
	SetMany(ctx context.Context, ownerID string, ids []string, c core.TriageChange) (int, error)
}

// MatchService reads one match. app.Matches is one.
type MatchService interface {
	Get(ctx context.Context, ownerID, id string) (core.Match, error)
}

// PhraseService manages phrases with the API's validation and limits.
// app.Phrases is one.
type PhraseService interface {
	AddWithFilters(ctx context.Context, ownerID, phrase, platform, community string, f core.PhraseFilters, idemKey string) (core.Phrase, bool, error)
	Get(ctx context.Context, ownerID, id string) (core.Phrase, error)
	List(ctx context.Context, ownerID string, f ports.PhraseFilter) ([]core.Phrase, error)
	SetStatus(ctx context.Context, ownerID, id, status string) (core.Phrase, error)
	Update(ctx context.Context, ownerID, id string, status *string, ch core.PhraseFiltersChange) (core.Phrase, error)
	Delete(ctx context.Context, ownerID, id string) error
	Plan(ctx context.Context, ownerID string) (core.Plan, error)
}

// KeyService makes, lists and revokes API and ingest keys. app.Keys is
// one.
type KeyService interface {
	CreateAPIKey(ctx context.Context, ownerID, name string, scopes []core.Scope) (string, core.Key, error)
	CreateIngestKey(ctx context.Context, ownerID, name string) (string, core.Key, error)
	List(ctx context.Context, ownerID string, kind core.KeyKind) ([]core.Key, error)
	RevokeOfKind(ctx context.Context, ownerID string, kind core.KeyKind, id string) error
}

// WebhookService manages webhooks with the API's rules and plan gate.
// app.Webhooks is one.
type WebhookService interface {
	Create(ctx context.Context, ownerID, url string, minScore *int, platforms []string) (core.Webhook, string, error)
	List(ctx context.Context, ownerID string) ([]core.Webhook, error)
	Update(ctx context.Context, ownerID, id string, ch ports.WebhookChange) (core.Webhook, error)
	Deliveries(ctx context.Context, ownerID, id string) ([]core.Delivery, error)
	// Test, Retry and Replay call take, one of the owner's dashboard
	// writes, once they have decided to send, and refuse with its error.
	Test(ctx context.Context, ownerID, id string, take func(context.Context) error) (ports.WebhookResult, error)
	Retry(ctx context.Context, ownerID, webhookID, deliveryID string, take func(context.Context) error) (core.Delivery, error)
	RotateSecret(ctx context.Context, ownerID, id string, overlap *time.Duration) (core.Webhook, string, error)
	Replay(ctx context.Context, ownerID, id string, from, to time.Time, take func(context.Context) error) (ports.ReplayResult, error)
	// Delete removes the webhook with its queued deliveries and its
	// delivery log. KindNotFound (another owner's, or a channel's),
	// KindPlanLimit.
	Delete(ctx context.Context, ownerID, id string) error
	// Gate is the plan's refusal of new webhooks and channels and of
	// sending them a message (KindPlanLimit), or nil. On a plan that
	// refuses them an owner who still has some may still list, change,
	// switch and delete them.
	Gate(ctx context.Context) error
}

// AccountService shows the health of the owner's accounts and clears a
// completed challenge. app.AccountHealth is one.
type AccountService interface {
	Accounts(ctx context.Context, ownerID string) ([]health.Status, error)
	Resolve(ctx context.Context, ownerID, accountID string) (health.Status, error)
}

// JarService stores the cookie jar an owner uploads for a platform's
// account, connecting the account within the plan limit, and returns how
// many of the platform's cookies it kept. Its errors never quote a cookie
// value. app.Accounts is one. KindInvalid, KindPlanLimit.
type JarService interface {
	SetSession(ctx context.Context, ownerID, platform string, jar []byte) (core.Account, int, error)
}

// NotificationService lists notifications, newest first, with the count
// of unread ones, and marks them read. The server adapts
// app.Notifications to it.
type NotificationService interface {
	List(ctx context.Context, ownerID string, limit int) ([]core.Notification, int, error)
	Unread(ctx context.Context, ownerID string) (int, error)
	MarkRead(ctx context.Context, ownerID, id string) error
	MarkAllRead(ctx context.Context, ownerID string) (int, error)
}

// RedditService tells how the server's reading of each watched reddit
// community goes: what `earshot admin reddit status` prints. It answers
// for the whole deployment; pages show only the communities the owner's
// phrases watch. The server adapts app.RedditHealth to it.
type RedditService interface {
	Communities(ctx context.Context) ([]CommunityHealth, error)
}

// CommunityHealth is one watched community's reading, both listings
// taken together (app.RedditStatus).
type CommunityHealth struct {
	Community     string
	Phrases       int    // listening phrases of every owner that watch it
	Via           string // the way the latest read was answered; empty before the first
	LastSuccessAt time.Time
	LastError     string
	LastErrorAt   time.Time
	ArchiveLag    time.Duration
	Behind        time.Duration
}

// AddressService shows the owner's own address and changes it through a
// link sent to the new one. app.AddressChanges is one.
type AddressService interface {
	Owner(ctx context.Context, ownerID string) (core.Owner, error)
	Request(ctx context.Context, ownerID, email string) error
	// Confirm also says whether the old address was told of the change.
	Confirm(ctx context.Context, token string) (o core.Owner, told bool, err error)
}

// Deps are the services behind the dashboard.
type Deps struct {
	Sessions SessionService
	Inbox    InboxService
	Matches  MatchService
	Phrases  PhraseService
	Keys     KeyService
	Webhooks WebhookService
	// Channels manages Slack, Discord, Telegram and ntfy channels beside
	// the webhooks; nil leaves them out.
	Channels      ChannelService
	Accounts      AccountService
	Notifications NotificationService
	// Addresses changes the owner's own address (the Account page).
	Addresses AddressService
	// AlertSchedules sets how often alert emails go out (the Account
	// page); nil leaves the form out.
	AlertSchedules AlertScheduleService
	// AlertsOff checks and uses the links in alert emails that turn them
	// off; nil answers those links 404.
	AlertsOff AlertsOffService
	// Reddit shows the owner's communities on the accounts page; nil
	// leaves them out.
	Reddit RedditService
	// Limiter counts the owner's dashboard writes (see limitWrites); nil
	// leaves them uncounted.
	Limiter ports.RateLimiter
	// Jars takes cookie jars uploaded on the accounts page; nil leaves
	// the upload forms out.
	Jars JarService
	// Exports downloads the inbox's view as a file; nil leaves the
	// download links out.
	Exports ExportService
	// Trends draws the trends page; nil leaves the page out.
	Trends TrendService
	// Window previews phrases and filters and applies filters to
	// matches; nil leaves the preview buttons and the offer out.
	Window WindowService
}

// Config is the dashboard's part of the settings.
type Config struct {
	// SecureCookies marks the session cookie Secure and names it with
	// the __Host- prefix: set when the site address is https.
	SecureCookies bool
	Logger        *slog.Logger
	// LivePoll is how often a live inbox asks the database for news; 0
	// means 2 seconds.
	LivePoll time.Duration
	// MaxStreams bounds the live connections of the process, and
	// MaxStreamsPerOwner those of one owner; 0 means 200 and 8.
	MaxStreams, MaxStreamsPerOwner int
	// StreamLifetime ends a live connection after a while, so that
	// connections spread again over replicas; the browser reconnects
	// where it left off. 0 means 10 minutes.
	StreamLifetime time.Duration
	// Now is the clock of relative times on pages; nil means time.Now.
	Now func() time.Time
	// RateLimit is how many writes an owner may make through the
	// dashboard in a minute; 0 means 60.
	RateLimit int
	// SiteURL returns the deployment's site address, written into the
	// command the accounts page gives for running a helper. It is a func
	// because the address may be known only once the server listens.
	SiteURL func() string
}

// Dashboard serves /app/ and the redirect of /.
type Dashboard struct {
	cfg     Config
	deps    Deps
	pages   *pages
	handler http.Handler

	mu        sync.Mutex
	streams   int
	byOwner   map[string]int
	exporting map[string]bool // owners with an export running
	stop      chan struct{}
	stopped   bool
}

// New returns the dashboard handler. It fails only when its embedded
// templates do not parse.
func New(cfg Config, deps Deps) (*Dashboard, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.LivePoll <= 0 {
		cfg.LivePoll = 2 * time.Second
	}
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = 200
	}
	if cfg.MaxStreamsPerOwner <= 0 {
		cfg.MaxStreamsPerOwner = 8
	}
	if cfg.StreamLifetime <= 0 {
		cfg.StreamLifetime = 10 * time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.RateLimit <= 0 {
		cfg.RateLimit = 60
	}
	p, err := loadPages()
	if err != nil {
		return nil, err
	}
	d := &Dashboard{cfg: cfg, deps: deps, pages: p, byOwner: map[string]int{}, exporting: map[string]bool{}, stop: make(chan struct{})}
	d.handler = d.routes()
	return d, nil
}

// Paths lists the patterns the dashboard serves, for the server's mux.
func (d *Dashboard) Paths() []string { return []string{"/app/", "GET /{$}", "GET /favicon.ico"} }

// ServeHTTP implements http.Handler.
func (d *Dashboard) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.handler.ServeHTTP(w, r) }

// Close ends the live connections, so a server shutting down does not
// wait for them. Later ones are refused.
func (d *Dashboard) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.stopped {
		d.stopped = true
		close(d.stop)
	}
	return nil
}
