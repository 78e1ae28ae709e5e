package main

// The end-to-end harness: TestMain builds the real binary once (with the
// race detector when the tests run with -race), and each test starts it
// as a user would, on port 0, and talks to it over HTTP.
//
// A test that owns what it starts (its servers, their database folders
// from t.TempDir, its Postgres schema from pgtest, a bus prefix of its
// own) calls t.Parallel() first: most of a test's time is spent in the
// processes it starts, so tests run side by side. Tests stay serial when
// they set the environment (t.Setenv), change the test process itself
// (GOMAXPROCS, GC settings), or assert on timing that a loaded machine
// would break: TestRestart, TestCrash*, TestIngestScoredWithinTwoSeconds,
// TestCluster.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/logtest"
)

var (
	binary      string
	raceEnabled bool
)

func TestMain(m *testing.M) {
	if f := os.Getenv(baselineEnv); f != "" {
		serveBaseline(f) // the read benchmark's baseline process
		return
	}
	dir, err := os.MkdirTemp("", "earshot-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "earshot")
	args := []string{"build", "-o", binary}
	if raceEnabled {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building earshot:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// baseEnv is the environment of every process the tests start: the
// test's own, less any EARSHOT_ setting, so a developer's shell cannot
// change what a test sees.
func baseEnv(dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "EARSHOT_") && !strings.HasPrefix(kv, "GORACE=") {
			env = append(env, kv)
		}
	}
	return append(env,
		"GORACE="+goraceNoExitSleep(os.Getenv("GORACE")),
		"EARSHOT_ADDR=127.0.0.1:0",
		"EARSHOT_LOG_FORMAT=json",
		"EARSHOT_DATABASE_URL=sqlite://"+filepath.Join(dir, "earshot.db"),
		// Nothing but loopback is ever a target: reddit reads fail fast.
		"EARSHOT_REDDIT_BASE_URL=http://127.0.0.1:1",
	)
}

// goraceNoExitSleep adds atexit_sleep_ms=0 to GORACE options unless they
// set it. A binary built with -race otherwise sleeps a second before it
// exits, to let goroutines still running report races; the tests start
// the binary hundreds of times, every admin command and every server stop
// paid that second, and by then the processes have nothing left running
// that the sleep would catch. Reports made while running still fail the
// process with the race detector's exit status.
func goraceNoExitSleep(opts string) string {
	if strings.Contains(opts, "atexit_sleep_ms=") {
		return opts
	}
	return strings.TrimSpace(opts + " atexit_sleep_ms=0")
}

type instance struct {
	t         testing.TB
	bin       string   // the binary to run; empty: the one TestMain built
	args      []string // flags after serve
	URL       string
	env       []string
	cmd       *exec.Cmd
	stdout    *logtest.Buffer
	logs      *logtest.Buffer
	logCap    int // bytes of logs kept at most; 0 keeps them all
	APIKey    string
	IngestKey string
	OwnerID   string
	done      chan error
	output    news // told of every write to stdout and logs
}

// news tells whoever waits that something changed: changes returns a
// channel closed at the next tell. A waiter takes the channel before it
// looks, so a change between its look and its wait is not missed.
type news struct {
	mu sync.Mutex
	ch chan struct{}
}

func (n *news) changes() <-chan struct{} {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch == nil {
		n.ch = make(chan struct{})
	}
	return n.ch
}

func (n *news) tell() {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.ch != nil {
		close(n.ch)
		n.ch = nil
	}
}

// telling is a writer that tells n after each write.
type telling struct {
	io.Writer
	n *news
}

func (w telling) Write(p []byte) (int, error) {
	defer w.n.tell()
	return w.Writer.Write(p)
}

// waitOutput reports whether ok held of what the server printed, its
// stdout and its logs, within; it looks again after each write.
func (s *instance) waitOutput(within time.Duration, ok func(stdout, logs string) bool) bool {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	for {
		changed := s.output.changes()
		if ok(s.stdout.String(), s.logs.String()) {
			return true
		}
		select {
		case <-changed:
		case <-deadline.C:
			return ok(s.stdout.String(), s.logs.String())
		}
	}
}

// poll asks ok until it holds, every `every`, and reports whether it did
// within: for what the server shows only when asked (its API, its
// metrics, a page, a database it uses). Not sooner than every, so that
// the asking does not load what it waits on.
func poll(within, every time.Duration, ok func() bool) bool {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for !ok() {
		select {
		case <-tick.C:
		case <-deadline.C:
			return ok()
		}
	}
	return true
}

// waitUntil is poll that fails t, saying what(), when ok does not hold
// within.
func waitUntil(t testing.TB, within, every time.Duration, ok func() bool, what func() string) {
	t.Helper()
	if !poll(within, every, ok) {
		t.Fatal(what())
	}
}

var (
	listenLine    = regexp.MustCompile(`"msg":"listening","addr":"([^"]+)"`)
	apiKeyLine    = regexp.MustCompile(`API key \(every scope\): (svc_api_\S+)`)
	ingestKeyLine = regexp.MustCompile(`ingest key:\s+(svc_ingest_\S+)`)
	ownerLine     = regexp.MustCompile(`created owner (\S+)`)
)

// start runs `earshot serve` with env added to the base environment and
// waits until it listens. When the database is new it also waits for the
// bootstrap keys.
func start(t testing.TB, env ...string) *instance {
	t.Helper()
	s := &instance{t: t, env: append(baseEnv(t.TempDir()), env...)}
	s.launch()
	t.Cleanup(s.stop)
	return s
}

func (s *instance) launch() {
	t := s.t
	t.Helper()
	s.stdout, s.logs = &logtest.Buffer{}, &logtest.Buffer{}
	bin := s.bin
	if bin == "" {
		bin = binary
	}
	s.cmd = exec.Command(bin, append([]string{"serve"}, s.args...)...)
	s.cmd.Env = s.env
	s.cmd.Stdout = telling{s.stdout, &s.output}
	stderr, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		kept := 0
		for sc.Scan() {
			line := sc.Text()
			if kept += len(line) + 1; s.logCap == 0 || kept <= s.logCap {
				s.logs.Write([]byte(line + "\n"))
				s.output.tell()
			}
			if m := listenLine.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
	}()
	s.done = make(chan error, 1)
	go func() { s.done <- s.cmd.Wait() }()
	select {
	case a := <-addr:
		s.URL = "http://" + a
	case err := <-s.done:
		t.Fatalf("earshot serve exited before listening: %v\nlogs:\n%s", err, s.logs)
	case <-time.After(60 * time.Second):
		t.Fatalf("earshot serve did not listen within 60s; logs:\n%s", s.logs)
	}
	// The bootstrap hook runs right after the listener opens.
	s.waitOutput(5*time.Second, func(out, logs string) bool {
		api, ingest, owner := apiKeyLine.FindStringSubmatch(out), ingestKeyLine.FindStringSubmatch(out), ownerLine.FindStringSubmatch(out)
		if api != nil && ingest != nil && owner != nil {
			s.APIKey, s.IngestKey, s.OwnerID = api[1], ingest[1], owner[1]
			return true
		}
		return strings.Contains(logs, `"msg":"bootstrap skipped"`)
	})
}

// stop sends SIGTERM and waits for a clean exit.
func (s *instance) stop() {
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil {
			s.t.Errorf("earshot serve exited with %v; logs:\n%s", err, s.logs)
		}
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		s.t.Errorf("earshot serve did not stop within 30s of SIGTERM")
	}
}

