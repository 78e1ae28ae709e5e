package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --platform the admin commands refuse is a refused flag as an
// unknown scope is (docs/operating.md, The admin console): status 2,
// naming the platforms taken, before the database is opened, so a typo
// neither makes a database (nor a secret key) nor reads as "owner not
// found".
func TestAdminRefusedPlatformOpensNothing(t *testing.T) {
	t.Parallel()
	jar := filepath.Join(t.TempDir(), "jar.json")
	if err := os.WriteFile(jar, []byte(`[]`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"admin", "phrase", "add", "--owner", "o1", "--platform", "myspace", "--phrase", "acme"},
		{"admin", "session", "set", "--owner", "o1", "--platform", "myspace", "--file", jar},
	} {
		dir := t.TempDir()
		_, err := runEarshot(baseEnv(dir), args...)
		var re *runError
		if !errors.As(err, &re) || re.code != 2 || !strings.Contains(re.stderr, "reddit, x, facebook") {
			t.Errorf("%v: %v; want exit 2 naming the platforms", args[1:3], err)
		}
		if _, err := os.Stat(filepath.Join(dir, "earshot.db")); err == nil {
			t.Errorf("%v: the database was made before the platform was refused", args[1:3])
		}
	}
}
