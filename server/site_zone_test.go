package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"go.uber.org/fx/fxtest"
)

// An IPv6 listen address with a zone and port 0, its site address left
// to the default (written with %25 for the zone): the site follows the
// port actually bound, as it does for any other address, and parses.
func TestSiteFollowsTheBoundAddressWithAZone(t *testing.T) {
	cfg, err := readConfig(map[string]string{"EARSHOT_ADDR": "[::1%lo]:0"})
	if err != nil {
		t.Fatal(err)
	}
	site := newSite(cfg)
	lc := fxtest.NewLifecycle(t)
	startServer(lc, cfg, http.NotFoundHandler(), slog.New(slog.NewTextHandler(io.Discard, nil)), site)
	lc.RequireStart()
	defer lc.RequireStop()
	u := site.URL()
	p, err := url.Parse(u)
	if err != nil || strings.HasSuffix(u, ":0") || p.Port() == "" || p.Port() == "0" {
		t.Fatalf("site %q (%v), want the bound address", u, err)
	}
}
