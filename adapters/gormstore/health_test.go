package gormstore_test

import (
	"path/filepath"
	"testing"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/testkit/storetest"
)

func runHealth(t *testing.T, url string) {
	db := open(t, url)
	storetest.RunHealth(t, stores(db), storetest.Health{
		Accounts: gormstore.NewAccountHealthStore(db), Notifications: gormstore.NewNotificationStore(db),
	})
}

func TestHealthSQLiteMemory(t *testing.T) { runHealth(t, "sqlite://:memory:") }

func TestHealthSQLiteFile(t *testing.T) {
	runHealth(t, "sqlite://"+filepath.Join(t.TempDir(), "earshot.db"))
}

func TestHealthPostgres(t *testing.T) { runHealth(t, PostgresURL(t)) }
