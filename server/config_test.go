package server

import (
	"errors"
	"flag"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestConfigDefaults(t *testing.T) {
	cfg := testConfig(t, nil)
	if cfg.Addr != "127.0.0.1:8080" || cfg.SiteURL != "http://127.0.0.1:8080" || cfg.DatabaseURL != "sqlite://earshot.db" ||
		cfg.BusURL != "memory://" || cfg.Limits.PhrasesPerPlatform != 1 || cfg.Limits.AccountsPerPlatform != 1 ||
		cfg.Limits.WebhooksPerPerson != 0 || cfg.RateLimit != 60 || cfg.HelperRateLimit != 60000 || cfg.IngestBacklog != 20000 || cfg.ScoringInterval != 10*time.Minute ||
		cfg.RedditInterval != 10*time.Minute || cfg.RedditBaseURL != "https://www.reddit.com" ||
		cfg.RedditUserAgent != "server:earshot:"+Version || cfg.RedditMirrorAPI != "arcticshift" ||
		len(cfg.WebhookRetrySchedule) != 3 || cfg.WebhookRetrySchedule[2] != 30*time.Minute ||
		cfg.WebhookTimeout != 5*time.Second || cfg.WebhookAllowPrivate || cfg.AlertInterval != time.Hour ||
		cfg.AlertMinScore != 70 || cfg.MailFrom != "earshot@localhost" || !cfg.ProxyRequired ||
		cfg.LogFormat != "text" || cfg.LogLevel != slog.LevelInfo || !cfg.Bootstrap {
		t.Fatalf("defaults: %+v", cfg)
	}
}

func TestConfigPrecedence(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	read := ConfigFlags(fs, func(k string) string {
		return map[string]string{"EARSHOT_ADDR": "127.0.0.1:9000", "EARSHOT_RATE_LIMIT_PER_MINUTE": "5"}[k]
	})
	if err := fs.Parse([]string{"--rate-limit-per-minute", "7", "--site-url", "https://listen.example.com/"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := read()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != "127.0.0.1:9000" || cfg.RateLimit != 7 || cfg.SiteURL != "https://listen.example.com" {
		t.Fatalf("precedence: %+v", cfg)
	}
	if cfg := testConfig(t, map[string]string{"EARSHOT_LOG_LEVEL": "debug"}); cfg.LogLevel != slog.LevelDebug {
		t.Fatalf("EARSHOT_LOG_LEVEL=debug gave %v", cfg.LogLevel)
	}
}

func TestConfigErrorsNameTheSetting(t *testing.T) {
	for _, tc := range []struct{ env, value, want string }{
		{"EARSHOT_DATABASE_URL", "mysql://x", "EARSHOT_DATABASE_URL (value not shown: it can hold a secret): accepts sqlite://PATH, sqlite://:memory: or a postgres:// URL"},
		{"EARSHOT_ADDR", "nowhere", "EARSHOT_ADDR=nowhere: accepts host:port"},
		// Ports the listener cannot bind are refused here, naming the
		// setting, not at start as "listen tcp: address 99999: invalid port".
		{"EARSHOT_ADDR", "127.0.0.1:99999", "EARSHOT_ADDR=127.0.0.1:99999: accepts host:port"},
		{"EARSHOT_ADDR", "127.0.0.1:abc", "EARSHOT_ADDR=127.0.0.1:abc: accepts host:port"},
		{"EARSHOT_ADDR", "127.0.0.1:-1", "EARSHOT_ADDR=127.0.0.1:-1: accepts host:port"},
		{"EARSHOT_ADDR", "127.0.0.1:", "EARSHOT_ADDR=127.0.0.1:: accepts host:port"},
		{"EARSHOT_PLAN_PHRASES_PER_PLATFORM", "-1", "EARSHOT_PLAN_PHRASES_PER_PLATFORM=-1: accepts a whole number from 0 to 100000"},
		{"EARSHOT_INGEST_BACKLOG", "-1", "EARSHOT_INGEST_BACKLOG=-1: accepts a whole number from 0 to 100000000"},
		{"EARSHOT_ALERT_MIN_SCORE", "101", "EARSHOT_ALERT_MIN_SCORE=101: accepts a whole number from 0 to 100"},
		{"EARSHOT_WEBHOOK_RETRY_SCHEDULE", "1m,,5m", "accepts a comma-separated list of positive durations"},
		{"EARSHOT_REDDIT_MIRROR_API", "pushshift", "accepts arcticshift or pullpush"},
		{"EARSHOT_SMTP_URL", "http://user:hunter2@mail", "EARSHOT_SMTP_URL (value not shown: it can hold a secret): accepts smtp://"},
		{"EARSHOT_SECRET_KEY", "tooshort", "EARSHOT_SECRET_KEY (value not shown: it can hold a secret): accepts a secret of at least 32 bytes"},
		{"EARSHOT_SITE_URL", "ftp://x", "accepts an http or https URL"},
		{"EARSHOT_LOG_LEVEL", "loud", "EARSHOT_LOG_LEVEL=loud: accepts debug, info, warn or error"},
		// Values the mailer would refuse only at start, with exit status 1
		// and without the setting's name.
		{"EARSHOT_SMTP_URL", "smtp://user:hunter2@mail:99999", "EARSHOT_SMTP_URL (value not shown: it can hold a secret): accepts smtp://"},
		{"EARSHOT_SMTP_URL", "smtp://user:hunter2@mail:587/inbox", "EARSHOT_SMTP_URL (value not shown: it can hold a secret): accepts smtp://"},
		{"EARSHOT_MAIL_FROM", "alerts@example.com, b@example.com", "EARSHOT_MAIL_FROM=alerts@example.com, b@example.com: accepts an email address"},
		{"EARSHOT_MAIL_FROM", "not an@address here", "EARSHOT_MAIL_FROM=not an@address here: accepts an email address"},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		read := ConfigFlags(fs, func(k string) string {
			if k == tc.env {
				return tc.value
			}
			return ""
		})
		_ = fs.Parse(nil)
		_, err := read()
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s=%s: %v, want %q", tc.env, tc.value, err, tc.want)
		}
		if strings.Contains(err.Error(), "hunter2") || (tc.env == "EARSHOT_SECRET_KEY" && strings.Contains(err.Error(), tc.value)) {
			t.Errorf("%s: the error shows a secret: %v", tc.env, err)
		}
	}
}

// A setting that can hold a secret never has its value repeated, however
// malformed: these are the shapes a password slips through when only a
// well-formed URL's password is hidden.
func TestConfigErrorsHideSecrets(t *testing.T) {
	for _, tc := range []struct{ env, value, accepts string }{
		{"EARSHOT_SMTP_URL", "smtp:user:hunter2@mail.example.com", "accepts smtp://user:pass@host:port"},
		{"EARSHOT_SMTP_URL", "smtp://user:hunter2@mail.example.com:bad", "accepts smtp://"},
		{"EARSHOT_BUS_URL", "amqp:/guest:hunter2@broker", "accepts memory:// or amqp://"},
		{"EARSHOT_PROXY_URL", "socks5:/user:hunter2@proxy", "accepts an http or https URL"},
		{"EARSHOT_PROXY_URL", "http//user:hunter2@proxy:8080", "accepts an http or https URL"},
		{"EARSHOT_DATABASE_URL", "host=db user=earshot password=hunter2 dbname=earshot", "accepts sqlite://PATH"},
		{"EARSHOT_DATABASE_URL", "postgres://earshot:hunter2@db:port/earshot", "accepts sqlite://PATH"},
		{"EARSHOT_LLM_URL", "https//key:hunter2@llm", "accepts an http or https URL"},
		{"EARSHOT_REDDIT_MIRROR_URL", "ftp://u:hunter2@mirror", "accepts an http or https URL"},
		{"EARSHOT_SECRET_KEY", "hunter2", "accepts a secret of at least 32 bytes"},
	} {
		for _, viaFlag := range []bool{false, true} {
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			read := ConfigFlags(fs, func(k string) string {
				if k == tc.env && !viaFlag {
					return tc.value
				}
				return ""
			})
			name := tc.env
			var args []string
			if viaFlag {
				name = "--" + strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(tc.env, "EARSHOT_")), "_", "-")
				args = []string{name, tc.value}
			}
			if err := fs.Parse(args); err != nil {
				t.Fatal(err)
			}
			_, err := read()
			if err == nil {
				t.Errorf("%s=%s was accepted", name, tc.value)
				continue
			}
			if msg := err.Error(); strings.Contains(msg, "hunter2") || !strings.HasPrefix(msg, name+" ") || !strings.Contains(msg, tc.accepts) {
				t.Errorf("%s=%s: %q, want the name and %q and no secret", name, tc.value, msg, tc.accepts)
			}
		}
	}
}

