package server

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/fx"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/logtest"
	"github.com/earshothq/earshot/testkit/pgtest"
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
	started, release := make(chan struct{}), make(chan struct{})
	slow := fx.Decorate(func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/slow" {
				close(started)
				<-release
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
	// A connection left idle: the stop closes it once it has closed the
	// listener, which tells the test the stop is under way.
	idle, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	idleRead := bufio.NewReader(idle)
	if _, err := io.WriteString(idle, "GET /healthz HTTP/1.1\r\nHost: "+addr+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	if resp, err := http.ReadResponse(idleRead, nil); err != nil || resp.StatusCode != 200 || resp.Close {
		t.Fatalf("GET /healthz on a kept-alive connection: %v, %v", resp, err)
	} else {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	stopped := make(chan error, 1)
	go func() { stopped <- a.Stop(context.Background()) }()
	idle.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := idleRead.ReadByte(); err != io.EOF {
		t.Fatalf("the idle connection 5s after the stop began: %v, want it closed", err)
	}
	// The request answers only once the stop is under way: the listener
	// is closed.
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatal("still listening once the stop closed idle connections")
	}
	close(release)
	if err := <-stopped; err != nil {
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

// The helper endpoints count each ingest key against
// EARSHOT_HELPER_RATE_LIMIT_PER_MINUTE on the server's limiter.
func TestHelperRateLimitIsWired(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": "sqlite://:memory:", "EARSHOT_ADDR": addr,
		"EARSHOT_HELPER_RATE_LIMIT_PER_MINUTE": "2"})
	var out strings.Builder
	a := Serve(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), &out)
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	_, rest, _ := strings.Cut(out.String(), "ingest key:")
	key, _, _ := strings.Cut(strings.TrimSpace(rest), "\n")
	var statuses []string
	for i := 0; i < 3; i++ {
		req, _ := http.NewRequest("GET", "http://"+addr+"/phrases?platform=x", nil)
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		statuses = append(statuses, resp.Status[:3]+"/"+resp.Header.Get("X-RateLimit-Remaining"))
	}
	if got := strings.Join(statuses, " "); got != "200/1 200/0 429/0" {
		t.Fatalf("three calls with limit 2: %s (key %q)", got, key)
	}
}

// Every route with an id in its path answers 404 for an id that cannot
// exist (a NUL, bytes that are not UTF-8), on both databases. The routes
// come from the served OpenAPI document, which a test in httpapi keeps
// equal to the route table.
func TestImpossiblePathIDs(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) { testImpossiblePathIDs(t, "sqlite://:memory:") })
	t.Run("postgres", func(t *testing.T) { testImpossiblePathIDs(t, pgtest.URL(t)) })
}

func testImpossiblePathIDs(t *testing.T, dbURL string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": dbURL, "EARSHOT_ADDR": addr,
		"EARSHOT_PLAN_WEBHOOKS_PER_PERSON": "1", "EARSHOT_SECRET_KEY": strings.Repeat("k", 32), "EARSHOT_RATE_LIMIT_PER_MINUTE": "1000"})
	var out strings.Builder
	a := Serve(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), &out)
	if err := a.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer a.Stop(context.Background())
	_, rest, _ := strings.Cut(out.String(), "API key (every scope):")
	key, _, _ := strings.Cut(strings.TrimSpace(rest), "\n")
	resp, err := http.Get("http://" + addr + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage
	}
	err = json.NewDecoder(resp.Body).Decode(&doc)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for path, ops := range doc.Paths {
		if !strings.Contains(path, "{") {
			continue
		}
		for method := range ops {
			if method == "parameters" {
				continue
			}
			for _, id := range []string{"%00", "a%00b", "%FF", "t3_%C3"} {
				u := "http://" + addr + regexp.MustCompile(`\{[^}]+\}`).ReplaceAllString(path, id)
				body := map[string]string{"patch": `{"status":"paused"}`}[method]
				if (strings.Contains(path, "webhooks") || strings.Contains(path, "channels")) && method == "patch" {
					body = `{"active":true}`
				}
				if strings.Contains(path, "triage") && method == "patch" {
					body = `{"read":true}`
				}
				if strings.HasSuffix(path, "/replay") {
					body = `{"from":"2026-01-01T00:00:00Z"}`
				}
				if strings.HasSuffix(path, "/preview") {
					body = `{}`
				}
				req, _ := http.NewRequest(strings.ToUpper(method), u, strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 404 || !strings.Contains(string(b), `"not_found"`) {
					t.Errorf("%s %s: %d %s", strings.ToUpper(method), u, resp.StatusCode, b)
				}
				n++
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d requests", n)
	}
}

// blockingScorer holds the first match it is asked to score until the
// stop has cancelled the sweep, then looks at the database as a sweep
// finishing its batch would.
type blockingScorer struct {
	ports.Scorer
	db      **gormstore.DB
	started chan struct{}
	stopped chan struct{} // closed when the stop has returned
	once    sync.Once
	pinged  chan error
}

func (s *blockingScorer) Score(ctx context.Context, m core.Match) (core.Score, error) {
	first := false
	s.once.Do(func() { first = true })
	if !first {
		return s.Scorer.Score(ctx, m)
	}
	close(s.started)
	<-ctx.Done()
	// A stop that does not wait for this sweep closes the database and
	// returns: the ping comes after that. A stop that waits as it should
	// shows nothing to wait on (it is blocked on this very call), so the
	// wait has a bound, which also leaves room for a stop that closes
	// the database first and waits after.
	select {
	case <-s.stopped:
	case <-time.After(50 * time.Millisecond):
	}
	s.pinged <- (*s.db).Ping(context.Background())
	return core.Score{}, ctx.Err()
}

// A stop while a sweep runs waits for the sweep: the database is still
// open when the sweep's scorer returns, and nothing logs a closed
// database.
func TestStopWaitsForTheSweepUnderWay(t *testing.T) {
	cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": "sqlite://:memory:", "EARSHOT_ADDR": "127.0.0.1:0",
		"EARSHOT_BOOTSTRAP": "false"})
	var logs logtest.Buffer
	var (
		db      *gormstore.DB
		owners  *app.Owners
		phrases *app.Phrases
		ingest  *app.Ingest
	)
	scorer := &blockingScorer{db: &db, started: make(chan struct{}), stopped: make(chan struct{}), pinged: make(chan error, 1)}
	a := Serve(cfg, slog.New(slog.NewTextHandler(&logs, nil)), io.Discard,
		fx.Decorate(func(s ports.Scorer) ports.Scorer { scorer.Scorer = s; return scorer }),
		fx.Populate(&db), fx.Invoke(func(s *services) { owners, phrases, ingest = s.Owners, s.Phrases, s.Ingest }))
	ctx := context.Background()
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	o, err := owners.Create(ctx, "stop@example.com", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := phrases.Add(ctx, o.ID, "acme", "x", "", ""); err != nil {
		t.Fatal(err)
	}
	if _, n, _, err := ingest.Ingest(ctx, o.ID, "x", []core.IngestPost{
		{ExternalID: "1", Body: []string{"should we buy acme?"}, URL: "https://x.com/a/status/1"},
	}); err != nil || n != 1 {
		t.Fatalf("Ingest = %d, %v", n, err)
	}
	<-scorer.started // the new match's event woke the sweep
	err = a.Stop(ctx)
	close(scorer.stopped)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-scorer.pinged; err != nil {
		t.Fatalf("the sweep under way found the database closed: %v", err)
	}
	if strings.Contains(logs.String(), "database is closed") {
		t.Fatalf("logs:\n%s", logs.String())
	}
}
