package server

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/fx/fxtest"
)

// A site address left to its default on a wildcard listen address names
// no host a browser can reach: the start says so, once, and names the
// setting that mends it. A named host, or a site URL set, says nothing.
func TestStartWarnsOfAWildcardSite(t *testing.T) {
	for _, c := range []struct {
		addr, site string
		warn       bool
	}{
		{"127.0.0.1:0", "", false},
		{":0", "", true},
		{"0.0.0.0:0", "", true},
		{":0", "https://earshot.example.com", false},
	} {
		cfg := Config{Addr: c.addr, SiteURL: c.site}
		if c.site == "" {
			cfg.SiteURL = siteOf(c.addr)
		}
		var logs bytes.Buffer
		lc := fxtest.NewLifecycle(t)
		startServer(lc, cfg, http.NotFoundHandler(), slog.New(slog.NewTextHandler(&logs, nil)), newSite(cfg))
		lc.RequireStart()
		lc.RequireStop()
		if got := strings.Count(logs.String(), "EARSHOT_SITE_URL"); got != map[bool]int{true: 1}[c.warn] {
			t.Errorf("%s, site %q: %d warnings naming EARSHOT_SITE_URL, want warn=%v\n%s", c.addr, c.site, got, c.warn, logs.String())
		}
	}
}
