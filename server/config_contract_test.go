package server

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"
)

// Every row of the settings table in docs/operating.md is a setting the
// server reads, with the default the row gives when that default is a
// value (a number or a quoted word), and empty when the row describes
// what happens without one ("empty (...)", "generated ...", "http:// +
// the bound address"); and every setting the server reads has its row.
func TestEverySettingOfTheTable(t *testing.T) {
	doc, err := os.ReadFile("../docs/operating.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(doc)
	start, end := strings.Index(text, "\n## Settings\n"), strings.Index(text, "\n## The admin console\n")
	if start < 0 || end < start {
		t.Fatal("docs/operating.md: no Settings section")
	}
	row := regexp.MustCompile("(?m)^\\| (`EARSHOT_[^|]*)\\| ([^|]*) \\|")
	name := regexp.MustCompile("`(EARSHOT_[A-Z_]+)`")
	literal := regexp.MustCompile("^(?:`([^`]*)`|([0-9]+))(?: \\(.*\\))?$")
	byEnv := map[string]setting{}
	for _, s := range settings {
		byEnv[s.env] = s
	}
	documented := map[string]bool{}
	for _, m := range row.FindAllStringSubmatch(text[start:end], -1) {
		def := strings.TrimSpace(m[2])
		for _, n := range name.FindAllStringSubmatch(m[1], -1) {
			env := n[1]
			documented[env] = true
			s, ok := byEnv[env]
			if !ok {
				t.Errorf("%s is in the table but the server does not read it", env)
				continue
			}
			want := ""
			if l := literal.FindStringSubmatch(def); l != nil && !strings.HasPrefix(def, "`http://` +") {
				want = l[1] + l[2]
			}
			want = strings.ReplaceAll(want, "VERSION", Version)
			if s.def != want {
				t.Errorf("%s: default %q, the table says %q (%s)", env, s.def, want, def)
			}
			if flag := "--" + strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(env, "EARSHOT_")), "_", "-"); "--"+s.flagName() != flag {
				t.Errorf("%s: flag --%s, want %s", env, s.flagName(), flag)
			}
		}
	}
	for _, s := range settings {
		if !documented[s.env] {
			t.Errorf("%s is read but has no row in the table", s.env)
		}
	}
	if len(documented) < 40 {
		t.Fatalf("only %d settings read from the table: its shape changed", len(documented))
	}
}

