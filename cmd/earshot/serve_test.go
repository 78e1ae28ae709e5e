package main

import (
	"errors"
	"math"
	"net/http"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
)

var uuidRe = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestServeBootstrapsOnce(t *testing.T) {
	t.Parallel()
	s := start(t)
	if !strings.HasPrefix(s.APIKey, "svc_api_") || !strings.HasPrefix(s.IngestKey, "svc_ingest_") || !uuidRe.MatchString(s.OwnerID) {
		t.Fatalf("bootstrap output:\n%s", s.stdout)
	}
	if !strings.Contains(s.stdout.String(), `curl -H "Authorization: Bearer `+s.APIKey+`" `+"http://127.0.0.1:0/api/v1/me") &&
		!strings.Contains(s.stdout.String(), "/api/v1/me") {
		t.Fatalf("no curl line in:\n%s", s.stdout)
	}
	if strings.Contains(s.logs.String(), s.APIKey) || strings.Contains(s.logs.String(), s.IngestKey) {
		t.Fatal("a bootstrap key reached the log")
	}
	s.call("GET", "/healthz", "", nil).want(t, 200, "")
	s.call("GET", "/readyz", "", nil).want(t, 200, "")
	me := s.call("GET", "/api/v1/me", s.APIKey, nil).want(t, 200, "").JSON(t)
	if me["data"].(map[string]any)["plan"] != "free" {
		t.Fatalf("GET /me: %v", me)
	}
	s.restart()
	if s.stdout.String() != "" {
		t.Fatalf("second start printed keys again:\n%s", s.stdout)
	}
	s.call("GET", "/api/v1/me", s.APIKey, nil).want(t, 200, "")
}

func TestServeNoBootstrap(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false")
	if s.stdout.String() != "" || s.APIKey != "" {
		t.Fatalf("EARSHOT_BOOTSTRAP=false printed:\n%s", s.stdout)
	}
}

func TestBadSettingsExit2(t *testing.T) {
	t.Parallel()
	env := baseEnv(t.TempDir())
	for _, tc := range []struct {
		setting, want string
	}{
		{"EARSHOT_DATABASE_URL=mysql://x", "EARSHOT_DATABASE_URL (value not shown: it can hold a secret): accepts sqlite://PATH"},
		{"EARSHOT_BUS_URL=kafka://x", "EARSHOT_BUS_URL (value not shown: it can hold a secret): accepts memory://"},
		{"EARSHOT_RATE_LIMIT_PER_MINUTE=lots", "EARSHOT_RATE_LIMIT_PER_MINUTE=lots: accepts a whole number"},
		{"EARSHOT_SCORING_INTERVAL=soon", "EARSHOT_SCORING_INTERVAL=soon: accepts a positive duration"},
		{"EARSHOT_WEBHOOK_ALLOW_PRIVATE=maybe", "EARSHOT_WEBHOOK_ALLOW_PRIVATE=maybe: accepts true or false"},
		{"EARSHOT_LOG_FORMAT=xml", "EARSHOT_LOG_FORMAT=xml: accepts text or json"},
		{"EARSHOT_ADDR=nowhere", "EARSHOT_ADDR=nowhere: accepts host:port"},
		{"EARSHOT_BUS_URL=amqp:/guest:hunter2@127.0.0.1", "EARSHOT_BUS_URL (value not shown: it can hold a secret): accepts memory://"},
		{"EARSHOT_SECRET_KEY=short", "EARSHOT_SECRET_KEY (value not shown: it can hold a secret): accepts a secret of at least 32 bytes"},
	} {
		for _, cmd := range [][]string{{"serve"}, {"migrate"}, {"admin", "owner", "create", "--email", "a@example.com"}} {
			_, err := runEarshot(append(env, tc.setting), cmd...)
			var re *runError
			if !errors.As(err, &re) || re.code != 2 || !strings.Contains(re.stderr, tc.want) || strings.Contains(re.stderr, "hunter2") {
				t.Errorf("%s %v: %v; want exit 2 with %q", tc.setting, cmd, err, tc.want)
			}
		}
	}
	// A flag wins over the variable and is named in the message.
	_, err := runEarshot(append(env, "EARSHOT_DATABASE_URL=sqlite://ok.db"), "migrate", "--database-url", "mysql://y")
	var re *runError
	if !errors.As(err, &re) || re.code != 2 || !strings.Contains(re.stderr, "--database-url (value not shown: it can hold a secret): accepts") {
		t.Errorf("flag: %v", err)
	}
	_, err = runEarshot(env, "frobnicate")
	if !errors.As(err, &re) || re.code != 2 {
		t.Errorf("unknown command: %v", err)
	}
}

func TestMigrate(t *testing.T) {
	t.Parallel()
	env := baseEnv(t.TempDir())
	for i := 0; i < 2; i++ {
		out, err := runEarshot(env, "migrate")
		if err != nil || !regexp.MustCompile(`^schema at version \d+\n$`).MatchString(out) {
			t.Fatalf("migrate run %d: %q, %v", i+1, out, err)
		}
	}
}

