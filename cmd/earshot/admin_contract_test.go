package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A flag value an admin command refuses (an unknown scope) stops it with
// status 2 before the database is opened: nothing is made or migrated.
func TestAdminRefusedFlagOpensNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, err := runEarshot(baseEnv(dir), "admin", "key", "create", "--owner", "o1", "--name", "ci", "--scopes", "read,admin")
	var re *runError
	if !errors.As(err, &re) || re.code != 2 || !strings.Contains(re.stderr, `unknown scope "admin"`) {
		t.Fatalf("key create --scopes read,admin: %v; want exit 2 naming the scope", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "earshot.db")); err == nil {
		t.Fatal("the database was made before the scope was refused")
	}
}

// session set prints nothing, stores the jar encrypted (the cookie's
// value is nowhere in the database's files) and is held to the plan's
// accounts per platform, as connecting one in the dashboard is.
func TestAdminSessionSet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := append(baseEnv(dir), "EARSHOT_LOG_LEVEL=error")
	out, err := runEarshot(env, "admin", "owner", "create", "--email", "jar@example.com")
	if err != nil {
		t.Fatal(err)
	}
	owner := strings.TrimSpace(out)
	const value = "cookie-value-that-must-not-be-stored-plain"
	jar := filepath.Join(t.TempDir(), "jar.json")
	// A browser extension's cookie export, the shape docs/helpers.md takes.
	if err := os.WriteFile(jar, []byte(`[{"name":"reddit_session","value":"`+value+`","domain":".reddit.com","path":"/","expirationDate":1999999999,"secure":true,"httpOnly":true}]`), 0o600); err != nil {
		t.Fatal(err)
	}

	_, err = runEarshot(append(env, "EARSHOT_PLAN_ACCOUNTS_PER_PLATFORM=0"), "admin", "session", "set", "--owner", owner, "--platform", "reddit", "--file", jar)
	var re *runError
	if !errors.As(err, &re) || re.code != 1 || !strings.Contains(re.stderr, "the plan allows 0 accounts per platform") {
		t.Fatalf("session set past the plan: %v; want the plan's refusal", err)
	}

	if out, err := runEarshot(env, "admin", "session", "set", "--owner", owner, "--platform", "reddit", "--file", jar); err != nil || out != "" {
		t.Fatalf("session set: %q, %v; want nothing printed", out, err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "earshot.db*"))
	if len(files) == 0 {
		t.Fatal("no database files")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte(value)) {
			t.Fatalf("%s holds the cookie's value in plain text", filepath.Base(f))
		}
	}
}
