package main

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/pgtest"
)

// openBound is how long opening the database waits for Postgres's first
// answer after connecting: gormstore's connect bound, 30 s.
const openBound = 30 * time.Second

// A Postgres that completes the start-up and then stops answering (hung,
// or a firewall that drops the session part way) ends migrate, and
// serve's start, within the open's bound, with status 1 and a last line
// saying so: the open's first statement waited for good before.
func TestMigrateAndServeGiveUpOnAPostgresThatStopsAnswering(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"migrate", "serve"} {
		t.Run(cmd, func(t *testing.T) {
			t.Parallel()
			direct := pgtest.URL(t)
			env := append(baseEnv(t.TempDir()), "EARSHOT_SECRET_KEY="+strings.Repeat("k", 32))
			if _, err := runEarshot(append(env, "EARSHOT_DATABASE_URL="+direct), "migrate"); err != nil {
				t.Fatal(err)
			}
			u, err := url.Parse(direct)
			if err != nil {
				t.Fatal(err)
			}
			q := u.Query()
			q.Set("sslmode", "disable") // the proxy reads the protocol in the clear
			u.RawQuery = q.Encode()
			proxy := stallingPostgres(t, u.Host, func(typ byte, _ []byte) bool { return typ == 'Q' || typ == 'P' })
			u.Host = proxy.addr

			ceiling := openBound + 45*time.Second
			ctx, cancel := context.WithTimeout(context.Background(), ceiling)
			defer cancel()
			c := exec.CommandContext(ctx, binary, cmd)
			c.Env = append(env, "EARSHOT_DATABASE_URL="+u.String())
			var stdout, stderr bytes.Buffer
			c.Stdout, c.Stderr = &stdout, &stderr
			began := time.Now()
			err = c.Run()
			took := time.Since(began)
			t.Logf("exit after %v: %s", took.Round(time.Millisecond), stderr.String())
			if ctx.Err() != nil {
				t.Fatalf("%s still runs %v after Postgres stopped answering; stderr:\n%s", cmd, ceiling, stderr.String())
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Fatalf("%v, want exit status 1; stderr:\n%s", err, stderr.String())
			}
			if took < openBound {
				t.Errorf("gave up after %v, before the %v bound", took, openBound)
			}
			// serve logs before it fails; the failure is the last line.
			lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
			last := lines[len(lines)-1]
			want := "no answer within " + openBound.String()
			if !strings.HasPrefix(last, "earshot: open database: ") || !strings.Contains(last, want) {
				t.Errorf("last line of stderr %q, want earshot: open database: ... %s", last, want)
			}
			if cmd == "migrate" && len(lines) != 1 {
				t.Errorf("stderr %q, want one line", stderr.String())
			}
			select {
			case <-proxy.held:
			default:
				t.Error("the proxy never dropped a statement")
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout %q, want nothing", stdout.String())
			}
		})
	}
}
