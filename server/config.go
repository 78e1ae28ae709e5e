package server

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/earshothq/earshot/clientip"
	"github.com/earshothq/earshot/core"
)

// Version is the program version, shown in the default reddit User-Agent.
var Version = "0.1.0"

// Config holds every setting of the operator contract. Each is an
// environment variable with a flag of the same name in kebab case
// (EARSHOT_DATABASE_URL and --database-url); a flag wins over the variable.
type Config struct {
	Addr        string
	SiteURL     string
	DatabaseURL string
	BusURL      string
	BusPrefix   string
	SecretKey   string
	Limits      core.Limits
	RateLimit   int
	// TrustedProxies are the load balancers whose X-Forwarded-For names
	// the client of a request; empty, the connection's address does.
	TrustedProxies clientip.Proxies

	HelperRateLimit int
	IngestBacklog   int

	RecentDays  int
	RecentPosts int

	ScoringInterval time.Duration

	RedditInterval     time.Duration
	RedditBaseURL      string
	RedditClientID     string
	RedditClientSecret string
	RedditUserAgent    string
	RedditMirrorURL    string
	RedditMirrorAPI    string
	RedditOverlap      time.Duration

	RedditKeylessPerMinute int
	RedditRefusedRest      time.Duration

	WebhookRetrySchedule []time.Duration
	WebhookTimeout       time.Duration
	WebhookAllowPrivate  bool
	TelegramAPI          string

	AlertInterval time.Duration
	AlertMinScore int
	SMTPURL       string
	MailFrom      string

	ProxyURL      string
	ProxyRequired bool

	LLMURL    string
	LLMModel  string
	LLMAPIKey string

	SessionIdle time.Duration

	LogFormat string
	LogLevel  slog.Level
	Bootstrap bool
	MockState string
}

// SiteHTTPS says whether the site address is https, as read from its
// scheme: the session cookie is then Secure and __Host- prefixed.
func (c Config) SiteHTTPS() bool {
	u, err := url.Parse(c.SiteURL)
	return err == nil && u.Scheme == "https"
}

// setting is one row of the contract: its variable, default and parser.
type setting struct {
	env, def, usage string
	set             func(c *Config, v string) error
}

func (s setting) flagName() string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(s.env, "EARSHOT_")), "_", "-")
}

