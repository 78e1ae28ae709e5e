package server

import (
	"context"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"

	"github.com/earshothq/earshot/testkit/pgtest"
)

// Each command's fx application is complete: every value a function
// asks for is provided, once.
func TestEveryCommandGraphValidates(t *testing.T) {
	cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": "sqlite://:memory:"})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for name, opts := range map[string][]fx.Option{
		"serve": serveOptions(cfg, log, io.Discard),
		"mock":  mockOptions(cfg, log),
	} {
		if err := fx.ValidateApp(opts...); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The admin console builds its services over the database as serve does,
// its sign-in links under the configured site address.
func TestConsoleOpens(t *testing.T) {
	cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": "sqlite://:memory:", "EARSHOT_SITE_URL": "https://listen.example.com",
		"EARSHOT_SECRET_KEY": strings.Repeat("k", 32)})
	ctx := context.Background()
	con, err := OpenConsole(ctx, cfg, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	o, err := con.Owners.Create(ctx, "console@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	link, err := con.Sessions.LoginLink(ctx, o.ID)
	if err != nil || !strings.HasPrefix(link, "https://listen.example.com/") {
		t.Fatalf("LoginLink = %q, %v", link, err)
	}
	if err := con.Close(); err != nil {
		t.Fatal(err)
	}
}

// hookOrder records the lifecycle hooks fx runs, each named by what it
// does.
type hookOrder struct {
	mu  sync.Mutex
	ran []string
}

func (h *hookOrder) LogEvent(e fxevent.Event) {
	var caller, fn, phase string
	switch e := e.(type) {
	case *fxevent.OnStartExecuting:
		caller, fn, phase = e.CallerName, e.FunctionName, "start"
	case *fxevent.OnStopExecuting:
		caller, fn, phase = e.CallerName, e.FunctionName, "stop"
	default:
		return
	}
	name := phase + " " + caller
	for _, n := range []struct{ has, name string }{
		{"(*DB).Close", "close the database"},
		{"(*Bus).Close", "close the bus"},
		{"(*services).closeBus", "close the bus"},
		{"(*Dashboard).Close", "end live streams"},
		{"(*Server).Shutdown", "shut the server down"},
		{"boundedServer.Shutdown", "shut the server down"},
		{"startServer", "listen"},
		{"printBootstrap", "print the first owner's keys"},
		{"backgroundAfter", phase + " a loop"},
	} {
		if strings.Contains(fn, n.has) || strings.Contains(caller, n.has) {
			name = n.name
			break
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.ran = append(h.ran, name)
}

// Serve's hooks run in the order its shutdown depends on: the loops
// start before the server listens and the first owner's keys are printed
// under the address bound; on stop the dashboard's live streams end
// first, so the server's shutdown waits only for requests that end, then
// every loop stops before the bus and the database close.
func TestServeLifecycleOrder(t *testing.T) {
	for _, c := range []struct {
		name  string
		db    func(t *testing.T) string
		loops int // on Postgres the rate windows are swept, the delivery queue and matches vacuumed too
	}{
		{"sqlite", func(*testing.T) string { return "sqlite://:memory:" }, 10},
		{"postgres", func(t *testing.T) string { return pgtest.URL(t) }, 13},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": c.db(t), "EARSHOT_ADDR": "127.0.0.1:0",
				"EARSHOT_SECRET_KEY": strings.Repeat("k", 32)})
			h := &hookOrder{}
			a := Serve(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard,
				fx.WithLogger(func() fxevent.Logger { return h }))
			ctx := context.Background()
			if err := a.Start(ctx); err != nil {
				t.Fatal(err)
			}
			if err := a.Stop(ctx); err != nil {
				t.Fatal(err)
			}
			want := slices.Concat(slices.Repeat([]string{"start a loop"}, c.loops),
				[]string{"listen", "print the first owner's keys", "end live streams", "shut the server down"},
				slices.Repeat([]string{"stop a loop"}, c.loops),
				[]string{"close the bus", "close the database"})
			if !slices.Equal(h.ran, want) {
				t.Fatalf("hooks ran in this order:\n  %s\nwant\n  %s", strings.Join(h.ran, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}
}
