package server

import (
	"errors"
	"flag"
	"net/url"
	"testing"
)

// readConfig reads the settings with env as the environment and no flag.
func readConfig(env map[string]string) (Config, error) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	read := ConfigFlags(fs, func(k string) string { return env[k] })
	if err := fs.Parse(nil); err != nil {
		return Config{}, err
	}
	return read()
}

// FuzzConfig gives one setting any value, as the environment can, seeded
// with the values of config_test.go and hostile ones, and checks what
// the contract promises: no panic; a value refused is a *ConfigError
// naming the setting, whose value is not repeated when the setting can
// hold a secret; a site address taken is an http or https URL that
// reads back as itself.
func FuzzConfig(f *testing.F) {
	for i, v := range []string{
		"127.0.0.1:9000", "https://listen.example.com/", "postgres://u:pw@db/x?sslmode=disable", "amqp://u:pw@mq:5672/",
		"earshot.blue", "0123456789abcdef0123456789abcdef", "1000001", "10m", "https://www.reddit.com/",
		"", "", "", "", "", "", "", "", "1m,5m,30m", "5s", "true", "https://api.telegram.org", "1h", "70",
		"smtp://u:pw@mail:587", "Earshot <alerts@example.com>", "http://u:pw@proxy:3128", "false", "http://llm:8080/v1",
	} {
		f.Add(uint8(i), v)
	}
	for _, v := range []string{
		"http://EXAMPLE.com/a%2Fb/", "https://h/%", "https://h/\x7f", "https://h:99999/", "https://[::1]/x//", "http://h/%252F/",
		"smtp://h:0", "smtps://u:p@h:-1", "\"x\" <a@b>", "9223372036854775808", "-1ns", "1e3h", " 5m ", "0x10", "\x00",
	} {
		f.Add(uint8(1), v)
		f.Add(uint8(23), v)
	}
	f.Fuzz(func(t *testing.T, which uint8, v string) {
		s := settings[int(which)%len(settings)]
		c, err := readConfig(map[string]string{s.env: v})
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("%s=%q: %v, not a ConfigError", s.env, v, err)
			}
			if holdsSecret(ce.Name) && (!ce.Hidden || ce.Value != "") {
				t.Errorf("%s: the value is repeated: %+v", ce.Name, ce)
			}
			// A setting that works only with another names that other one
			// when it is left out.
			partner := map[string]string{"EARSHOT_LLM_URL": "EARSHOT_LLM_MODEL",
				"EARSHOT_REDDIT_CLIENT_ID": "EARSHOT_REDDIT_CLIENT_SECRET", "EARSHOT_REDDIT_CLIENT_SECRET": "EARSHOT_REDDIT_CLIENT_ID"}
			if ce.Name != s.env && ce.Name != partner[s.env] {
				t.Errorf("%s=%q refused as %s", s.env, v, ce.Name)
			}
			return
		}
		u, perr := url.Parse(c.SiteURL)
		if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			t.Errorf("%s=%q: site address %q", s.env, v, c.SiteURL)
		}
		if s.env == "EARSHOT_SITE_URL" && v != "" {
			again, err := readConfig(map[string]string{s.env: c.SiteURL})
			if err != nil || again.SiteURL != c.SiteURL {
				t.Errorf("site address %q from %q reads back as %q (%v)", c.SiteURL, v, again.SiteURL, err)
			}
		}
	})
}
