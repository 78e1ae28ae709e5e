package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"
)

// A request that does not end within the stop's time (a client that
// sends its body slowly, or reads an export slowly) does not keep the
// loops, the bus and the database from stopping: the requests get part
// of the stop's time, their connections are then closed, and the stop
// ends cleanly within its limit.
func TestStopBoundsRequestsThatDoNotEnd(t *testing.T) {
	cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": "sqlite://:memory:", "EARSHOT_ADDR": "127.0.0.1:0",
		"EARSHOT_BOOTSTRAP": "false", "EARSHOT_SECRET_KEY": strings.Repeat("k", 32)})
	started, ended := make(chan struct{}), make(chan error, 1)
	hang := fx.Decorate(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/hang" {
				h.ServeHTTP(w, r)
				return
			}
			close(started)
			// The client never sends the rest of its body: this read
			// ends only when the connection is closed.
			_, err := io.ReadAll(r.Body)
			ended <- err
		})
	})
	var site *Site
	h := &hookOrder{}
	a := Serve(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard, hang, fx.Populate(&site),
		fx.WithLogger(func() fxevent.Logger { return h }))
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", strings.TrimPrefix(site.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST /hang HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nabc"); err != nil {
		t.Fatal(err)
	}
	<-started
	const limit = 3 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	if err := a.Stop(ctx); err != nil {
		t.Fatalf("stop with a request that does not end: %v", err)
	}
	if err := <-ended; err == nil {
		t.Fatal("the hung request's body read ended without an error")
	}
	if !slices.Contains(h.ran, "close the database") || h.ran[len(h.ran)-1] != "close the database" {
		t.Fatalf("hooks ran:\n  %s\nwant every one, the database closed last", strings.Join(h.ran, "\n  "))
	}
}