func TestAdminConsole(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	owner := s.mustAdmin("owner", "create", "--email", "ada@example.com", "--name", "Ada")
	if !uuidRe.MatchString(owner) {
		t.Fatalf("owner create printed %q, want only an id", owner)
	}
	if _, err := s.admin("owner", "create", "--email", "ada@example.com"); err == nil {
		t.Fatal("a second owner with the same email was created")
	}
	key := s.mustAdmin("key", "create", "--owner", owner, "--name", "ci", "--scopes", "read,write:phrases")
	if !regexp.MustCompile(`^svc_api_[A-Za-z0-9_-]{43,}$`).MatchString(key) {
		t.Fatalf("key create printed %q", key)
	}
	ingest := s.mustAdmin("ingest-key", "create", "--owner", owner)
	if !regexp.MustCompile(`^svc_ingest_[A-Za-z0-9_-]{43,}$`).MatchString(ingest) {
		t.Fatalf("ingest-key create printed %q", ingest)
	}
	readOnly := s.mustAdmin("key", "create", "--owner", owner, "--name", "dash")
	list := s.mustAdmin("key", "list", "--owner", owner)
	if strings.Contains(list, key) || strings.Contains(list, key[8:20]) || !strings.Contains(list, "ci") ||
		!strings.Contains(list, "read,write:phrases") || strings.Count(list, "\n") != 2 {
		t.Fatalf("key list:\n%s", list)
	}

	// The console writes while serve runs on the same SQLite file, and
	// both see each other's work.
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := s.call("GET", "/api/v1/keywords", key, nil); r.Status != 200 {
				t.Errorf("GET /keywords while the console writes: %d %s", r.Status, r.Body)
			}
		}()
	}
	id := s.mustAdmin("phrase", "add", "--owner", owner, "--platform", "reddit", "--phrase", "  Acme   CRM ", "--community", "r/SaaS")
	wg.Wait()
	if !uuidRe.MatchString(id) {
		t.Fatalf("phrase add printed %q", id)
	}
	got := s.call("GET", "/api/v1/keywords/"+id, key, nil).want(t, 200, "").JSON(t)["data"].(map[string]any)
	if got["phrase"] != "Acme CRM" || got["community"] != "saas" {
		t.Fatalf("phrase added by the console: %v", got)
	}
	// The same validation and plan limit as POST /keywords.
	if _, err := s.admin("phrase", "add", "--owner", owner, "--platform", "reddit", "--phrase", "other", "--community", "saas"); err == nil ||
		!strings.Contains(err.Error(), "plan allows 1 phrase per platform (reddit has 1)") {
		t.Fatalf("second reddit phrase: %v", err)
	}
	s.call("POST", "/api/v1/keywords", key, map[string]any{"phrase": "more", "platform": "reddit", "community": "golang"}).want(t, 403, "plan_limit")
	if _, err := s.admin("phrase", "add", "--owner", owner, "--platform", "x", "--phrase", "acme", "--community", "saas"); err == nil ||
		!strings.Contains(err.Error(), "community is only allowed for reddit") {
		t.Fatalf("x phrase with community: %v", err)
	}
	s.call("POST", "/api/v1/keywords", key, map[string]any{"phrase": "acme crm", "platform": "x"}).want(t, 201, "")
	lines := strings.Split(s.mustAdmin("phrase", "list", "--owner", owner), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], id+"\treddit\tr/saas\tlistening\tAcme CRM") || !strings.Contains(lines[1], "\tx\t-\tlistening\tacme crm") {
		t.Fatalf("phrase list:\n%s", strings.Join(lines, "\n"))
	}

	// Revoking stops the key on the next request.
	s.call("GET", "/api/v1/me", readOnly, nil).want(t, 200, "")
	keyID := strings.Fields(strings.Split(s.mustAdmin("key", "list", "--owner", owner), "\n")[2])[0]
	if out := s.mustAdmin("key", "revoke", "--owner", owner, "--id", keyID); out != "" {
		t.Fatalf("key revoke printed %q", out)
	}
	s.call("GET", "/api/v1/me", readOnly, nil).want(t, 401, "unauthorized")
	if !strings.Contains(s.mustAdmin("key", "list", "--owner", owner), "revoked") {
		t.Fatal("key list does not show the revocation")
	}
	if _, err := s.admin("key", "revoke", "--owner", owner, "--id", "nope"); err == nil {
		t.Fatal("revoking an unknown key succeeded")
	}
	var re *runError
	if _, err := s.admin("key", "create", "--owner", owner); !errors.As(err, &re) || re.code != 2 {
		t.Fatalf("key create without --name: %v", err)
	}
	if _, err := s.admin("key", "create", "--owner", owner, "--name", "x", "--scopes", "admin"); !errors.As(err, &re) || re.code != 2 {
		t.Fatalf("unknown scope: %v", err)
	}
	for _, secret := range []string{key, ingest, readOnly} {
		if strings.Contains(s.logs.String(), secret) {
			t.Fatal("a key secret reached the server log")
		}
	}
}