var settings = []setting{
	{"EARSHOT_ADDR", "127.0.0.1:8080", "listen address, host:port", func(c *Config, v string) error {
		// The port is a number the listener can bind (0 picks one), so a
		// mistake stops the program here, naming the setting, rather than
		// at start in the listener's words.
		host, port, err := net.SplitHostPort(v)
		if _, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil || !listenHost(host) {
			return errors.New("accepts host:port, for example 127.0.0.1:8080")
		}
		c.Addr = v
		return nil
	}},
	{"EARSHOT_SITE_URL", "", "public address used in links (default http:// + addr)", func(c *Config, v string) error {
		if v == "" {
			return nil
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.ForceQuery {
			return errors.New("accepts an http or https URL, for example https://listen.example.com")
		}
		// Once, here, in the form browsers compare: url.Parse lowers the
		// scheme, the host is lowered too, and links add their own slash.
		u.Host = strings.ToLower(u.Host)
		u.Path, u.RawPath = strings.TrimRight(u.Path, "/"), ""
		c.SiteURL = u.String()
		return nil
	}},
	{"EARSHOT_DATABASE_URL", "sqlite://earshot.db", "sqlite://PATH, sqlite://:memory: or postgres://...", func(c *Config, v string) error {
		switch {
		case strings.HasPrefix(v, "sqlite://") && len(v) > len("sqlite://"):
		case strings.HasPrefix(v, "postgres://"), strings.HasPrefix(v, "postgresql://"):
			if _, err := url.Parse(v); err != nil {
				return errors.New("accepts sqlite://PATH, sqlite://:memory: or a postgres:// URL; this one does not parse")
			}
		default:
			return errors.New("accepts sqlite://PATH, sqlite://:memory: or a postgres:// URL")
		}
		c.DatabaseURL = v
		return nil
	}},
	{"EARSHOT_BUS_URL", "memory://", "memory:// or amqp://user:pass@host:5672/", func(c *Config, v string) error {
		if v != "memory://" && !strings.HasPrefix(v, "amqp://") && !strings.HasPrefix(v, "amqps://") {
			return errors.New("accepts memory:// or amqp://user:pass@host:5672/")
		}
		// As the bus reads it (url.Parse, then the AMQP client's own
		// parser), so one it would refuse stops the program here, naming
		// the setting, rather than after the database was opened.
		if v != "memory://" {
			if _, err := url.Parse(v); err != nil {
				return errors.New("accepts memory:// or amqp://user:pass@host:5672/; this one does not parse")
			}
			if _, err := amqp.ParseURI(v); err != nil {
				return errors.New("accepts memory:// or amqp://user:pass@host:5672/ (with a numeric port and the client's query parameters); this one does not parse")
			}
		}
		c.BusURL = v
		return nil
	}},
	{"EARSHOT_BUS_PREFIX", "earshot", "prefix of queue and exchange names, so deployments can share a broker", func(c *Config, v string) error {
		refused := fmt.Errorf("accepts letters, digits, underscores, hyphens and dots, at most %d", maxBusPrefix)
		// The bus names nothing with a prefix past maxBusPrefix bytes.
		if len(v) > maxBusPrefix {
			return refused
		}
		for _, r := range v {
			if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
				return refused
			}
		}
		c.BusPrefix = v
		return nil
	}},
	{"EARSHOT_SECRET_KEY", "", "key that encrypts cookie jars and webhook secrets at rest (at least 32 bytes; generated into the data dir when empty)", func(c *Config, v string) error {
		if v != "" && len(v) < 32 {
			return errors.New("accepts a secret of at least 32 bytes, for example the output of: openssl rand -hex 32")
		}
		c.SecretKey = v
		return nil
	}},
	{"EARSHOT_PLAN_PHRASES_PER_PLATFORM", "1", "plan limit: phrases per platform", intSetting(0, 100000, func(c *Config, n int) { c.Limits.PhrasesPerPlatform = n })},
	{"EARSHOT_PLAN_ACCOUNTS_PER_PLATFORM", "1", "plan limit: accounts per platform", intSetting(0, 100000, func(c *Config, n int) { c.Limits.AccountsPerPlatform = n })},
	{"EARSHOT_PLAN_WEBHOOKS_PER_PERSON", "0", "plan limit: webhooks per owner (0: webhooks answer 403 plan_limit)", intSetting(0, 100000, func(c *Config, n int) { c.Limits.WebhooksPerPerson = n })},
	{"EARSHOT_RATE_LIMIT_PER_MINUTE", "60", "requests per key per minute on /api/v1", intSetting(1, 1000000, func(c *Config, n int) { c.RateLimit = n })},
	{"EARSHOT_TRUSTED_PROXIES", "", "comma-separated addresses and CIDRs of the load balancers in front; a request from one is counted under the client X-Forwarded-For names (empty: under the connection's address)", func(c *Config, v string) error {
		p, err := clientip.ParseProxies(v)
		if err != nil {
			return fmt.Errorf("accepts a comma-separated list of IP addresses and CIDRs, at most %d, none of length 0, for example 10.0.0.0/8,192.0.2.7 (%v)", clientip.MaxProxies, err)
		}
		c.TrustedProxies = p
		return nil
	}},
	{"EARSHOT_HELPER_RATE_LIMIT_PER_MINUTE", "60000", "requests per ingest key per minute on the helper endpoints", intSetting(1, 1000000, func(c *Config, n int) { c.HelperRateLimit = n })},
	{"EARSHOT_INGEST_BACKLOG", "20000", "unscored matches at which POST /ingest answers 503 with Retry-After until scoring catches up (0: never)", intSetting(0, 100000000, func(c *Config, n int) { c.IngestBacklog = n })},
	{"EARSHOT_RECENT_DAYS", "7", "days every post read is kept for previews and for filling new phrases (0: keep none)", intSetting(0, 365, func(c *Config, n int) { c.RecentDays = n })},
	{"EARSHOT_RECENT_POSTS", "1000000", "most recent posts kept per owner (0: keep none)", intSetting(0, 100000000, func(c *Config, n int) { c.RecentPosts = n })},
	{"EARSHOT_SCORING_INTERVAL", "10m", "backstop sweep for unscored matches", durationSetting(func(c *Config, d time.Duration) { c.ScoringInterval = d })},
	{"EARSHOT_REDDIT_INTERVAL", "10m", "reddit polling period", durationSetting(func(c *Config, d time.Duration) { c.RedditInterval = d })},
	{"EARSHOT_REDDIT_KEYLESS_PER_MINUTE", "10", "requests a minute to reddit without credentials, JSON and feeds together (reddit's answers lower it further)", intSetting(1, 100, func(c *Config, n int) { c.RedditKeylessPerMinute = n })},
	{"EARSHOT_REDDIT_REFUSED_REST", "1h", "how long keyless reddit JSON that refused (a block page, 403, 5xx, a time-out) is left alone", durationSetting(func(c *Config, d time.Duration) { c.RedditRefusedRest = d })},
	{"EARSHOT_REDDIT_OVERLAP", "5m", "how far each reddit read reaches back before the last one, for posts listed late", durationSetting(func(c *Config, d time.Duration) { c.RedditOverlap = d })},
	{"EARSHOT_REDDIT_BASE_URL", "https://www.reddit.com", "reddit JSON listings and Atom feeds (keyless reads, the token endpoint)", baseURLSetting(false, func(c *Config, v string) { c.RedditBaseURL = v })},
	{"EARSHOT_REDDIT_CLIENT_ID", "", "reddit app client id (reads go through OAuth)", func(c *Config, v string) error { c.RedditClientID = v; return nil }},
	{"EARSHOT_REDDIT_CLIENT_SECRET", "", "reddit app client secret", func(c *Config, v string) error { c.RedditClientSecret = v; return nil }},
	{"EARSHOT_REDDIT_USER_AGENT", "server:earshot:" + Version, "User-Agent sent to reddit; add (by /u/NAME)", func(c *Config, v string) error {
		// It is sent as a header, where a control character (a line
		// break, say) fails every request to reddit.
		if strings.TrimSpace(v) == "" || strings.ContainsFunc(strings.TrimSpace(v), unicode.IsControl) {
			return errors.New("accepts a non-empty User-Agent without control characters, such as server:earshot:1.0 (by /u/NAME)")
		}
		c.RedditUserAgent = v
		return nil
	}},
	{"EARSHOT_REDDIT_MIRROR_URL", "", "fallback archive base address (empty: no mirror)", baseURLSetting(true, func(c *Config, v string) { c.RedditMirrorURL = v })},
	{"EARSHOT_REDDIT_MIRROR_API", "arcticshift", "arcticshift or pullpush", func(c *Config, v string) error {
		if v != "arcticshift" && v != "pullpush" {
			return errors.New("accepts arcticshift or pullpush")
		}
		c.RedditMirrorAPI = v
		return nil
	}},
	{"EARSHOT_WEBHOOK_RETRY_SCHEDULE", "1m,5m,30m", "waits between webhook tries (1 to 20, each 10ms to 24h)", func(c *Config, v string) error {
		// core's bounds, the ones its Retry-After cap is reckoned from:
		// no receiver retried in a tight loop, no delivery queued for weeks.
		s, err := core.ParseRetrySchedule(v)
		if err != nil {
			return errors.New("accepts a comma-separated list of positive durations from 10ms to 24h, at most 20, for example 1m,5m,30m")
		}
		c.WebhookRetrySchedule = s
		return nil
	}},
	{"EARSHOT_WEBHOOK_TIMEOUT", "5s", "webhook answer wait", durationSetting(func(c *Config, d time.Duration) { c.WebhookTimeout = d })},
	{"EARSHOT_WEBHOOK_ALLOW_PRIVATE", "false", "development only: allow http, IP, loopback and private webhook targets", boolSetting(func(c *Config, b bool) { c.WebhookAllowPrivate = b })},
	{"EARSHOT_TELEGRAM_API", "https://api.telegram.org", "Telegram Bot API address Telegram channels post through (a self-hosted Bot API server may be set)", baseURLSetting(false, func(c *Config, v string) { c.TelegramAPI = v })},
	{"EARSHOT_ALERT_INTERVAL", "1h", "email alert sweep period", durationSetting(func(c *Config, d time.Duration) { c.AlertInterval = d })},
	{"EARSHOT_ALERT_MIN_SCORE", "70", "alerts carry matches at or above this score", intSetting(0, 100, func(c *Config, n int) { c.AlertMinScore = n })},
	{"EARSHOT_SMTP_URL", "", "smtp://user:pass@host:port (empty: alerts are logged)", func(c *Config, v string) error {
		if v == "" {
			return nil
		}
		// The mailer's own checks, here, so a mistake names the setting
		// before start.
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "smtp" && u.Scheme != "smtps") || u.Hostname() == "" || (u.Path != "" && u.Path != "/") {
			return errors.New("accepts smtp://user:pass@host:port or smtps://user:pass@host:port")
		}
		if p := u.Port(); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				return errors.New("accepts smtp://user:pass@host:port or smtps://user:pass@host:port, the port from 1 to 65535")
			}
		}
		c.SMTPURL = v
		return nil
	}},
	{"EARSHOT_MAIL_FROM", "earshot@localhost", "sender address of alerts", func(c *Config, v string) error {
		// As the mailer reads it, so one it would refuse stops the
		// program here, naming the setting.
		if _, err := mail.ParseAddress(v); err != nil {
			return errors.New("accepts an email address such as alerts@example.com or Earshot <alerts@example.com>")
		}
		c.MailFrom = v
		return nil
	}},
	{"EARSHOT_PROXY_URL", "", "http://user:pass@host:port handed to helpers (empty: GET /proxy answers 503)", urlSetting(true, func(c *Config, v string) { c.ProxyURL = v })},
	{"EARSHOT_PROXY_REQUIRED", "true", "the required flag of GET /proxy", boolSetting(func(c *Config, b bool) { c.ProxyRequired = b })},
	{"EARSHOT_LLM_URL", "", "OpenAI-compatible API base (empty: rule-based scorer)", urlSetting(true, func(c *Config, v string) { c.LLMURL = v })},
	{"EARSHOT_LLM_MODEL", "", "model name for the LLM scorer", func(c *Config, v string) error { c.LLMModel = v; return nil }},
	{"EARSHOT_LLM_API_KEY", "", "API key for the LLM scorer", func(c *Config, v string) error { c.LLMAPIKey = v; return nil }},
	{"EARSHOT_LOG_FORMAT", "text", "text or json", func(c *Config, v string) error {
		if v != "text" && v != "json" {
			return errors.New("accepts text or json")
		}
		c.LogFormat = v
		return nil
	}},
	{"EARSHOT_LOG_LEVEL", "info", "debug, info, warn or error; debug adds a line for every answered request", func(c *Config, v string) error {
		levels := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}
		l, ok := levels[v]
		if !ok {
			return errors.New("accepts debug, info, warn or error")
		}
		c.LogLevel = l
		return nil
	}},
	{"EARSHOT_BOOTSTRAP", "true", "create an owner and keys on first start with an empty database", boolSetting(func(c *Config, b bool) { c.Bootstrap = b })},
	{"EARSHOT_SESSION_IDLE", "336h", "dashboard sessions end after this long unused (336h is 14 days)", durationSetting(func(c *Config, d time.Duration) { c.SessionIdle = d })},
	{"EARSHOT_MOCK_STATE", "", "state file of the legacy mock (empty: in memory)", func(c *Config, v string) error { c.MockState = v; return nil }},
}

