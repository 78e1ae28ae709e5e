package gormstore_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/earshothq/earshot/testkit/pgtest"
)

// VacuumMatches vacuums matches on Postgres once the scorer's updates
// left more dead versions than autovacuum's bounds allow, and not again
// until they do; on SQLite it does nothing.
func TestVacuumMatches(t *testing.T) {
	ctx := context.Background()
	t.Run("sqlite", func(t *testing.T) {
		db := open(t, "sqlite://"+filepath.Join(t.TempDir(), "v.db"))
		if did, err := db.VacuumMatches(ctx); did || err != nil {
			t.Fatalf("VacuumMatches on SQLite: %v, %v; want false, nil", did, err)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		db := open(t, pgtest.URL(t))
		sql := db.SQL()
		// Migrations 27 and 28 leave room on each page for the scorer's
		// lease and for a delivery claim's.
		for _, table := range []string{"matches", "webhook_deliveries"} {
			var opts string
			if err := sql.QueryRow(`SELECT COALESCE(array_to_string(reloptions, ','), '') FROM pg_class WHERE oid = $1::regclass`, table).Scan(&opts); err != nil {
				t.Fatal(err)
			}
			if opts != "fillfactor=70" {
				t.Fatalf("%s has options %q, want fillfactor=70", table, opts)
			}
		}
		for _, q := range []string{
			`INSERT INTO owners (id, email, created_at) VALUES ('o1', 'a@example.com', 0)`,
			`INSERT INTO phrases (id, owner_id, phrase, fold, platform, status, last_checked_at, last_source, created_at)
				VALUES ('p1', 'o1', 'acme', 'acme', 'x', 'active', 0, '', 0)`,
			`INSERT INTO matches (id, owner_id, phrase_id, phrase, platform, created_us, external_id, body)
				SELECT 'm' || i, 'o1', 'p1', 'acme', 'x', i, 'p' || i, 'anyone tried acme?' FROM generate_series(1, 2000) i`,
		} {
			if _, err := sql.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		// counts are the table's statistics: vacuums done, dead versions.
		counts := func() (vacuums, dead int64) {
			t.Helper()
			if err := sql.QueryRow(`SELECT vacuum_count, n_dead_tup FROM pg_stat_user_tables WHERE relid = 'matches'::regclass`).Scan(&vacuums, &dead); err != nil {
				t.Fatal(err)
			}
			return vacuums, dead
		}
		// Statistics reach the shared counts within a second of a commit.
		await := func(what string, ok func() bool) {
			t.Helper()
			for deadline := time.Now().Add(30 * time.Second); !ok(); {
				if time.Now().After(deadline) {
					t.Fatalf("still not %s after 30 s", what)
				}
				<-time.After(50 * time.Millisecond)
			}
		}
		// The 2,000 new rows are past the insert bound.
		await("counted as inserted", func() bool {
			var n int64
			if err := sql.QueryRow(`SELECT n_ins_since_vacuum FROM pg_stat_user_tables WHERE relid = 'matches'::regclass`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n >= 2000
		})
		if did, err := db.VacuumMatches(ctx); !did || err != nil {
			t.Fatalf("VacuumMatches after 2,000 inserts: %v, %v; want true, nil", did, err)
		}
		await("vacuumed once", func() bool { v, _ := counts(); return v == 1 })
		if did, err := db.VacuumMatches(ctx); did || err != nil {
			t.Fatalf("VacuumMatches right after a vacuum: %v, %v; want false, nil", did, err)
		}
		// Scoring every match leaves a dead version of each.
		if _, err := sql.Exec(`UPDATE matches SET score = 80, intent = 'alternative', reason = 'asks', scored_at = 1`); err != nil {
			t.Fatal(err)
		}
		await("counted as dead", func() bool { _, d := counts(); return d >= 2000 })
		if did, err := db.VacuumMatches(ctx); !did || err != nil {
			t.Fatalf("VacuumMatches after 2,000 updates: %v, %v; want true, nil", did, err)
		}
		// What it removed depends on other sessions' snapshots: the
		// database is shared with other tests.
		await("vacuumed twice", func() bool { v, _ := counts(); return v == 2 })
	})
}
