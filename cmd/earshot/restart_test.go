//go:build linux

package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/earshothq/earshot/adapters/bus"
	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/testkit/logtest"
	"github.com/earshothq/earshot/testkit/pgtest"
)

const (
	pgBin = "/usr/lib/postgresql/15/bin"
	// The package's own script, not the /usr/sbin wrapper: as root that
	// one runs the node as the rabbitmq user, through su, which resets
	// HOME and cannot enter the test's temporary directory.
	rabbitServer = "/usr/lib/rabbitmq/bin/rabbitmq-server"
)

// TestRestart stops PostgreSQL, then RabbitMQ, under a running service and
// starts them again: while one is gone requests fail with the documented
// error body (or, for the bus, keep working from the database), the
// process stays up, and once it is back every match is scored without
// anyone touching the service. The test runs its own PostgreSQL server and
// RabbitMQ node on free loopback ports, so the shared ones are never
// stopped; it runs where CI runs the other database tests.
func TestRestart(t *testing.T) {
	if os.Getenv(pgtest.Env) == "" || os.Getenv("EARSHOT_TEST_AMQP_URL") == "" {
		t.Skip("EARSHOT_TEST_POSTGRES_URL or EARSHOT_TEST_AMQP_URL is unset: restart test skipped")
	}
	for _, bin := range []string{pgBin + "/initdb", pgBin + "/postgres", rabbitServer} {
		if _, err := os.Stat(bin); err != nil {
			t.Skip(bin + " is missing: restart test skipped")
		}
	}
	epmd, err := exec.LookPath("epmd")
	if err != nil {
		t.Skip("epmd is not on PATH: restart test skipped")
	}

	// RabbitMQ takes seconds to boot, so both start at once.
	type started struct {
		pg  *ownPostgres
		err error
	}
	pgc := make(chan started, 1)
	go func() {
		pg, err := newPostgres()
		pgc <- started{pg, err}
	}()
	mq, mqErr := newRabbit(epmd)
	if mq != nil {
		t.Cleanup(mq.close)
	}
	got := <-pgc
	pg := got.pg
	if pg != nil {
		t.Cleanup(pg.close)
	}
	if got.err != nil {
		var log string
		if pg != nil {
			log = pg.log.String()
		}
		t.Fatalf("own PostgreSQL: %v\n%s", got.err, log)
	}
	if mqErr != nil {
		t.Fatalf("own RabbitMQ: %v\n%s", mqErr, mq.logs())
	}

	env := []string{
		"EARSHOT_DATABASE_URL=" + pg.url(),
		"EARSHOT_BUS_URL=" + mq.url(),
		"EARSHOT_BUS_PREFIX=" + busPrefix,
		"EARSHOT_SECRET_KEY=" + strings.Repeat("k", 40),
		"EARSHOT_SCORING_INTERVAL=1s",
		"EARSHOT_RATE_LIMIT_PER_MINUTE=100000",
	}
	if raceEnabled {
		// watermill-amqp swaps its connection state without a lock
		// (ThreeDotsLabs/watermill#693), so a broker restart makes the race
		// detector report inside that library. The process keeps its exit
		// status clean here and checkRaces fails the test for any report
		// that is not that one.
		env = append(env, "GORACE=halt_on_error=0 exitcode=0")
	}
	// Registered before start, so it runs after the service has stopped.
	var s *instance
	t.Cleanup(func() {
		if s != nil {
			checkRaces(t, s)
		}
	})
	s = start(t, env...)
	s.call("POST", "/api/v1/keywords", s.APIKey, map[string]any{"phrase": "acme", "platform": "x"}).want(t, 201, "")
	r := &restartRun{t: t, s: s}
	r.ingest(5).want(t, 200, "")
	r.waitScored(10 * time.Second)
	waitReady(t, s, 200, 10*time.Second)

	// One phase after the other on one service rather than subtests: the
	// harness reports through the test that started the server.
	r.postgres(pg)
	r.rabbitmq(mq)
}

// restartRun is the service under test and what it acknowledged.
type restartRun struct {
	t *testing.T
	s *instance
	n int // posts acknowledged, each one match
}

