package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Ingest keys open an owner's cookie jars and proxy password, so the
// console lists them (never their secrets) and revokes them, and a
// revoked key fails on its next request.
func TestAdminIngestKeys(t *testing.T) {
	t.Parallel()
	s := start(t, "EARSHOT_BOOTSTRAP=false", "EARSHOT_RATE_LIMIT_PER_MINUTE=10000")
	a := newTenant(t, s, "keys@example.com")
	second := s.mustAdmin("ingest-key", "create", "--owner", a.id)
	if !regexp.MustCompile(`^svc_ingest_[A-Za-z0-9_-]{43}$`).MatchString(second) {
		t.Fatalf("ingest-key create printed %q, want only the key", second)
	}
	s.call("GET", "/phrases?platform=x", a.ingest, nil).want(t, 200, "")

	list := s.mustAdmin("ingest-key", "list", "--owner", a.id)
	lines := strings.Split(list, "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[0], "CREATED") ||
		!strings.Contains(lines[0], "LAST USED") {
		t.Fatalf("ingest-key list:\n%s", list)
	}
	for _, secret := range []string{a.ingest, second} {
		if body := strings.TrimPrefix(secret, "svc_ingest_"); strings.Contains(list, body[:12]) || strings.Contains(list, "svc_") {
			t.Fatalf("ingest-key list shows a secret:\n%s", list)
		}
	}
	// The used key has a last use, the other none; both are live.
	used, unused := strings.Fields(lines[1]), strings.Fields(lines[2])
	if !uuidRe.MatchString(used[0]) || !isTime(used[1]) || !isTime(used[2]) || used[3] != "live" {
		t.Fatalf("used key's row %q", lines[1])
	}
	if !isTime(unused[1]) || unused[2] != "never" || unused[3] != "live" {
		t.Fatalf("unused key's row %q", lines[2])
	}
	if out := s.mustAdmin("key", "list", "--owner", a.id); strings.Contains(out, used[0]) {
		t.Fatalf("key list shows an ingest key:\n%s", out)
	}

	// An API key's id is not an ingest key's: nothing is revoked.
	apiID := strings.Fields(strings.Split(s.mustAdmin("key", "list", "--owner", a.id), "\n")[1])[0]
	if _, err := s.admin("ingest-key", "revoke", "--owner", a.id, "--id", apiID); err == nil {
		t.Fatal("ingest-key revoke revoked an API key")
	}
	s.call("GET", "/api/v1/me", a.full, nil).want(t, 200, "")
	other := newTenant(t, s, "other@example.com")
	if _, err := s.admin("ingest-key", "revoke", "--owner", other.id, "--id", used[0]); err == nil {
		t.Fatal("another owner revoked the key")
	}
	s.call("GET", "/phrases?platform=x", a.ingest, nil).want(t, 200, "")

	if out := s.mustAdmin("ingest-key", "revoke", "--owner", a.id, "--id", used[0]); out != "" {
		t.Fatalf("ingest-key revoke printed %q", out)
	}
	s.call("GET", "/phrases?platform=x", a.ingest, nil).want(t, 401, "unauthorized")
	s.call("GET", "/phrases?platform=x", second, nil).want(t, 200, "")
	after := strings.Split(s.mustAdmin("ingest-key", "list", "--owner", a.id), "\n")
	if len(after) != 3 || !strings.Contains(after[1], "revoked") || !strings.Contains(after[2], "live") {
		t.Fatalf("ingest-key list after revoke:\n%s", strings.Join(after, "\n"))
	}
	if _, err := s.admin("ingest-key", "revoke", "--owner", a.id, "--id", "nope"); err == nil {
		t.Fatal("revoking an unknown ingest key succeeded")
	}
	if _, err := s.admin("ingest-key", "list", "--owner", "no-such-owner"); err == nil {
		t.Fatal("listing an unknown owner's ingest keys succeeded")
	}
}

func isTime(s string) bool {
	_, err := time.Parse(time.RFC3339, s)
	return err == nil
}

// session set reads at most one byte past the jar limit: a file that is
// too large is refused by name, and an endless one like /dev/zero too,
// instead of being read into memory whole.
func TestAdminSessionFileTooLarge(t *testing.T) {
	t.Parallel()
	env := baseEnv(t.TempDir())
	big := filepath.Join(t.TempDir(), "big.json")
	if err := os.WriteFile(big, []byte(`{"c":"`+strings.Repeat("a", 256<<10)+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{big, "/dev/zero"} {
		// Only a guard against a hang: the answer comes at once.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, binary, "admin", "session", "set", "--owner", "o1", "--platform", "facebook", "--file", file)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		timedOut := ctx.Err() != nil
		cancel()
		if timedOut {
			t.Fatalf("session set --file %s did not finish", file)
		}
		if err == nil || !strings.Contains(string(out), "too large") || !strings.Contains(string(out), "262144 bytes") {
			t.Fatalf("session set --file %s: %v: %s", file, err, out)
		}
	}
}

// A mistyped owner id on the phrase commands is named as one, as on the
// key commands: not "phrase not found", nor an empty list.
func TestAdminPhraseUnknownOwner(t *testing.T) {
	t.Parallel()
	env := baseEnv(t.TempDir())
	var re *runError
	_, err := runEarshot(env, "admin", "phrase", "add", "--owner", "no-such-owner", "--platform", "x", "--phrase", "acme")
	if !errors.As(err, &re) || !strings.Contains(re.stderr, "owner not found") {
		t.Errorf("phrase add for an unknown owner: %v; want owner not found", err)
	}
	out, err := runEarshot(env, "admin", "phrase", "list", "--owner", "no-such-owner")
	if !errors.As(err, &re) || !strings.Contains(re.stderr, "owner not found") {
		t.Errorf("phrase list for an unknown owner: %q, %v; want owner not found", out, err)
	}
}