// maxBusPrefix is the longest prefix the bus takes (its name pattern):
// with it, the exchange and queue names stay within AMQP's 255 bytes.
const maxBusPrefix = 200

func intSetting(lo, hi int, set func(*Config, int)) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("accepts a whole number from %d to %d", lo, hi)
		}
		set(c, n)
		return nil
	}
}

func durationSetting(set func(*Config, time.Duration)) func(*Config, string) error {
	return func(c *Config, v string) error {
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil || d <= 0 {
			return errors.New("accepts a positive duration such as 30s, 10m or 1h")
		}
		set(c, d)
		return nil
	}
}

func boolSetting(set func(*Config, bool)) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return errors.New("accepts true or false")
		}
		set(c, b)
		return nil
	}
}

func urlSetting(optional bool, set func(*Config, string)) func(*Config, string) error {
	return func(c *Config, v string) error {
		if v == "" && optional {
			return nil
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errors.New("accepts an http or https URL")
		}
		set(c, strings.TrimSuffix(v, "/"))
		return nil
	}
}

// baseURLSetting is urlSetting for an address the adapter appends paths
// to, where a query or a fragment would end up before the path: reddit's
// refuses it at start, and Telegram's would block every send.
func baseURLSetting(optional bool, set func(*Config, string)) func(*Config, string) error {
	parse := urlSetting(optional, set)
	return func(c *Config, v string) error {
		if u, err := url.Parse(v); err == nil && (u.RawQuery != "" || u.ForceQuery || u.Fragment != "") {
			return errors.New("accepts an http or https URL without a query or fragment")
		}
		return parse(c, v)
	}
}

