package server

import (
	"context"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"go.uber.org/fx"
)

func testConfig(t *testing.T, env map[string]string) Config {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	read := ConfigFlags(fs, func(k string) string { return env[k] })
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	cfg, err := read()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestWiringValidates(t *testing.T) {
	cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": "sqlite://:memory:"})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := fx.ValidateApp(serveOptions(cfg, log, io.Discard)...); err != nil {
		t.Fatal(err)
	}
	// The mock's wiring too.
	if err := fx.ValidateApp(mockOptions(cfg, log)...); err != nil {
		t.Fatal(err)
	}
}

// A stop lets requests in flight finish: the in-flight request answers
// 200 although the stop began while it ran.
func TestStopFinishesRequestsInFlight(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": "sqlite://:memory:", "EARSHOT_ADDR": addr, "EARSHOT_BOOTSTRAP": "false"})
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	started := make(chan struct{})
	slow := fx.Decorate(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				close(started)
				time.Sleep(500 * time.Millisecond)
				w.Write([]byte("done"))
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	a := Serve(cfg, log, io.Discard, slow)
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	result := make(chan error, 1)
	go func() {
		resp, err := http.Get("http://" + addr + "/slow")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(body) != "done" {
				err = &unexpected{resp.StatusCode, string(body)}
			}
		}
		result <- err
	}()
	<-started
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := <-result; err != nil {
		t.Fatalf("in-flight request: %v", err)
	}
	if _, err := http.Get("http://" + addr + "/healthz"); err == nil {
		t.Fatal("serving after stop")
	}
}

type unexpected struct {
	status int
	body   string
}

func (u *unexpected) Error() string { return http.StatusText(u.status) + ": " + u.body }
