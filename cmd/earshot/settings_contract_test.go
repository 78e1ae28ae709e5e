package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A value a setting does not accept stops every command with exit
// status 2 and a message naming the setting, before anything starts:
// no database file is made, nothing is migrated, nothing listens. These
// are values that used to pass the settings and fail only at start, with
// status 1 and the bus's words.
func TestRefusedSettingStartsNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ setting, want string }{
		{"EARSHOT_BUS_URL=amqp://guest:hunter2@127.0.0.1:bad/", "EARSHOT_BUS_URL (value not shown: it can hold a secret): accepts memory:// or amqp://"},
		{"EARSHOT_BUS_URL=amqp://guest:hunter2@127.0.0.1/?heartbeat=soon", "EARSHOT_BUS_URL (value not shown: it can hold a secret): accepts memory:// or amqp://"},
		{"EARSHOT_BUS_PREFIX=" + strings.Repeat("p", 201), "EARSHOT_BUS_PREFIX=ppp"},
	} {
		for _, cmd := range [][]string{{"serve"}, {"migrate"}, {"admin", "owner", "list"}} {
			dir := t.TempDir()
			_, err := runEarshot(append(baseEnv(dir), tc.setting), cmd...)
			var re *runError
			if !errors.As(err, &re) || re.code != 2 || !strings.Contains(re.stderr, tc.want) || strings.Contains(re.stderr, "hunter2") {
				t.Errorf("%.60s %v: %v; want exit 2 with %q", tc.setting, cmd, err, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "earshot.db")); err == nil {
				t.Errorf("%.60s %v: the database was made before the setting was refused", tc.setting, cmd)
			}
		}
	}
}

// serve takes every setting as a flag of the variable's name in kebab
// case, and a flag wins over the variable: here the bootstrap, the site
// address links are made under, and the development switch for private
// webhook targets, which is said as a warning at start.
func TestServeSettingsAsFlags(t *testing.T) {
	t.Parallel()
	s := &instance{t: t, env: append(baseEnv(t.TempDir()), "EARSHOT_BOOTSTRAP=true", "EARSHOT_SITE_URL=https://env.example.com"),
		args: []string{"--bootstrap", "false", "--site-url", "https://listen.example.com", "--webhook-allow-private=true"}}
	s.launch()
	t.Cleanup(s.stop)
	logs := s.logs.String()
	if s.stdout.String() != "" || !strings.Contains(logs, `"msg":"bootstrap skipped","reason":"EARSHOT_BOOTSTRAP=false"`) {
		t.Errorf("--bootstrap false under EARSHOT_BOOTSTRAP=true: stdout %q, logs:\n%s", s.stdout, logs)
	}
	if !strings.Contains(logs, `"site":"https://listen.example.com"`) {
		t.Errorf("--site-url over EARSHOT_SITE_URL: logs:\n%s", logs)
	}
	if !strings.Contains(logs, `"level":"WARN","msg":"EARSHOT_WEBHOOK_ALLOW_PRIVATE is on`) {
		t.Errorf("--webhook-allow-private=true logged no warning:\n%s", logs)
	}
}

// Left at its default, EARSHOT_WEBHOOK_ALLOW_PRIVATE is off and says
// nothing, and the first run generates EARSHOT_SECRET_KEY into the data
// directory (beside the SQLite file), readable by its owner alone, with
// a warning; later runs keep that key, with a warning too, so what the
// console sealed with it (a cookie jar) serve opens.
func TestGeneratedSecretKeyBesideTheDatabase(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	env := append(baseEnv(t.TempDir()), "EARSHOT_DATABASE_URL=sqlite://"+filepath.Join(data, "earshot.db"), "EARSHOT_BOOTSTRAP=false")
	keyFile := filepath.Join(data, "earshot.key")
	cmd := exec.Command(binary, "admin", "owner", "create", "--email", "keys@example.com")
	cmd.Env = env
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("owner create: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), `"level":"WARN","msg":"EARSHOT_SECRET_KEY is unset: generated a key`) ||
		!strings.Contains(stderr.String(), `"file":"`+keyFile+`"`) {
		t.Fatalf("first run's logs:\n%s", stderr.String())
	}
	info, err := os.Stat(keyFile)
	if err != nil || info.Mode().Perm() != 0o600 || info.Size() < 32 {
		t.Fatalf("generated key file: %v, %v", info, err)
	}
	generated, _ := os.ReadFile(keyFile)
	owner := strings.TrimSpace(stdout.String())
	ingest, err := runEarshot(env, "admin", "ingest-key", "create", "--owner", owner)
	if err != nil {
		t.Fatal(err)
	}
	jar := filepath.Join(t.TempDir(), "jar.json")
	// A browser extension's cookie export, the shape docs/helpers.md takes.
	if err := os.WriteFile(jar, []byte(`[{"name":"reddit_session","value":"sealed-by-the-console","domain":".reddit.com","path":"/","expirationDate":1999999999,"secure":true,"httpOnly":true}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := runEarshot(env, "admin", "session", "set", "--owner", owner, "--platform", "reddit", "--file", jar); err != nil {
		t.Fatal(err)
	}

	s := &instance{t: t, env: env}
	s.launch()
	t.Cleanup(s.stop)
	logs := s.logs.String()
	if !strings.Contains(logs, `"level":"WARN","msg":"EARSHOT_SECRET_KEY is unset: using the key kept in the data directory"`) ||
		strings.Contains(logs, "generated a key") {
		t.Errorf("a later run's logs:\n%s", logs)
	}
	if strings.Contains(logs, "EARSHOT_WEBHOOK_ALLOW_PRIVATE") {
		t.Errorf("EARSHOT_WEBHOOK_ALLOW_PRIVATE is off by default, yet:\n%s", logs)
	}
	if r := s.call("GET", "/session?platform=reddit", strings.TrimSpace(ingest), nil).want(t, 200, ""); !strings.Contains(string(r.Body), "sealed-by-the-console") {
		t.Errorf("GET /session: %s", r.Body)
	}
	if now, _ := os.ReadFile(keyFile); string(now) != string(generated) {
		t.Error("the kept key changed")
	}
}