// ingest sends k new posts that each match the phrase.
func (r *restartRun) ingest(k int) response {
	r.t.Helper()
	posts := make([]any, k)
	for i := range posts {
		posts[i] = ingestPost(fmt.Sprintf("r-%d", r.n+i), "acme is great")
	}
	resp := r.s.call("POST", "/ingest", r.s.IngestKey, map[string]any{"platform": "x", "posts": posts})
	if resp.Status == 200 {
		if got := resp.JSON(r.t)["ingested"]; got != float64(k) {
			r.t.Fatalf("ingest answered %s, want %d ingested", resp.Body, k)
		}
		r.n += k
	}
	return resp
}

// waitScored waits until the service holds exactly the acknowledged
// matches, all scored.
func (r *restartRun) waitScored(wait time.Duration) {
	r.t.Helper()
	total, unscored := 0, 0
	waitUntil(r.t, wait, 100*time.Millisecond, func() bool {
		if total, unscored = countMatches(r.t, r.s); total != r.n {
			r.t.Fatalf("%d matches stored, want %d", total, r.n)
		}
		return unscored == 0
	}, func() string { return fmt.Sprintf("%d of %d matches still unscored after %v", unscored, total, wait) })
}

func (r *restartRun) postgres(pg *ownPostgres) {
	t, s := r.t, r.s
	began := time.Now()
	failedSweeps := func(logs string) int { return strings.Count(logs, `"msg":"scoring sweep failed"`) }
	before := failedSweeps(s.logs.String())
	if err := pg.stop(); err != nil {
		t.Fatalf("stopping PostgreSQL: %v", err)
	}
	for _, resp := range []response{
		s.call("GET", "/api/v1/matches", s.APIKey, nil),
		s.call("GET", "/api/v1/me", s.APIKey, nil),
		r.ingest(3),
	} {
		wantOutage(t, resp)
	}
	if resp := s.call("GET", "/healthz", "", nil); resp.Status != 200 {
		t.Fatalf("/healthz with the database gone: %d %s", resp.Status, resp.Body)
	}
	waitReady(t, s, 503, 5*time.Second)
	// A few sweeps fail meanwhile; none of that may end the process.
	if !s.waitOutput(10*time.Second, func(_, logs string) bool { return failedSweeps(logs) >= before+2 }) {
		t.Fatalf("%d scoring sweeps failed in 10s with the database gone, want 2", failedSweeps(s.logs.String())-before)
	}
	wantOutage(t, s.call("GET", "/api/v1/matches", s.APIKey, nil))
	alive(t, s)

	if err := pg.start(); err != nil {
		t.Fatalf("starting PostgreSQL again: %v\n%s", err, pg.log)
	}
	back := time.Now()
	var resp response
	waitUntil(t, 20*time.Second, 100*time.Millisecond, func() bool {
		if resp = s.call("GET", "/api/v1/matches", s.APIKey, nil); resp.Status != 200 {
			wantOutage(t, resp)
		}
		return resp.Status == 200
	}, func() string {
		return fmt.Sprintf("requests still fail 20 s after PostgreSQL came back: %d %s", resp.Status, resp.Body)
	})
	t.Logf("PostgreSQL: the API answered again %v after it came back", time.Since(back).Round(time.Millisecond))
	waitReady(t, s, 200, 10*time.Second)
	r.ingest(5).want(t, 200, "")
	r.waitScored(10 * time.Second)
	alive(t, s)
	t.Logf("PostgreSQL: outage and recovery took %v; %d matches, all scored", time.Since(began).Round(time.Millisecond), r.n)
}

