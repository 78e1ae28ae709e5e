package gormstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/testkit/dbtest"
	"github.com/earshothq/earshot/testkit/limittest"
	"github.com/earshothq/earshot/testkit/pgtest"
	"github.com/earshothq/earshot/testkit/storetest"
)

func stores(db *gormstore.DB) storetest.Stores {
	return storetest.Stores{
		Owners:     gormstore.NewOwnerStore(db),
		Keys:       gormstore.NewKeyStore(db),
		Phrases:    gormstore.NewPhraseStore(db),
		Listening:  gormstore.NewPhraseStore(db),
		Matches:    gormstore.NewMatchStore(db),
		Accounts:   gormstore.NewAccountStore(db),
		Webhooks:   gormstore.NewWebhookStore(db),
		Deliveries: gormstore.NewWebhookStore(db),
		Backlog:    gormstore.NewMatchStore(db),
		Trends:     gormstore.NewTrendStore(db),
		// The fill runs on a database of its own, of the same dialect.
		RefillTrends: func(t *testing.T) (storetest.Stores, func() error) {
			url := "sqlite://:memory:"
			if db.Postgres() {
				url = PostgresURL(t)
			}
			fresh := open(t, url)
			return stores(fresh), func() error { return gormstore.RefillTrends(fresh) }
		},
		Channels: gormstore.NewChannelStore(db),

		Recent:         gormstore.NewRecentStore(db),
		FilterArchives: gormstore.NewFilterArchiveStore(db),
	}
}

func open(t *testing.T, url string) *gormstore.DB {
	t.Helper()
	return dbtest.Open(t, url)
}

func dashboard(db *gormstore.DB) storetest.Dashboard {
	return storetest.Dashboard{Sessions: gormstore.NewSessionStore(db), Triage: gormstore.NewTriageStore(db)}
}

func periodic(db *gormstore.DB) storetest.Periodic {
	return storetest.Periodic{Leases: gormstore.NewLeaseStore(db), Alerts: gormstore.NewAlertStore(db)}
}

// run runs every suite of the contract on the database at url.
func run(t *testing.T, url string) {
	storetest.Run(t, func(t *testing.T) storetest.Stores { return stores(open(t, url)) })
	db := open(t, url)
	storetest.RunPeriodic(t, stores(db), periodic(db))
	storetest.RunDashboard(t, stores(db), dashboard(db))
}

func TestSQLiteMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Stores { return stores(open(t, "sqlite://:memory:")) })
	db := open(t, "sqlite://:memory:")
	storetest.RunPeriodic(t, stores(db), periodic(db))
	storetest.RunDashboard(t, stores(db), dashboard(db))
}

func TestSQLiteFile(t *testing.T) { run(t, "sqlite://"+filepath.Join(t.TempDir(), "earshot.db")) }

func TestPostgres(t *testing.T) { run(t, PostgresURL(t)) }

// PostgresURL returns a fresh schema's URL or skips the test.
func PostgresURL(t *testing.T) string { return pgtest.URL(t) }

func TestMigrateTwiceAndConcurrently(t *testing.T) {
	urls := map[string]string{"sqlite": "sqlite://" + filepath.Join(t.TempDir(), "m.db")}
	if os.Getenv("EARSHOT_TEST_POSTGRES_URL") != "" {
		urls["postgres"] = PostgresURL(t)
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make([]error, 4)
			for i := range errs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					db, err := gormstore.Open(url) // separate pools, as two processes would have
					if err != nil {
						errs[i] = err
						return
					}
					defer db.Close()
					errs[i] = db.Migrate(context.Background())
				}()
			}
			wg.Wait()
			for _, err := range errs {
				if err != nil {
					t.Fatalf("concurrent migrate: %v", err)
				}
			}
			db := open(t, url) // and once more
			v, err := db.Version(context.Background())
			if err != nil || v != gormstore.Latest() {
				t.Fatalf("Version = %d, %v; want %d", v, err, gormstore.Latest())
			}
			var applied, steps int
			if err := db.SQL().QueryRow("SELECT COUNT(*), COUNT(DISTINCT version) FROM schema_migrations").Scan(&applied, &steps); err != nil {
				t.Fatal(err)
			}
			if applied != gormstore.Latest() || steps != applied {
				t.Fatalf("%d steps recorded, %d distinct; want each of %d once", applied, steps, gormstore.Latest())
			}
		})
	}
}

func TestOpenRefusesUnknownScheme(t *testing.T) {
	for _, url := range []string{"mysql://x", "sqlite://", "", "postgres//x"} {
		if _, err := gormstore.Open(url); err == nil {
			t.Errorf("Open(%q) succeeded", url)
		}
	}
}

func TestRateLimiter(t *testing.T) {
	urls := map[string]string{"sqlite": "sqlite://" + filepath.Join(t.TempDir(), "rl.db")}
	if os.Getenv("EARSHOT_TEST_POSTGRES_URL") != "" {
		urls["postgres"] = PostgresURL(t)
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			db := open(t, url)
			limittest.Run(t, gormstore.NewRateLimiter(db))
			if err := gormstore.NewRateLimiter(db).SweepRateWindows(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// Prepared statements on Postgres are planned for their arguments each
// time, so a plan costed while a table was empty is never kept; an
// operator's own plan_cache_mode in the URL wins.
func TestPostgresCustomPlans(t *testing.T) {
	url := PostgresURL(t)
	for _, c := range []struct{ url, want string }{
		{url, "force_custom_plan"},
		{url + "&plan_cache_mode=auto", "auto"},
	} {
		db, err := gormstore.Open(c.url)
		if err != nil {
			t.Fatal(err)
		}
		var mode string
		if err := db.SQL().QueryRow("SHOW plan_cache_mode").Scan(&mode); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if mode != c.want {
			t.Errorf("Open(%q): plan_cache_mode %q, want %q", c.url, mode, c.want)
		}
	}
}

// VacuumQueues vacuums the delivery queue on Postgres, two replicas at
// once included, and does nothing on SQLite.
func TestVacuumQueues(t *testing.T) {
	urls := map[string]string{"sqlite": "sqlite://" + filepath.Join(t.TempDir(), "v.db")}
	if os.Getenv("EARSHOT_TEST_POSTGRES_URL") != "" {
		urls["postgres"] = PostgresURL(t)
	}
	for name, url := range urls {
		t.Run(name, func(t *testing.T) {
			db := open(t, url)
			var wg sync.WaitGroup
			errs := make(chan error, 2)
			for range 2 {
				wg.Add(1)
				go func() { defer wg.Done(); errs <- db.VacuumQueues(context.Background()) }()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatalf("VacuumQueues: %v", err)
				}
			}
		})
	}
}

// Processes starting together on a new SQLite file each open it; the
// one that creates it switches it into WAL mode, and SQLite answered the
// others "database is locked" at once, without its busy handler.
func TestOpenANewFileTogether(t *testing.T) {
	dir := t.TempDir()
	for round := range 20 {
		url := "sqlite://" + filepath.Join(dir, fmt.Sprintf("r%d.db", round))
		var wg sync.WaitGroup
		errs := make([]error, 8)
		for i := range errs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				db, err := gormstore.Open(url) // a pool each, as each process has
				if err == nil {
					err = db.Close()
				}
				errs[i] = err
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
	}
}
