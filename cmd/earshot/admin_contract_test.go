package main

import (
	"bytes"
	"database/sql"
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

// A binary refuses a database a newer build migrated (docs/operating.md,
// Upgrading): migrate, serve and the console stop with status 1 and say
// so, and change nothing, rather than run on a schema they do not know.
func TestNewerDatabaseRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := append(baseEnv(dir), "EARSHOT_LOG_LEVEL=error")
	if _, err := runEarshot(env, "migrate"); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite3", filepath.Join(dir, "earshot.db"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec("INSERT INTO schema_migrations (version, name, applied_at) VALUES (100000, 'from a newer build', 0)")
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"migrate"}, {"serve"}, {"admin", "owner", "list"}} {
		out, err := runEarshot(env, cmd...)
		var re *runError
		if !errors.As(err, &re) || re.code != 1 || !strings.Contains(re.stderr, "database schema is version 100000, newer than this build") || out != "" {
			t.Errorf("%v on a newer database: %q, %v", cmd, out, err)
		}
	}
}
