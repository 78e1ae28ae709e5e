// Command earshot runs the listening service (serve), the legacy mock API
// (mock), schema migrations (migrate) and the admin console (admin).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
	// The zones owners pick for daily alerts must load on hosts without a
	// zone database (a bare container), not only where they were chosen.
	_ "time/tzdata"

	"go.uber.org/dig"
	"go.uber.org/fx"

	"github.com/earshothq/earshot/app"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/server"
)

const usage = `usage: earshot <command> [flags]

commands:
  serve      run the live service
  mock       run the legacy mock management API
  migrate    create or upgrade the schema and exit
  admin      owner, key, ingest-key, session, phrase and reddit commands
  helper     read the owner's platforms on their machine and send posts in

Every setting is an environment variable with a flag of the same name:
EARSHOT_DATABASE_URL and --database-url. Run 'earshot serve -h' for all.
`

// exitError carries an exit status: 2 for bad usage or settings.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }

func usageErr(format string, args ...any) error {
	return &exitError{2, fmt.Errorf(format, args...)}
}

// stopProfile ends the CPU profile of a build with -tags profile; it does
// nothing in a release build.
var stopProfile = func() {}

func main() {
	err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stopProfile()
	if err == nil {
		return
	}
	code := 1
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "earshot:", oneLineError(err.Error()))
	} else {
		code = 0
	}
	os.Exit(code)
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return usageErr("no command given")
	}
	switch args[0] {
	case "serve":
		return serve(args[1:], getenv, stdout, stderr)
	case "mock":
		return mock(args[1:], getenv, stderr)
	case "migrate":
		return migrate(ctx, args[1:], getenv, stdout, stderr)
	case "admin":
		return admin(ctx, args[1:], getenv, stdout, stderr)
	case "helper":
		return helperCmd(ctx, args[1:], getenv, stderr)
	case "-h", "--help", "help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return usageErr("unknown command %q", args[0])
}

// parse parses args with the settings' flags plus the command's own, and
// returns the settings.
func parse(fs *flag.FlagSet, args []string, getenv func(string) string) (server.Config, error) {
	read := server.ConfigFlags(fs, getenv)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return server.Config{}, err
		}
		return server.Config{}, &exitError{2, err}
	}
	if fs.NArg() > 0 {
		return server.Config{}, usageErr("unexpected argument %q", fs.Arg(0))
	}
	cfg, err := read()
	if err != nil {
		return server.Config{}, &exitError{2, err}
	}
	return cfg, nil
}

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func newLogger(cfg server.Config, w io.Writer) *slog.Logger {
	return server.NewLogger(cfg.LogFormat, cfg.LogLevel, w)
}

func serve(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parse(newFlagSet("earshot serve", stderr), args, getenv)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	tuneGC(os.Getenv)
	tuneProcs(cfg.DatabaseURL, os.Getenv)
	sigs, stop := notifySignals()
	defer stop()
	// Building the app opens and migrates the database and connects to
	// the bus, steps that wait on a peer (one that accepts and never
	// answers, a migration lock held) without a context. Nothing has
	// started yet that a stop would end, so a signal meanwhile ends the
	// program at once, as its default action would, but saying so and
	// with status 0 as any stop asked for.
	built := make(chan *fx.App, 1)
	go func() { built <- server.Serve(cfg, log, stdout) }()
	var a *fx.App
	select {
	case a = <-built:
	case sig := <-sigs:
		log.Info("stopping", "signal", sig.String(), "start", "unfinished")
		return nil
	}
	if err := a.Err(); err != nil {
		return buildFailed(err)
	}
	return runUntilSignal(a, log, sigs)
}

// oneLineError puts an error's words on one line. Some peers word a
// cause over several (the Postgres driver gives each try of a connection
// its own line, indented); a log collector reading stderr line by line
// would keep the first, which says only that connecting failed.
func oneLineError(msg string) string {
	lines := strings.Split(strings.TrimSpace(msg), "\n")
	var b strings.Builder
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if i > 0 && b.Len() > 0 {
			if strings.HasSuffix(b.String(), ":") {
				b.WriteString(" ")
			} else {
				b.WriteString("; ")
			}
		}
		b.WriteString(l)
	}
	return b.String()
}

// buildFailed is why building an application failed, as the step that
// failed says it (open database: ..., connect to AMQP broker ...): fx's
// error adds every function that was being built, with source paths of
// the machine that compiled the binary, which tell an operator nothing.
func buildFailed(err error) error { return dig.RootCause(err) }

// Unless the operator set GOGC or GOMEMLIMIT, the server collects
// garbage when its heap has grown fourfold rather than doubled, under a
// soft limit of 256 MiB. Its live heap is a few tens of MB and each
// request leaves short-lived garbage, so at the default the collector
// runs far more often than the heap needs; the limit keeps the memory
// the larger factor allows well under what the pipeline may use
// (docs/adr/0002-runtime-tuning.md).
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(400)
	debug.SetMemoryLimit(256 << 20)
}