// The site address is normalised once when read: the scheme and host in
// lower case, no trailing slash, so whatever asks whether it is https
// gets the same answer as a browser would.
func TestConfigSiteURLNormalised(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		https    bool
	}{
		{"HTTPS://Listen.Example.COM/", "https://listen.example.com", true},
		{"https://listen.example.com:8443/earshot/", "https://listen.example.com:8443/earshot", true},
		{"Http://127.0.0.1:8080", "http://127.0.0.1:8080", false},
	} {
		cfg := testConfig(t, map[string]string{"EARSHOT_SITE_URL": tc.in})
		if cfg.SiteURL != tc.want || cfg.SiteHTTPS() != tc.https {
			t.Errorf("EARSHOT_SITE_URL=%s: %q, https %v; want %q, %v", tc.in, cfg.SiteURL, cfg.SiteHTTPS(), tc.want, tc.https)
		}
	}
	for _, bad := range []string{"ftp://x", "listen.example.com", "https://", "https://u:p@listen.example.com", "https://listen.example.com/?a=1", "https://listen.example.com/#top"} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		read := ConfigFlags(fs, func(k string) string {
			if k == "EARSHOT_SITE_URL" {
				return bad
			}
			return ""
		})
		_ = fs.Parse(nil)
		if _, err := read(); err == nil || !strings.Contains(err.Error(), "accepts an http or https URL") {
			t.Errorf("EARSHOT_SITE_URL=%s: %v", bad, err)
		}
	}
}