func (r *restartRun) rabbitmq(mq *ownRabbit) {
	t, s := r.t, r.s
	began := time.Now()
	if err := mq.stop(); err != nil {
		t.Fatalf("stopping RabbitMQ: %v", err)
	}
	waitReady(t, s, 503, 10*time.Second)
	// The database is the truth: an ingest it stored is acknowledged
	// whatever the bus does, and the sweep scores it later.
	for i := 0; i < 3; i++ {
		t0 := time.Now()
		r.ingest(4).want(t, 200, "")
		if d := time.Since(t0); d > 5*time.Second {
			t.Fatalf("an ingest with the broker gone took %v", d)
		}
	}
	s.call("GET", "/api/v1/matches", s.APIKey, nil).want(t, 200, "")
	if resp := s.call("GET", "/healthz", "", nil); resp.Status != 200 {
		t.Fatalf("/healthz with the broker gone: %d %s", resp.Status, resp.Body)
	}
	alive(t, s)

	if err := mq.start(); err != nil {
		t.Fatalf("starting RabbitMQ again: %v\n%s", err, mq.logs())
	}
	back := time.Now()
	waitReady(t, s, 200, 30*time.Second)
	t.Logf("RabbitMQ: ready again %v after it came back", time.Since(back).Round(time.Millisecond))
	r.waitScored(10 * time.Second)

	// Readiness sees the connections; the queue's consumer shows that the
	// subscription came back on them too. (Which path scored a match does
	// not show from outside: the 1 s sweep races the bus.)
	waitConsumer(t, mq, 10*time.Second)
	t0 := time.Now()
	r.ingest(5).want(t, 200, "")
	r.waitScored(5 * time.Second)
	t.Logf("RabbitMQ: new matches scored %v after ingest", time.Since(t0).Round(time.Millisecond))
	alive(t, s)
	t.Logf("RabbitMQ: outage and recovery took %v; %d matches, all scored", time.Since(began).Round(time.Millisecond), r.n)
}

// wantOutage checks the answer to a request that needs the database while
// it is gone: 503 or 500 with the documented error body and the
// server_error code, the only code the spec has for a failure of the
// service's own.
func wantOutage(t *testing.T, r response) {
	t.Helper()
	if r.Status != 500 && r.Status != 503 {
		t.Fatalf("status %d with the database gone, want 500 or 503; body %s", r.Status, r.Body)
	}
	if code, _ := r.errorCode(t); code != "server_error" {
		t.Fatalf("error code %q with the database gone, want server_error; body %s", code, r.Body)
	}
}

// alive fails the test if the service has exited.
func alive(t *testing.T, s *instance) {
	t.Helper()
	select {
	case err := <-s.done:
		t.Fatalf("earshot serve exited: %v; logs:\n%s", err, s.logs)
	default:
	}
}

// waitReady waits until GET /readyz answers status.
func waitReady(t *testing.T, s *instance, status int, wait time.Duration) {
	t.Helper()
	var r response
	waitUntil(t, wait, 100*time.Millisecond, func() bool { r = s.call("GET", "/readyz", "", nil); return r.Status == status },
		func() string {
			return fmt.Sprintf("/readyz answers %d %s after %v, want %d", r.Status, r.Body, wait, status)
		})
}

// busPrefix names the service's exchanges and queues on the test's node.
const busPrefix = "restart."

// waitConsumer waits until the scoring queue on the node has a consumer.
func waitConsumer(t *testing.T, mq *ownRabbit, wait time.Duration) {
	t.Helper()
	queue := busPrefix + app.TopicMatchStored + "_" + bus.DefaultGroup
	var err error
	waitUntil(t, wait, 100*time.Millisecond, func() bool {
		var consumers int
		consumers, err = mq.consumers(queue)
		return err == nil && consumers > 0
	}, func() string {
		return fmt.Sprintf("queue %s has no consumer %v after the broker came back (%v)", queue, wait, err)
	})
}

