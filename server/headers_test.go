package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/fx"
)

// A request's header is bounded well below net/http's default of 1 MB:
// each connection holds its header in memory while it is read, and a
// refused request's path is written whole to the log. Keys, cookies and
// paths are far smaller; a larger header is refused with 431.
func TestHeaderBound(t *testing.T) {
	cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": "sqlite://:memory:", "EARSHOT_ADDR": "127.0.0.1:0",
		"EARSHOT_BOOTSTRAP": "false", "EARSHOT_SECRET_KEY": strings.Repeat("k", 32)})
	var site *Site
	a := Serve(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard, fx.Populate(&site))
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	for _, c := range []struct {
		pad  int
		want int
	}{{8 << 10, http.StatusOK}, {maxHeaderBytes + 8<<10, http.StatusRequestHeaderFieldsTooLarge}} {
		req, _ := http.NewRequest(http.MethodGet, site.URL()+"/healthz", nil)
		req.Header.Set("X-Pad", strings.Repeat("a", c.pad))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("a header of %d bytes: %d, want %d", c.pad, resp.StatusCode, c.want)
		}
	}
}
