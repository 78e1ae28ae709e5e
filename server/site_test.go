package server

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/fx/fxtest"
)

// The loops that put the site's address in links run before the server
// listens and sets it: under -race, a read beside the write is caught.
func TestSiteFollowsTheBoundAddress(t *testing.T) {
	cfg := Config{Addr: "127.0.0.1:0", SiteURL: "http://127.0.0.1:0"}
	site := newSite(cfg)
	lc := fxtest.NewLifecycle(t)
	startServer(lc, cfg, http.NotFoundHandler(), slog.New(slog.NewTextHandler(io.Discard, nil)), site)

	stop, read := make(chan struct{}), make(chan string)
	go func() { // a loop making links while the server starts
		last := site.URL()
		for {
			select {
			case <-stop:
				read <- last
				return
			default:
				last = site.URL()
			}
		}
	}()
	lc.RequireStart()
	close(stop)
	<-read
	if u := site.URL(); u == cfg.SiteURL || !strings.HasPrefix(u, "http://127.0.0.1:") {
		t.Fatalf("site %q, want the bound address", u)
	}
	lc.RequireStop()
}