// checkRaces fails the test for a race report in the service's output
// other than the known one inside watermill-amqp.
func checkRaces(t *testing.T, s *instance) {
	for _, report := range strings.Split(s.logs.String(), "==================\n") {
		if strings.Contains(report, "WARNING: DATA RACE") && !strings.Contains(report, "ThreeDotsLabs/watermill-amqp") {
			t.Errorf("data race in earshot serve:\n%s", report)
		}
	}
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// childEnv is the test's environment without the settings of a
// developer's shell that would change what the servers do.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "EARSHOT_") && !strings.HasPrefix(kv, "RABBITMQ_") &&
			!strings.HasPrefix(kv, "ERL_") && !strings.HasPrefix(kv, "PG") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// waitExit waits for a child's exit, killing its process group after
// wait.
func waitExit(cmd *exec.Cmd, done <-chan error, wait time.Duration) error {
	select {
	case err := <-done:
		return err
	case <-time.After(wait):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return fmt.Errorf("%s did not stop within %v: killed", filepath.Base(cmd.Path), wait)
	}
}

// runChild starts cmd in its own process group, which dies with the test
// process by sig, and returns the channel of its exit.
func runChild(cmd *exec.Cmd, sig syscall.Signal) (<-chan error, error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	cmd.SysProcAttr.Pdeathsig = sig
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return done, nil
}

// ownPostgres is a PostgreSQL server of the test's own, run as the
// postgres user (initdb refuses root) from a directory it owns.
type ownPostgres struct {
	dir  string
	port int
	cred *syscall.Credential
	log  *logtest.Buffer
	cmd  *exec.Cmd
	done <-chan error
}

func newPostgres() (*ownPostgres, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	dir, err := os.MkdirTemp("", "earshot-pg-")
	if err != nil {
		return nil, err
	}
	p := &ownPostgres{dir: dir, log: &logtest.Buffer{}, cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
	if err := os.Chown(dir, uid, gid); err != nil {
		return p, err
	}
	if p.port, err = freePort(); err != nil {
		return p, err
	}
	initdb := exec.Command(pgBin+"/initdb", "-D", filepath.Join(dir, "data"), "-U", "postgres",
		"--auth=trust", "--encoding=UTF8", "--locale=C", "--no-sync")
	initdb.Dir = dir
	initdb.Env = childEnv()
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return p, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	return p, p.start()
}

func (p *ownPostgres) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.port)
}

// start runs the server on the test's data directory and port and waits
// until it answers queries.
func (p *ownPostgres) start() error {
	p.cmd = exec.Command(pgBin+"/postgres", "-D", filepath.Join(p.dir, "data"),
		"-p", strconv.Itoa(p.port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+p.dir,
		"-c", "fsync=off", "-c", "full_page_writes=off")
	p.cmd.Dir = p.dir
	p.cmd.Env = childEnv()
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	// SIGQUIT is the immediate shutdown.
	done, err := runChild(p.cmd, syscall.SIGQUIT)
	if err != nil {
		return err
	}
	p.done = done
	var exited error
	if poll(30*time.Second, 100*time.Millisecond, func() bool {
		if err = pingPostgres(p.url()); err == nil {
			return true
		}
		select {
		case exited = <-done:
			return true
		default:
			return false
		}
	}) {
		if err == nil {
			return nil
		}
		p.cmd = nil
		return fmt.Errorf("postgres exited: %v", exited)
	}
	return fmt.Errorf("postgres does not answer after 30 s: %v", err)
}

func pingPostgres(url string) error {
	db, err := gorm.Open(postgres.Open(url+"&connect_timeout=2"), &gorm.Config{Logger: logger.Discard})
	if db != nil {
		// gorm returns the pool even when its first ping failed.
		if sqlDB, err := db.DB(); err == nil {
			defer sqlDB.Close()
		}
	}
	if err != nil {
		return err
	}
	return db.Exec("SELECT 1").Error
}

// stop is PostgreSQL's fast shutdown (SIGINT): sessions are cut, as in a
// restart by an operator.
func (p *ownPostgres) stop() error {
	if p.cmd == nil {
		return nil
	}
	cmd := p.cmd
	p.cmd = nil
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		return err
	}
	return waitExit(cmd, p.done, 30*time.Second)
}

func (p *ownPostgres) close() {
	_ = p.stop()
	os.RemoveAll(p.dir)
}

// ownRabbit is a RabbitMQ node of the test's own, with its own epmd, so
// that nothing of it is left behind and the shared node is never touched.
type ownRabbit struct {
	dir      string
	port     int
	epmd     *exec.Cmd
	epmdDone <-chan error
	env      []string
	log      *logtest.Buffer
	cmd      *exec.Cmd
	done     <-chan error
}

