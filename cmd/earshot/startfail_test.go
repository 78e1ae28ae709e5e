package main

import (
	"errors"
	"net"
	"strings"
	"testing"
)

// closedPort returns a loopback address nothing listens on: a port just
// taken and given back, so a connection to it is refused at once.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// A start that fails while it builds (the database or the broker does
// not answer) says why in one line, the peer's own words, with status
// 1: not the chain of the functions that were being built, with the
// source paths of the machine that built the binary, and never a
// password from a URL.
func TestStartFailsPlainly(t *testing.T) {
	t.Parallel()
	const password = "s3cret-pw"
	for _, c := range []struct {
		name string
		env  func(addr string) []string
		says string
	}{
		{"the database is unreachable", func(addr string) []string {
			return []string{"EARSHOT_DATABASE_URL=postgres://earshot:" + password + "@" + addr + "/earshot?sslmode=disable"}
		}, "open database: "},
		{"the broker is unreachable", func(addr string) []string {
			return []string{"EARSHOT_BUS_URL=amqp://earshot:" + password + "@" + addr + "/"}
		}, "connect to AMQP broker "},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			addr := closedPort(t)
			env := append(baseEnv(t.TempDir()), "EARSHOT_SECRET_KEY="+strings.Repeat("k", 32))
			_, err := runEarshot(append(env, c.env(addr)...), "serve")
			var re *runError
			if !errors.As(err, &re) || re.code != 1 {
				t.Fatalf("serve: %v, want exit status 1", err)
			}
			var last string
			for line := range strings.Lines(re.stderr) {
				last = line
			}
			if !strings.HasPrefix(last, "earshot: "+c.says) || !strings.Contains(last, addr) {
				t.Errorf("the last line is %q, want earshot: %s... naming %s", last, c.says, addr)
			}
			for _, never := range []string{password, "could not build", "failed to build", ".go:", "github.com/earshothq"} {
				if strings.Contains(re.stderr, never) {
					t.Errorf("stderr holds %q:\n%s", never, re.stderr)
				}
			}
		})
	}
}
