package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// `earshot admin reddit status` lists each watched community once, with
// nothing read yet, and needs no --owner.
func TestAdminRedditStatus(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := []string{"EARSHOT_DATABASE_URL=sqlite://" + filepath.Join(dir, "e.db"), "EARSHOT_SECRET_KEY=" + strings.Repeat("k", 40),
		"EARSHOT_PLAN_PHRASES_PER_PLATFORM=5", "HOME=" + dir}
	owner, err := runEarshot(env, "admin", "owner", "create", "--email", "ops@example.com")
	if err != nil {
		t.Fatal(err)
	}
	owner = strings.TrimSpace(owner)
	for _, ph := range [][2]string{{"acme", "r/SaaS"}, {"widget", "saas"}, {"acme", "startups"}} {
		if _, err := runEarshot(env, "admin", "phrase", "add", "--owner", owner, "--platform", "reddit", "--phrase", ph[0], "--community", ph[1]); err != nil {
			t.Fatal(err)
		}
	}
	out, err := runEarshot(env, "admin", "reddit", "status")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "COMMUNITY") || !strings.Contains(lines[0], "ARCHIVE LAG") ||
		strings.Join(strings.Fields(lines[1]), " ") != "r/saas 2 - never - - -" ||
		strings.Join(strings.Fields(lines[2]), " ") != "r/startups 1 - never - - -" {
		t.Fatalf("reddit status:\n%s", out)
	}
}