// On SQLite, unless the operator set GOMAXPROCS, the server runs Go code
// on twice as many threads at once as the runtime would (one per core,
// or what the container's CPU limit allows). A call into SQLite's C code
// keeps its thread and, until the runtime takes it back, the thread's
// right to run Go code: with one such right per core, cores sit idle
// while ready goroutines wait for a call to return. Twice as many let
// them run (docs/adr/0002-runtime-tuning.md). Postgres is reached in Go,
// where more threads only cost CPU. The runtime no longer follows a
// container's changing CPU limit once this is set.
func tuneProcs(databaseURL string, getenv func(string) string) {
	if getenv("GOMAXPROCS") != "" || !strings.HasPrefix(databaseURL, "sqlite:") {
		return
	}
	runtime.GOMAXPROCS(2 * runtime.GOMAXPROCS(0))
}

// notifySignals catches SIGINT and SIGTERM from now on, until stop.
func notifySignals() (sigs <-chan os.Signal, stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM)
	return ch, func() { signal.Stop(ch) }
}

// startBound and stopBound bound the start and the stop
// (docs/operating.md: serve stops within 30 s of SIGINT or SIGTERM).
const (
	startBound = 2 * time.Minute
	stopBound  = 30 * time.Second
)

// adminBound is how long an admin command waits for Postgres to answer
// its short statements before it gives up (docs/operating.md): as long as
// the connect bound, ample for a slow link or a server waking from a
// pause. A pending migration, the one step that can rightly run long, is
// not bounded.
const adminBound = 30 * time.Second

// errSignaled is why a start is cut short by a signal.
var errSignaled = errors.New("stop asked for during the start")

// runUntilSignal starts a, waits for SIGINT or SIGTERM (from sigs) and
// stops it, letting requests in flight finish, within stopBound of the
// signal. A signal during the start cuts it short: the steps that wait
// on a peer give up (server.WithStartAbort), fx stops what had started,
// and the exit status is 0 as after any stop asked for, unless stopping
// what had started failed. A start past startBound fails the same way,
// with what had started stopped.
func runUntilSignal(a *fx.App, log *slog.Logger, sigs <-chan os.Signal) error {
	interrupted, interrupt := context.WithCancelCause(context.Background())
	defer interrupt(nil)
	abort, cancelAbort := context.WithTimeout(interrupted, startBound)
	defer cancelAbort()
	// fx stops a failed start under the start's own context, so that
	// context outlasts the abort by the stop's time.
	startCtx, cancelStart := context.WithCancel(context.Background())
	defer cancelStart()
	outer := time.AfterFunc(startBound+stopBound, cancelStart)
	defer outer.Stop()
	started := make(chan error, 1)
	go func() { started <- a.Start(server.WithStartAbort(startCtx, abort)) }()

	select {
	case err := <-started:
		if err != nil {
			return err
		}
		sig := <-sigs
		log.Info("stopping", "signal", sig.String())
	case sig := <-sigs:
		log.Info("stopping", "signal", sig.String(), "start", "unfinished")
		outer.Reset(stopBound)
		interrupt(errSignaled)
		if err := <-started; err != nil {
			return cutShort(err, log)
		}
		// The start finished before it saw the signal: a stop as any.
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), stopBound)
	defer cancel()
	return a.Stop(stopCtx)
}

// cutShort is the outcome of a start that failed after a signal: none
// when the signal cut it short and what had started stopped, err when
// that stop failed too or the start failed for a reason of its own.
func cutShort(err error, log *slog.Logger) error {
	if !errors.Is(err, errSignaled) {
		return err
	}
	// fx joins the start's error and the stop's (go.uber.org/multierr).
	if joined, ok := err.(interface{ Unwrap() []error }); ok && len(joined.Unwrap()) > 1 {
		return err
	}
	log.Info("stopped before the start finished", "err", err)
	return nil
}

func mock(args []string, getenv func(string) string, stderr io.Writer) error {
	fs := newFlagSet("earshot mock", stderr)
	state := fs.String("state", "", "state file (same as EARSHOT_MOCK_STATE)")
	cfg, err := parse(fs, args, getenv)
	if err != nil {
		return err
	}
	if *state != "" {
		cfg.MockState = *state
	}
	log := newLogger(cfg, stderr)
	sigs, stop := notifySignals()
	defer stop()
	a := server.Mock(cfg, log)
	if err := a.Err(); err != nil {
		return buildFailed(err)
	}
	return runUntilSignal(a, log, sigs)
}

func migrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cfg, err := parse(newFlagSet("earshot migrate", stderr), args, getenv)
	if err != nil {
		return err
	}
	v, err := server.Migrate(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "schema at version %d\n", v)
	return nil
}

