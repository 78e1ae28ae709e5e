package main

import (
	"errors"
	"os"
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