func newRabbit(epmd string) (*ownRabbit, error) {
	dir, err := os.MkdirTemp("", "earshot-rabbit-")
	if err != nil {
		return nil, err
	}
	r := &ownRabbit{dir: dir, log: &logtest.Buffer{}}
	var epmdPort, distPort int
	for _, p := range []*int{&r.port, &epmdPort, &distPort} {
		if *p, err = freePort(); err != nil {
			return r, err
		}
	}
	conf := fmt.Sprintf("listeners.tcp.1 = 127.0.0.1:%d\n", r.port)
	for name, text := range map[string]string{"rabbitmq.conf": conf, "rabbitmq-env.conf": "", "enabled_plugins": "[].\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			return r, err
		}
	}
	r.epmd = exec.Command(epmd, "-port", strconv.Itoa(epmdPort), "-address", "127.0.0.1")
	r.epmd.Stdout, r.epmd.Stderr = r.log, r.log
	if r.epmdDone, err = runChild(r.epmd, syscall.SIGKILL); err != nil {
		r.epmd = nil
		return r, err
	}
	r.env = childEnv(
		"HOME="+dir, // the Erlang cookie
		"ERL_EPMD_ADDRESS=127.0.0.1",
		"ERL_EPMD_PORT="+strconv.Itoa(epmdPort),
		"RABBITMQ_NODENAME=earshot-test-"+fmt.Sprintf("%x", time.Now().UnixNano())+"@localhost",
		"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT="+strconv.Itoa(r.port),
		"RABBITMQ_DIST_PORT="+strconv.Itoa(distPort),
		"RABBITMQ_CONF_ENV_FILE="+filepath.Join(dir, "rabbitmq-env.conf"),
		"RABBITMQ_CONFIG_FILE="+filepath.Join(dir, "rabbitmq.conf"),
		"RABBITMQ_ADVANCED_CONFIG_FILE="+filepath.Join(dir, "advanced.config"),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(dir, "enabled_plugins"),
		"RABBITMQ_MNESIA_BASE="+filepath.Join(dir, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(dir, "log"),
		"RABBITMQ_LOGS=-",
	)
	return r, r.start()
}

func (r *ownRabbit) url() string { return fmt.Sprintf("amqp://guest:guest@127.0.0.1:%d/", r.port) }

func (r *ownRabbit) logs() string {
	if r == nil {
		return ""
	}
	return r.log.String()
}

// start boots the node on the test's data directory and waits until it
// takes AMQP connections. Erlang boots slowly, more so beside the race
// detector, hence the long wait.
func (r *ownRabbit) start() error {
	r.cmd = exec.Command(rabbitServer)
	r.cmd.Dir = r.dir
	r.cmd.Env = r.env
	r.cmd.Stdout, r.cmd.Stderr = r.log, r.log
	// The script turns SIGTERM into a clean stop of the node.
	done, err := runChild(r.cmd, syscall.SIGTERM)
	if err != nil {
		r.cmd = nil
		return err
	}
	r.done = done
	var conn *amqp.Connection
	var exited error
	if poll(90*time.Second, 200*time.Millisecond, func() bool {
		if conn, err = amqp.DialConfig(r.url(), amqp.Config{Dial: amqp.DefaultDial(2 * time.Second)}); err == nil {
			return true
		}
		select {
		case exited = <-done:
			return true
		default:
			return false
		}
	}) {
		if err == nil {
			return conn.Close()
		}
		r.cmd = nil
		return fmt.Errorf("rabbitmq-server exited: %v", exited)
	}
	return fmt.Errorf("RabbitMQ does not answer after 90 s: %v", err)
}

// consumers returns how many consumers the queue has.
func (r *ownRabbit) consumers(queue string) (int, error) {
	conn, err := amqp.DialConfig(r.url(), amqp.Config{Dial: amqp.DefaultDial(2 * time.Second)})
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		return 0, err
	}
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		return 0, err
	}
	return q.Consumers, nil
}

// stop shuts the node down as an operator's restart does; the broker
// closes its client connections on the way.
func (r *ownRabbit) stop() error {
	if r.cmd == nil {
		return nil
	}
	cmd := r.cmd
	r.cmd = nil
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	return waitExit(cmd, r.done, 60*time.Second)
}

func (r *ownRabbit) close() {
	_ = r.stop()
	if r.epmd != nil {
		_ = r.epmd.Process.Kill()
		<-r.epmdDone
	}
	os.RemoveAll(r.dir)
}