func TestGracefulStop(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	s.call("GET", "/healthz", "", nil).want(t, 200, "")
	s.stop()
	if s.cmd.ProcessState == nil || !s.cmd.ProcessState.Success() {
		t.Fatalf("serve did not exit 0 on SIGTERM: %v", s.cmd.ProcessState)
	}
	if !strings.Contains(s.logs.String(), `"msg":"stopping","signal":"terminated"`) {
		t.Fatalf("no stop log line:\n%s", s.logs)
	}
	if _, err := http.Get(s.URL + "/healthz"); err == nil {
		t.Fatal("still serving after stop")
	}
}

func TestMetricsAndRequestIDs(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	s.call("POST", "/ingest", s.IngestKey, map[string]any{"platform": "x", "posts": []any{ingestPost("1", "acme rocks"), ingestPost("2", "")}}).want(t, 200, "")
	r := s.call("GET", "/api/v1/keywords/nope", s.APIKey, nil, "X-Request-Id", "trace-123").want(t, 404, "not_found")
	if r.Header.Get("X-Request-Id") != "trace-123" {
		t.Fatalf("X-Request-Id: %q", r.Header.Get("X-Request-Id"))
	}
	if id := s.call("GET", "/healthz", "", nil).Header.Get("X-Request-Id"); len(id) != 16 {
		t.Fatalf("generated request id %q", id)
	}
	// An unsafe id is replaced by a generated one (16 hex digits, which
	// may well spell "bad" by chance).
	if h := s.call("GET", "/healthz", "", nil, "X-Request-Id", "bad id\"with quotes").Header.Get("X-Request-Id"); len(h) != 16 || strings.ContainsAny(h, " \"") {
		t.Fatalf("an unsafe request id was echoed: %q", h)
	}
	wants := []string{
		`earshot_http_requests_total{method="GET",route="/api/v1/keywords/{id}",status="404"} 1`,
		`earshot_http_requests_total{method="POST",route="/ingest",status="200"} 1`,
		`earshot_events_total{event="posts_ingested"} 1`,
		`earshot_events_total{event="posts_skipped"} 1`,
		`earshot_events_total{event="matches_created"} 1`,
		`earshot_unscored_matches`,
		`earshot_http_request_duration_seconds_bucket{method="GET",route="/api/v1/keywords/{id}"`,
	}
	// A request is counted and logged once its response is written: ask
	// until every line is there, or report the last answer.
	var missing []string
	poll(5*time.Second, 20*time.Millisecond, func() bool {
		m := string(s.call("GET", "/metrics", "", nil).want(t, 200, "").Body)
		missing = missing[:0]
		for _, want := range wants {
			if !strings.Contains(m, want) {
				missing = append(missing, want)
			}
		}
		return len(missing) == 0 && strings.Contains(s.logs.String(), `"request_id":"trace-123"`)
	})
	for _, want := range missing {
		t.Errorf("/metrics lacks %s", want)
	}
	if !strings.Contains(s.logs.String(), `"request_id":"trace-123"`) {
		t.Fatalf("no log line carries the request id:\n%s", s.logs)
	}
	for _, secret := range []string{s.APIKey, s.IngestKey} {
		if strings.Contains(s.logs.String(), secret) {
			t.Fatal("a key reached the log")
		}
	}
	s.call("GET", "/no/such/thing", "", nil).want(t, 404, "not_found")
}

// On SQLite GOMAXPROCS is the operator's when set, and twice the
// runtime's own otherwise; on Postgres it is the runtime's own.
func TestTuneProcs(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(procs)
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

	tuneProcs("sqlite://earshot.db", env(map[string]string{"GOMAXPROCS": "1"}))
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Fatalf("with GOMAXPROCS set, %d, want the runtime's %d untouched", got, procs)
	}
	tuneProcs("postgres://db/earshot", env(nil))
	if got := runtime.GOMAXPROCS(0); got != procs {
		t.Fatalf("on Postgres, %d, want the runtime's %d untouched", got, procs)
	}
	tuneProcs("sqlite://earshot.db", env(nil))
	if got := runtime.GOMAXPROCS(0); got != 2*procs {
		t.Fatalf("GOMAXPROCS %d, want twice %d", got, procs)
	}
}

// The collector's settings are the operator's when GOGC or GOMEMLIMIT is
// set, and the server's own otherwise.
func TestTuneGC(t *testing.T) {
	gc, limit := debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64)
	defer func() { debug.SetGCPercent(gc); debug.SetMemoryLimit(limit) }()
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

	tuneGC(env(map[string]string{"GOGC": "100"}))
	if got := debug.SetGCPercent(100); got != 100 {
		t.Fatalf("with GOGC set, GC percent %d, want the operator's 100", got)
	}
	tuneGC(env(map[string]string{"GOMEMLIMIT": "1GiB"}))
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("with GOMEMLIMIT set, memory limit %d, want it untouched", got)
	}
	tuneGC(env(nil))
	if got := debug.SetGCPercent(100); got != 400 {
		t.Fatalf("GC percent %d, want 400", got)
	}
	if got := debug.SetMemoryLimit(-1); got != 256<<20 {
		t.Fatalf("memory limit %d, want 256 MiB", got)
	}
}