// ConfigError is a setting with a value it does not accept. Programs stop
// with exit status 2 on it. Value is empty when the setting can hold a
// secret (Hidden): the message then names the setting and what it
// accepts, and nothing of what was given.
type ConfigError struct {
	Name, Value, Accepts string
	Hidden               bool
}

func (e *ConfigError) Error() string {
	if e.Hidden {
		return fmt.Sprintf("%s (value not shown: it can hold a secret): %s", e.Name, e.Accepts)
	}
	return fmt.Sprintf("%s=%s: %s", e.Name, e.Value, e.Accepts)
}

// ConfigFlags registers a flag for every setting on fs and returns a
// function that, after fs.Parse, reads the settings: defaults, then the
// environment (getenv), then flags given on the command line.
func ConfigFlags(fs *flag.FlagSet, getenv func(string) string) func() (Config, error) {
	values := make([]*string, len(settings))
	for i, s := range settings {
		values[i] = fs.String(s.flagName(), "", fmt.Sprintf("%s (env %s, default %q)", s.usage, s.env, s.def))
	}
	return func() (Config, error) {
		given := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
		var c Config
		names := map[string]string{} // each setting as it was given: variable or flag
		refused := func(env, v string, err error) error {
			if holdsSecret(env) {
				return &ConfigError{Name: names[env], Accepts: err.Error(), Hidden: true}
			}
			return &ConfigError{Name: names[env], Value: v, Accepts: err.Error()}
		}
		for i, s := range settings {
			v, name := s.def, s.env
			if e, ok := lookup(getenv, s.env); ok {
				v = e
			}
			if given[s.flagName()] {
				v, name = *values[i], "--"+s.flagName()
			}
			names[s.env] = name
			if err := s.set(&c, v); err != nil {
				return Config{}, refused(s.env, v, err)
			}
		}
		// Settings that work only together: the half left out is named,
		// as a value refused would be, rather than refused at start.
		// White space alone is no value: the adapters trim what they are
		// given, so a blank half would be refused only at start.
		id, secret := strings.TrimSpace(c.RedditClientID), strings.TrimSpace(c.RedditClientSecret)
		switch {
		case c.LLMURL != "" && strings.TrimSpace(c.LLMModel) == "":
			return Config{}, refused("EARSHOT_LLM_MODEL", "", errors.New("accepts the model's name, required when EARSHOT_LLM_URL is set"))
		case id != "" && secret == "":
			return Config{}, refused("EARSHOT_REDDIT_CLIENT_SECRET", "", errors.New("accepts the reddit app's secret, required when EARSHOT_REDDIT_CLIENT_ID is set"))
		case secret != "" && id == "":
			return Config{}, refused("EARSHOT_REDDIT_CLIENT_ID", "", errors.New("accepts the reddit app's id, required when EARSHOT_REDDIT_CLIENT_SECRET is set"))
		}
		if c.SiteURL == "" {
			c.SiteURL = siteOf(c.Addr)
		}
		return c, nil
	}
}