// The bounds docs/operating.md gives a setting hold at both ends: the
// last value in is taken, the first one out is refused as a ConfigError
// naming the setting (serve, migrate and admin stop with status 2 on it).
func TestConfigBoundsOfTheContract(t *testing.T) {
	many := func(item string, n int) string { return strings.TrimSuffix(strings.Repeat(item+",", n), ",") }
	for _, tc := range []struct {
		env     string
		in, out []string
		accepts string
		with    map[string]string // other settings it needs
	}{
		{env: "EARSHOT_ADDR", in: []string{"127.0.0.1:0", "127.0.0.1:65535", "[::1]:8080"}, out: []string{"127.0.0.1:65536", "127.0.0.1", ":x"},
			accepts: "accepts host:port"},
		{env: "EARSHOT_SMTP_URL", in: []string{"smtp://u:p@mail:1", "smtps://mail:65535", "smtp://mail"}, out: []string{"smtp://mail:0", "smtp://mail:65536", "smtp://mail:25/x"},
			accepts: "accepts smtp://"},
		{env: "EARSHOT_MAIL_FROM", in: []string{"alerts@example.com", "Earshot <alerts@example.com>"}, out: []string{"alerts", "<>"},
			accepts: "accepts an email address"},
		{env: "EARSHOT_SECRET_KEY", in: []string{strings.Repeat("k", 32)}, out: []string{strings.Repeat("k", 31)},
			accepts: "at least 32 bytes"},
		{env: "EARSHOT_RECENT_DAYS", in: []string{"0", "365"}, out: []string{"-1", "366"}, accepts: "from 0 to 365"},
		{env: "EARSHOT_RECENT_POSTS", in: []string{"0", "100000000"}, out: []string{"-1", "100000001"}, accepts: "from 0 to 100000000"},
		{env: "EARSHOT_REDDIT_KEYLESS_PER_MINUTE", in: []string{"1", "100"}, out: []string{"0", "101"}, accepts: "from 1 to 100"},
		{env: "EARSHOT_REDDIT_OVERLAP", in: []string{"1s", "5m"}, out: []string{"0s", "-1m", "5"}, accepts: "positive duration"},
		{env: "EARSHOT_INGEST_BACKLOG", in: []string{"0"}, out: []string{"-1", "x"}, accepts: "whole number"},
		{env: "EARSHOT_TRUSTED_PROXIES", in: []string{many("10.0.0.1", 100), "10.0.0.0/8,192.0.2.7"}, out: []string{many("10.0.0.1", 101), "0.0.0.0/0", "::/0", "nope"},
			accepts: "at most 100"},
		{env: "EARSHOT_WEBHOOK_RETRY_SCHEDULE", in: []string{"10ms", "24h", many("1m", 20)}, out: []string{"9ms", "25h", many("1m", 21)},
			accepts: "10ms to 24h"},
		{env: "EARSHOT_REDDIT_MIRROR_API", in: []string{"arcticshift", "pullpush"}, out: []string{"pushshift"}, accepts: "arcticshift or pullpush"},
		{env: "EARSHOT_LOG_FORMAT", in: []string{"text", "json"}, out: []string{"xml"}, accepts: "text or json"},
		{env: "EARSHOT_LOG_LEVEL", in: []string{"debug", "info", "warn", "error"}, out: []string{"trace"}, accepts: "debug, info, warn or error"},
		{env: "EARSHOT_BOOTSTRAP", in: []string{"true", "false"}, out: []string{"maybe"}, accepts: "true or false"},
		{env: "EARSHOT_PROXY_REQUIRED", in: []string{"true", "false"}, out: []string{"maybe"}, accepts: "true or false"},
		// Addresses the adapters append paths to: a query or fragment
		// would make reddit's refuse to start and Telegram's block every
		// send, so they are refused here.
		{env: "EARSHOT_TELEGRAM_API", in: []string{"https://api.telegram.org", "http://127.0.0.1:8081", "https://t.example.com/bots/"},
			out: []string{"api.telegram.org", "https://t.example.com/?x=1", "https://t.example.com/#f"}, accepts: "http or https URL"},
		{env: "EARSHOT_REDDIT_BASE_URL", in: []string{"https://www.reddit.com", "http://127.0.0.1:1/"},
			out: []string{"https://www.reddit.com/?x=1", "https://www.reddit.com/#f", "www.reddit.com"}, accepts: "http or https URL"},
		{env: "EARSHOT_REDDIT_MIRROR_URL", in: []string{"https://arctic-shift.photon-reddit.com"},
			out: []string{"https://u:hunter2@m.example.com/?x=1", "https://m.example.com/#f"}, accepts: "http or https URL"},
		// The model's API may want a query (an API version).
		{env: "EARSHOT_LLM_URL", in: []string{"https://llm.example.com/v1", "https://llm.example.com/v1?api-version=1"},
			out: []string{"llm.example.com"}, accepts: "http or https URL", with: map[string]string{"EARSHOT_LLM_MODEL": "m"}},
		// Sent as a header: a control character fails every request.
		{env: "EARSHOT_REDDIT_USER_AGENT", in: []string{"server:earshot:1.0 (by /u/ada)"},
			out: []string{"server:earshot:1.0\r\nX-Evil: 1", "a\x00b", " "}, accepts: "User-Agent"},
		// The bus's own rules for a URL it can dial and a prefix it can
		// name queues with: a value it would refuse at start stops the
		// program here, naming the setting, with status 2.
		{env: "EARSHOT_BUS_URL", in: []string{"memory://", "amqp://guest:guest@127.0.0.1:5672/", "amqps://mq.example.com/vhost"},
			out:     []string{"amqp://u:hunter2@127.0.0.1:bad/", "amqp://u:hunter2@127.0.0.1/?heartbeat=soon", "amqp://u:hunter2@mq /", "kafka://x"},
			accepts: "accepts memory:// or amqp://"},
		{env: "EARSHOT_BUS_PREFIX", in: []string{"earshot", "prod.", strings.Repeat("p", 200)}, out: []string{strings.Repeat("p", 201), "a b", "a/b"},
			accepts: "accepts letters, digits"},
	} {
		env := func(v string) map[string]string {
			e := map[string]string{tc.env: v}
			for k, w := range tc.with {
				e[k] = w
			}
			return e
		}
		for _, v := range tc.in {
			if _, err := readConfig(env(v)); err != nil {
				t.Errorf("%s=%.40s: %v, want it taken", tc.env, v, err)
			}
		}
		for _, v := range tc.out {
			_, err := readConfig(env(v))
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Name != tc.env || !strings.Contains(ce.Accepts, tc.accepts) {
				t.Errorf("%s=%.40s: %v, want a ConfigError naming the setting and %q", tc.env, v, err, tc.accepts)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%s: the error shows a secret: %v", tc.env, err)
			}
		}
	}
}

// A half of a pair that is white space alone is no value: the pair is
// refused when the settings are read, as with that half left out, not by
// the scorer or the reddit source at start with status 1.
func TestConfigPairsBlankHalf(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"EARSHOT_LLM_URL": "https://llm.example.com/v1", "EARSHOT_LLM_MODEL": "  "}, "EARSHOT_LLM_MODEL"},
		{map[string]string{"EARSHOT_REDDIT_CLIENT_ID": " ", "EARSHOT_REDDIT_CLIENT_SECRET": "s"}, "EARSHOT_REDDIT_CLIENT_ID"},
		{map[string]string{"EARSHOT_REDDIT_CLIENT_ID": "id", "EARSHOT_REDDIT_CLIENT_SECRET": "\t"}, "EARSHOT_REDDIT_CLIENT_SECRET"},
	} {
		_, err := readConfig(tc.env)
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Name != tc.want {
			t.Errorf("%q: %v, want a ConfigError naming %s", tc.env, err, tc.want)
		}
	}
}

// Every address is a setting that can hold a secret, whatever its name
// ends with: a self-hosted Telegram Bot API server may sit behind basic
// authentication, and a refused EARSHOT_TELEGRAM_API is named without
// its value, as a refused EARSHOT_..._URL is.
func TestRefusedAddressShowsNoPassword(t *testing.T) {
	for _, env := range []string{"EARSHOT_TELEGRAM_API", "EARSHOT_REDDIT_MIRROR_URL", "EARSHOT_REDDIT_BASE_URL"} {
		_, err := readConfig(map[string]string{env: "https://bot:hunter2@api.example.com/?x=1"})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Name != env || !ce.Hidden || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s with a password and a query: %v, want it refused without its value", env, err)
		}
	}
}
