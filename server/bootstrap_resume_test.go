package server

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
)

// failWrites opens the SQLite database at url, migrated, and makes the
// inserts into table that match when fail, by a trigger named after
// the table; undo drops the trigger.
func failWrites(t *testing.T, url, table, when string) (undo func()) {
	t.Helper()
	ctx := context.Background()
	db, err := gormstore.Open(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	exec := func(q string) {
		t.Helper()
		if _, err := db.SQL().ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	exec("CREATE TRIGGER fail_" + table + " BEFORE INSERT ON " + table + " WHEN " + when +
		" BEGIN SELECT RAISE(ABORT, 'write lost'); END")
	return func() { exec("DROP TRIGGER fail_" + table) }
}

// startOnce starts `earshot serve` on url, stops it, and returns what it
// printed, what it logged and how its start ended.
func startOnce(t *testing.T, url string) (out, logs string, err error) {
	t.Helper()
	cfg := testConfig(t, map[string]string{"EARSHOT_DATABASE_URL": url, "EARSHOT_ADDR": "127.0.0.1:0",
		"EARSHOT_SECRET_KEY": strings.Repeat("k", 32)})
	var o, l bytes.Buffer
	a := Serve(cfg, slog.New(slog.NewTextHandler(&l, nil)), &o)
	if err = a.Start(context.Background()); err == nil {
		if err := a.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	return o.String(), l.String(), err
}

var bootstrapAPIKey = regexp.MustCompile(`API key \(every scope\): (svc_api_\S+)`)

// A first start that fails after it stored the owner prints nothing and
// fails; the next start prints the keys. A sign-in link that cannot be
// made does not keep the keys from being printed, once: the bootstrap
// is done by then, and the console makes the link.
func TestFirstStartPrintsTheKeysOnce(t *testing.T) {
	for _, c := range []struct {
		name, table, when string
		firstFails        bool
	}{
		{"the ingest key's write fails", "api_keys", "NEW.kind = '" + string(core.IngestKey) + "'", true},
		{"the sign-in link's write fails", "login_links", "1", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := "sqlite://" + filepath.Join(t.TempDir(), "earshot.db")
			undo := failWrites(t, url, c.table, c.when)
			out, logs, err := startOnce(t, url)
			if (err != nil) != c.firstFails {
				t.Fatalf("first start: %v; printed %q", err, out)
			}
			if c.firstFails {
				if out != "" {
					t.Fatalf("a failed first start printed %q", out)
				}
				undo()
				out, logs, err = startOnce(t, url)
				if err != nil {
					t.Fatalf("second start: %v", err)
				}
			}
			if !bootstrapAPIKey.MatchString(out) || !strings.Contains(out, "ingest key:") || !strings.Contains(out, "curl -H") {
				t.Fatalf("no keys printed: %q\nlogs:\n%s", out, logs)
			}
			if !c.firstFails {
				owner := regexp.MustCompile(`created owner (\S+)`).FindStringSubmatch(out)
				if owner == nil || !strings.Contains(out, "earshot admin owner login-link --owner "+owner[1]) ||
					!strings.Contains(logs, "write lost") {
					t.Fatalf("the missing link is not explained: %q\nlogs:\n%s", out, logs)
				}
				undo()
			}
			if out, _, err := startOnce(t, url); err != nil || out != "" {
				t.Fatalf("a later start printed %q, %v; the keys are printed once", out, err)
			}
		})
	}
}
