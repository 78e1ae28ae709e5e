package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/logtest"
)

// newKeyHints returns the commands the logs name for making the first
// owner's keys again, from the line that names them.
func newKeyHints(t *testing.T, logs string) (api, ingest string) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(logs))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		a, _ := line["new_api_key"].(string)
		i, _ := line["new_ingest_key"].(string)
		if a != "" && i != "" {
			return a, i
		}
	}
	return "", ""
}

// runHint runs a command the logs named ("earshot admin ...") on env's
// database and returns what it printed, the new key.
func runHint(t *testing.T, env []string, command string) string {
	t.Helper()
	args := strings.Fields(command)
	if len(args) < 2 || args[0] != "earshot" {
		t.Fatalf("not an earshot command: %q", command)
	}
	out, err := runEarshot(env, args[1:]...)
	if err != nil {
		t.Fatalf("%s: %v", command, err)
	}
	return strings.TrimSpace(out)
}

// The first start's keys are printed once, after they are stored. A
// start that stores them and never prints them (it dies at the print:
// its stdout is a pipe whose reader is gone; or the print fails: a full
// disk) leaves keys no one saw and that no later start prints. The
// operator is told the commands that make new ones: at once when the
// print fails, and on each later start while none of the owner's keys
// has been used.
func TestFirstKeysNeverSeen(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		stdout func(t *testing.T) *os.File
		dies   bool
	}{
		{"stdout's reader is gone", func(t *testing.T) *os.File {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			r.Close()
			return w
		}, true},
		{"stdout is full", func(t *testing.T) *os.File {
			f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
			if err != nil {
				t.Skip("no /dev/full:", err)
			}
			return f
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := baseEnv(t.TempDir())
			first := exec.Command(binary, "serve")
			first.Env = env
			out := c.stdout(t)
			first.Stdout = out
			logs := &logtest.Buffer{}
			first.Stderr = logs
			if err := first.Start(); err != nil {
				t.Fatal(err)
			}
			out.Close()
			done := make(chan error, 1)
			go func() { done <- first.Wait() }()
			t.Cleanup(func() {
				if first.ProcessState == nil {
					_ = first.Process.Kill()
					<-done
				}
			})
			if c.dies {
				select {
				case err := <-done:
					var ee *exec.ExitError
					if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGPIPE {
						t.Fatalf("the first start ended with %v, want death by SIGPIPE at the print; logs:\n%s", err, logs)
					}
				case <-time.After(60 * time.Second):
					t.Fatalf("the first start did not die at the print; logs:\n%s", logs)
				}
			} else {
				// It runs on; the logs say at once how to make new keys.
				waitUntil(t, 60*time.Second, 50*time.Millisecond, func() bool {
					a, _ := newKeyHints(t, logs.String())
					return a != ""
				}, func() string {
					return "a failed print of the keys named no command to make new ones; logs:\n" + logs.String()
				})
				if err := first.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				if err := <-done; err != nil {
					t.Fatalf("stop: %v; logs:\n%s", err, logs)
				}
			}

			// The next start prints no keys (they were stored) and names
			// the commands that make new ones.
			s := &instance{t: t, env: env}
			s.launch()
			t.Cleanup(s.stop)
			if s.APIKey != "" || s.stdout.String() != "" {
				t.Fatalf("a second start printed %q", s.stdout)
			}
			apiCmd, ingestCmd := newKeyHints(t, s.logs.String())
			if apiCmd == "" {
				t.Fatalf("the second start names no command to make new keys; logs:\n%s", s.logs)
			}
			api, ingest := runHint(t, env, apiCmd), runHint(t, env, ingestCmd)
			s.call("GET", "/api/v1/me", api, nil).want(t, 200, "")
			s.call("POST", "/api/v1/keywords", api, map[string]any{"phrase": "hinted", "platform": "x"}).want(t, 201, "")
			s.call("GET", "/phrases?platform=x", ingest, nil).want(t, 200, "")

			// Once a key is used, a start says no more.
			s.restart()
			if a, _ := newKeyHints(t, s.logs.String()); a != "" {
				t.Fatalf("a start after the keys were used still names %q; logs:\n%s", a, s.logs)
			}
		})
	}
}