// profileIfAsked makes the next launch run a build with -tags profile
// that writes its CPU profile to EARSHOT_BENCH_CPUPROFILE/CASE.pprof when
// it stops, when that variable names a folder; else it changes nothing.
func (s *instance) profileIfAsked(b testing.TB) {
	dir := os.Getenv("EARSHOT_BENCH_CPUPROFILE")
	if dir == "" {
		return
	}
	s.bin = filepath.Join(b.TempDir(), "earshot-profile")
	if out, err := exec.Command("go", "build", "-tags", "profile", "-o", s.bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("building with -tags profile: %v\n%s", err, out)
	}
	s.env = append(s.env, "EARSHOT_CPU_PROFILE="+filepath.Join(dir, strings.ReplaceAll(b.Name(), "/", "_")+".pprof"))
}

// restart stops the server and starts it again on the same database.
func (s *instance) restart() {
	s.stop()
	s.launch()
}

// admin runs `earshot admin args...` on the server's database.
func (s *instance) admin(args ...string) (string, error) {
	return runEarshot(s.env, append([]string{"admin"}, args...)...)
}

// mustAdmin is admin that fails the test on error, returning stdout
// without its final newline.
func (s *instance) mustAdmin(args ...string) string {
	s.t.Helper()
	out, err := s.admin(args...)
	if err != nil {
		s.t.Fatalf("earshot admin %v: %v", args, err)
	}
	return strings.TrimSuffix(out, "\n")
}

type runError struct {
	code   int
	stderr string
}

func (e *runError) Error() string { return fmt.Sprintf("exit status %d: %s", e.code, e.stderr) }

func runEarshot(env []string, args ...string) (string, error) {
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return stdout.String(), &runError{code: ee.ExitCode(), stderr: stderr.String()}
	}
	return stdout.String(), err
}

type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic value.
func (r response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, r.Body)
	}
	return v
}

// errorCode returns error.code of a failure body, checking its shape.
func (r response) errorCode(t testing.TB) (code, message string) {
	t.Helper()
	v := r.JSON(t)
	e, ok := v["error"].(map[string]any)
	if !ok || len(v) != 1 || len(e) != 2 {
		t.Fatalf("not the documented error body: %s", r.Body)
	}
	return e["code"].(string), e["message"].(string)
}

var client = &http.Client{Timeout: 30 * time.Second}

// call sends a request with key as the bearer (none when empty); body is
// sent as is when it is a string or []byte, else as JSON.
func (s *instance) call(method, path, key string, body any, headers ...string) response {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := client.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return response{Status: resp.StatusCode, Header: resp.Header, Body: b}
}

// want checks the status and, for failures, the documented error code.
func (r response) want(t testing.TB, status int, code string) response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	if code != "" {
		if got, _ := r.errorCode(t); got != code {
			t.Fatalf("error code %q, want %q; body %s", got, code, r.Body)
		}
	}
	return r
}

// Every process the tests start is told not to sleep a second at exit
// under the race detector, and keeps the GORACE options of the shell.
func TestBaseEnvNoRaceExitSleep(t *testing.T) {
	t.Setenv("GORACE", "halt_on_error=1")
	var got []string
	for _, kv := range baseEnv(t.TempDir()) {
		if strings.HasPrefix(kv, "GORACE=") {
			got = append(got, kv)
		}
	}
	if want := "GORACE=halt_on_error=1 atexit_sleep_ms=0"; len(got) != 1 || got[0] != want {
		t.Fatalf("GORACE settings %q, want only %q", got, want)
	}
}
