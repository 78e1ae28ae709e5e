package main

import (
	"strings"
	"testing"
	"time"
)

// openBound is how long opening the database waits for Postgres's first
// answer after connecting: gormstore's connect bound, 30 s.
const openBound = 30 * time.Second

// A Postgres that completes the start-up and then stops answering (hung,
// or a firewall that drops the session part way) ends migrate, and
// serve's start, within the open's bound, with status 1 and a last line
// saying so: the open's first statement waited for good before.
func TestMigrateAndServeGiveUpOnAPostgresThatStopsAnswering(t *testing.T) {
	t.Parallel()
	afterStartUp := func(typ byte, _ []byte) bool { return typ == 'Q' || typ == 'P' }
	stalledRuns(t, map[string]stalledRun{
		"migrate": {args: []string{"migrate"}, stall: afterStartUp},
		"serve":   {args: []string{"serve"}, stall: afterStartUp},
	}, openBound, openBound+45*time.Second, func(t *testing.T, r stalledRun, stderr string) {
		// serve logs before it fails; the failure is the last line.
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		last := lines[len(lines)-1]
		want := "no answer within " + openBound.String()
		if !strings.HasPrefix(last, "earshot: open database: ") || !strings.Contains(last, want) {
			t.Errorf("last line of stderr %q, want earshot: open database: ... %s", last, want)
		}
		if r.args[0] == "migrate" && len(lines) != 1 {
			t.Errorf("stderr %q, want one line", stderr)
		}
	})
}