// siteOf is the site address made of a listen address: the default of
// EARSHOT_SITE_URL, and what it becomes once the listener is bound. An
// IPv6 zone's % is written %25 in a URL.
func siteOf(addr string) string {
	return "http://" + strings.Replace(addr, "%", "%25", 1)
}

// listenHost reports whether h can be the host of a listen address: none
// (every interface), an IP address (an IPv6 one with its zone), or a name
// of letters, digits, dots, hyphens and underscores. Anything else the
// listener would look up and fail on at start, and the site address made
// of it would not parse.
func listenHost(h string) bool {
	if h == "" {
		return true
	}
	if _, err := netip.ParseAddr(h); err == nil {
		return true
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

// lookup treats an empty variable as unset, as shells make it easy to
// export one by accident.
func lookup(getenv func(string) string, name string) (string, bool) {
	if getenv == nil {
		getenv = os.Getenv
	}
	v := getenv(name)
	return v, v != ""
}

// holdsSecret reports whether the setting named env can hold a secret, so
// that its value is never repeated in an error: keys and secrets, and
// every address, since a URL may carry a password (smtp://user:PW@host),
// and a slightly malformed one (smtp:user:PW@host, a libpq
// "host=db password=PW" string) cannot be parsed to hide just the
// password. The rule goes by the name, so a new setting of either sort
// is covered without a list to keep; EARSHOT_TELEGRAM_API, an address
// whose name predates the rule, is the one named here.
func holdsSecret(env string) bool {
	if env == "EARSHOT_TELEGRAM_API" {
		return true
	}
	for _, suffix := range []string{"_URL", "_KEY", "_SECRET", "_PASSWORD", "_TOKEN"} {
		if strings.HasSuffix(env, suffix) {
			return true
		}
	}
	return false
}