// Settings that only work together are checked together, before start:
// each missing half is named as a setting, so serve stops with exit
// status 2 and the operator's words rather than at start with a
// constructor's ("llm model is required") and status 1.
func TestConfigPairsNameTheSetting(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"EARSHOT_LLM_URL": "https://llm.example.com/v1"}, "EARSHOT_LLM_MODEL="},
		{map[string]string{"EARSHOT_REDDIT_CLIENT_ID": "id"}, "EARSHOT_REDDIT_CLIENT_SECRET (value not shown: it can hold a secret)"},
		{map[string]string{"EARSHOT_REDDIT_CLIENT_SECRET": "hunter2"}, "EARSHOT_REDDIT_CLIENT_ID="},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		read := ConfigFlags(fs, func(k string) string { return tc.env[k] })
		_ = fs.Parse(nil)
		_, err := read()
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%v: %v, want a ConfigError starting %q", tc.env, err, tc.want)
		}
	}
	// Both halves, or neither, are accepted.
	for _, env := range []map[string]string{
		{"EARSHOT_LLM_URL": "https://llm.example.com/v1", "EARSHOT_LLM_MODEL": "m"},
		{"EARSHOT_REDDIT_CLIENT_ID": "id", "EARSHOT_REDDIT_CLIENT_SECRET": "s"},
		{"EARSHOT_LLM_MODEL": "m"},
	} {
		testConfig(t, env)
	}
}