func admin(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	const adminUsage = `usage:
  earshot admin owner create --email E [--name N]
  earshot admin owner list
  earshot admin owner update --owner ID [--email E] [--name N]
  earshot admin key create --owner ID --name N [--scopes read,write:phrases,webhooks]
  earshot admin key list --owner ID
  earshot admin key revoke --owner ID --id KEY_ID
  earshot admin ingest-key create --owner ID
  earshot admin ingest-key list --owner ID
  earshot admin ingest-key revoke --owner ID --id KEY_ID
  earshot admin session set --owner ID --platform P --file JAR.json
  earshot admin phrase add --owner ID --platform P --phrase S [--community C]
  earshot admin phrase list --owner ID
  earshot admin owner login-link --owner ID
  earshot admin reddit status
`
	if len(args) < 2 {
		fmt.Fprint(stderr, adminUsage)
		return usageErr("admin needs a subject and a verb")
	}
	cmd := args[0] + " " + args[1]
	fs := newFlagSet("earshot admin "+cmd, stderr)
	owner := fs.String("owner", "", "owner id")
	var email, name, scopes, id, platform, file, phrase, community *string
	switch cmd {
	case "owner create":
		email = fs.String("email", "", "email address (required)")
		name = fs.String("name", "", "display name")
	case "owner update":
		email = fs.String("email", "", "new email address")
		name = fs.String("name", "", "new display name")
	case "key create":
		name = fs.String("name", "", "key name (required)")
		scopes = fs.String("scopes", "read", "comma-separated scopes: read, write:phrases, webhooks")
	case "key list", "ingest-key create", "ingest-key list", "phrase list", "owner login-link", "reddit status", "owner list":
	case "key revoke", "ingest-key revoke":
		id = fs.String("id", "", "key id (required)")
	case "session set":
		platform = fs.String("platform", "", "reddit, x or facebook (required)")
		file = fs.String("file", "", "cookie jar JSON file (required)")
	case "phrase add":
		platform = fs.String("platform", "", "reddit, x or facebook (required)")
		phrase = fs.String("phrase", "", "the phrase (required)")
		community = fs.String("community", "", "subreddit, for reddit phrases")
	default:
		fmt.Fprint(stderr, adminUsage)
		return usageErr("unknown admin command %q", cmd)
	}
	cfg, err := parse(fs, args[2:], getenv)
	if err != nil {
		return err
	}
	need := func(flagName string, v *string) error {
		if v != nil && strings.TrimSpace(*v) == "" {
			return usageErr("--%s is required", flagName)
		}
		return nil
	}
	if cmd != "owner create" && cmd != "reddit status" && cmd != "owner list" {
		if err := need("owner", owner); err != nil {
			return err
		}
	}
	// owner update changes only the flags given: an empty --name clears
	// the name, an absent one keeps it.
	var newEmail, newName *string
	if cmd == "owner update" {
		fs.Visit(func(f *flag.Flag) {
			switch f.Name {
			case "email":
				newEmail = email
			case "name":
				newName = name
			}
		})
		if newEmail == nil && newName == nil {
			return usageErr("owner update needs --email, --name or both")
		}
		email = nil
	}
	for _, req := range []struct {
		name string
		v    *string
	}{{"email", email}, {"id", id}, {"platform", platform}, {"file", file}, {"phrase", phrase}} {
		if err := need(req.name, req.v); err != nil {
			return err
		}
	}
	var keyScopes []core.Scope
	if cmd == "key create" {
		if err := need("name", name); err != nil {
			return err
		}
		// Before the database is opened, as every refused flag is.
		if keyScopes, err = core.ParseScopes(*scopes); err != nil {
			return &exitError{2, err}
		}
	}
	if platform != nil {
		// Before the database is opened, as every refused flag is.
		if _, err := core.ParsePlatform("--platform", *platform); err != nil {
			return &exitError{2, err}
		}
	}
	var jar []byte
	if cmd == "session set" {
		if jar, err = readJar(*file); err != nil {
			return err
		}
	}
	con, err := server.OpenConsole(ctx, cfg, adminBound)
	if err != nil {
		return err
	}
	defer con.Close()
	return answered(ctx, "admin "+cmd, stdout, func(ctx context.Context, stdout io.Writer) error {
		switch cmd {
		case "owner create":
			o, err := con.Owners.Create(ctx, *email, *name)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, o.ID)
		case "key create":
			secret, _, err := con.Keys.CreateAPIKey(ctx, *owner, *name, keyScopes)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, secret)
		case "key list":
			keys, err := con.Keys.List(ctx, *owner, core.APIKey)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tSCOPES\tCREATED\tSTATUS")
			for _, k := range keys {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, scopeList(k), k.CreatedAt.Format(time.RFC3339), keyStatus(k))
			}
			return tw.Flush()
		case "key revoke":
			// API keys only, as key list shows: an ingest key's id is not found.
			return con.Keys.RevokeOfKind(ctx, *owner, core.APIKey, *id)
		case "ingest-key create":
			secret, _, err := con.Keys.CreateIngestKey(ctx, *owner, "admin")
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, secret)
		case "ingest-key list":
			keys, err := con.Keys.List(ctx, *owner, core.IngestKey)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tCREATED\tLAST USED\tSTATUS")
			for _, k := range keys {
				used := "never"
				if !k.LastUsedAt.IsZero() {
					used = k.LastUsedAt.Format(time.RFC3339)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", k.ID, k.CreatedAt.Format(time.RFC3339), used, keyStatus(k))
			}
			return tw.Flush()
		case "ingest-key revoke":
			return con.Keys.RevokeOfKind(ctx, *owner, core.IngestKey, *id)
		case "session set":
			// The owner first, as for phrase add: a mistyped id is "owner not
			// found", not the store's "account not found".
			if _, err := con.Owners.Get(ctx, *owner); err != nil {
				return err
			}
			if _, _, err := con.Accounts.SetSession(ctx, *owner, *platform, jar); err != nil {
				return err
			}
		case "phrase add":
			// The owner first: a mistyped id is "owner not found", not the
			// store's refusal of the phrase.
			if _, err := con.Owners.Get(ctx, *owner); err != nil {
				return err
			}
			p, _, err := con.Phrases.Add(ctx, *owner, *phrase, *platform, *community, "")
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, p.ID)
		case "owner list":
			owners, err := con.Owners.List(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, "ID\tEMAIL\tNAME\tCREATED")
			for _, o := range owners {
				fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\n", o.ID, o.Email, o.Name, o.CreatedAt.Format(time.RFC3339))
			}
		case "owner update":
			_, err := con.Owners.Update(ctx, *owner, newEmail, newName)
			return err
		case "owner login-link":
			link, err := con.Sessions.LoginLink(ctx, *owner)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, link)
		case "reddit status":
			return redditStatus(ctx, con, stdout)
		case "phrase list":
			// An unknown owner is an error, not an empty list.
			if _, err := con.Owners.Get(ctx, *owner); err != nil {
				return err
			}
			ps, err := con.Phrases.List(ctx, *owner, ports.PhraseFilter{})
			if err != nil {
				return err
			}
			for _, p := range ps {
				comm := "-"
				if p.Community != "" {
					comm = "r/" + p.Community
				}
				fmt.Fprintf(stdout, "%s\t%s\t%s\t%s\t%s\n", p.ID, p.Platform, comm, p.Status, p.Phrase)
			}
		}
		return nil
	})
}

