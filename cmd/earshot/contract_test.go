package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runEarshotStderr runs the binary and returns its stderr, failing the
// test when it exits with an error.
func runEarshotStderr(t *testing.T, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("earshot %v: %v\n%s", args, err, stderr.String())
	}
	return stderr.String()
}

// EARSHOT_LOG_FORMAT and EARSHOT_LOG_LEVEL hold for the admin console
// too: its warning about the generated secret key is a log line in the
// format and at the level the operator chose, so a log collector that
// reads JSON from every earshot process gets JSON.
func TestAdminLogsInTheChosenFormat(t *testing.T) {
	t.Parallel()
	env := baseEnv(t.TempDir()) // EARSHOT_LOG_FORMAT=json
	logs := runEarshotStderr(t, env, "admin", "owner", "list")
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	if logs == "" {
		t.Fatal("no warning about the generated secret key")
	}
	for _, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil || v["level"] != "WARN" || !strings.Contains(v["msg"].(string), "EARSHOT_SECRET_KEY") {
			t.Errorf("with EARSHOT_LOG_FORMAT=json, log line %q", l)
		}
	}

	text := runEarshotStderr(t, append(env, "EARSHOT_LOG_FORMAT=text"), "admin", "owner", "list")
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		if !strings.HasPrefix(l, "time=") || !strings.Contains(l, "level=WARN") {
			t.Errorf("with EARSHOT_LOG_FORMAT=text, log line %q", l)
		}
	}

	if quiet := runEarshotStderr(t, append(env, "EARSHOT_LOG_LEVEL=error"), "admin", "owner", "list"); quiet != "" {
		t.Errorf("with EARSHOT_LOG_LEVEL=error the console logged:\n%s", quiet)
	}
}

// `key revoke` takes an id from `key list`, which lists API keys only:
// an ingest key's id is not found there (`ingest-key revoke` is for
// those), so a mistyped id cannot cut off an owner's helper.
func TestKeyRevokeLeavesIngestKeys(t *testing.T) {
	t.Parallel()
	env := append(baseEnv(t.TempDir()), "EARSHOT_LOG_LEVEL=error")
	admin := func(args ...string) string {
		t.Helper()
		out, err := runEarshot(env, append([]string{"admin"}, args...)...)
		if err != nil {
			t.Fatalf("earshot admin %v: %v", args, err)
		}
		return strings.TrimSpace(out)
	}
	owner := admin("owner", "create", "--email", "keys@example.com")
	admin("ingest-key", "create", "--owner", owner)
	row := strings.Fields(strings.Split(admin("ingest-key", "list", "--owner", owner), "\n")[1])
	if _, err := runEarshot(env, "admin", "key", "revoke", "--owner", owner, "--id", row[0]); err == nil {
		t.Error("key revoke revoked an ingest key")
	}
	if after := strings.Fields(strings.Split(admin("ingest-key", "list", "--owner", owner), "\n")[1]); after[3] != "live" {
		t.Errorf("the ingest key after key revoke: %v", after)
	}
}

// A mistyped owner id is "owner not found" for session set, as for
// phrase add, not the store's "account not found" for an account the
// command was about to create.
func TestSessionSetUnknownOwner(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := append(baseEnv(dir), "EARSHOT_LOG_LEVEL=error")
	jar := filepath.Join(dir, "jar.json")
	// A cookie export's shape, as the dashboard and docs/helpers.md take it.
	if err := os.WriteFile(jar, []byte(`[{"name":"reddit_session","value":"abc","domain":".reddit.com","path":"/","expirationDate":1999999999,"secure":true,"httpOnly":true}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := runEarshot(env, "admin", "session", "set", "--owner", "no-such-owner", "--platform", "reddit", "--file", jar)
	var re *runError
	if !errors.As(err, &re) || re.code != 1 || !strings.Contains(re.stderr, "owner not found") {
		t.Fatalf("session set for an unknown owner: %v", err)
	}
}