// answered runs do, the admin command named what once the database is
// open, and gives up on it after adminBound: a Postgres that stops answering would
// otherwise hold the command forever, and not every call into the store
// ends with its context (a new phrase's request to be filled outlives its
// caller). What do prints reaches stdout only when it finished in time:
// a command given up on prints nothing.
func answered(ctx context.Context, what string, stdout io.Writer, do func(context.Context, io.Writer) error) error {
	ctx, cancel := context.WithTimeout(ctx, adminBound)
	defer cancel()
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- do(ctx, &out) }()
	select {
	case err := <-done:
		// A statement the deadline cut fails with the deadline's error.
		if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			break
		}
		if _, werr := out.WriteTo(stdout); err == nil {
			err = werr
		}
		return err
	case <-ctx.Done():
	}
	return fmt.Errorf("%s: the database gave no answer within %v", what, adminBound)
}

// readJar reads a cookie jar file, at most one byte past the largest jar
// accepted: a file that is too large (or endless, like /dev/zero) is
// refused at once instead of being read whole into memory.
func readJar(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the cookie jar: %w", err)
	}
	defer f.Close()
	jar, err := io.ReadAll(io.LimitReader(f, app.MaxCookieJar+1))
	if err != nil {
		return nil, fmt.Errorf("reading the cookie jar: %w", err)
	}
	if len(jar) > app.MaxCookieJar {
		return nil, fmt.Errorf("the cookie jar file %s is too large: at most %d bytes (%d KB)", path, app.MaxCookieJar, app.MaxCookieJar>>10)
	}
	return jar, nil
}

func scopeList(k core.Key) string {
	if len(k.Scopes) == 0 {
		return "read"
	}
	s := make([]string, len(k.Scopes))
	for i, sc := range k.Scopes {
		s[i] = string(sc)
	}
	return strings.Join(s, ",")
}

func keyStatus(k core.Key) string {
	if k.Revoked() {
		return "revoked " + k.RevokedAt.Format(time.RFC3339)
	}
	return "live"
}
