package gormstore

import (
	"context"
	"testing"

	"github.com/earshothq/earshot/testkit/pgtest"
)

// On Postgres the API's pages are read on a pool of their own whose
// connections plan the page statement once (a generic plan) and walk
// the owner's index rather than a bitmap; an operator's own
// plan_cache_mode gets that setting everywhere and no second pool. On
// SQLite the pages are read as everything else is.
func TestPagePool(t *testing.T) {
	ctx := context.Background()
	setting := func(t *testing.T, db *DB, name string) string {
		t.Helper()
		var v string
		if err := db.pageReads(ctx).Raw("SELECT current_setting(?)", name).Scan(&v).Error; err != nil {
			t.Fatal(err)
		}
		return v
	}
	t.Run("postgres", func(t *testing.T) {
		db := openMigrated(t, pgtest.URL(t))
		if got := setting(t, db, "plan_cache_mode"); got != "force_generic_plan" {
			t.Errorf("pages read with plan_cache_mode %q, want force_generic_plan", got)
		}
		if got := setting(t, db, "enable_bitmapscan"); got != "off" {
			t.Errorf("pages read with enable_bitmapscan %q, want off", got)
		}
		var other string
		if err := db.with(ctx).Raw("SELECT current_setting('plan_cache_mode')").Scan(&other).Error; err != nil || other != "force_custom_plan" {
			t.Errorf("other reads with plan_cache_mode %q (%v), want force_custom_plan", other, err)
		}
		p, _ := db.pageReads(ctx).DB()
		if n := p.Stats().MaxOpenConnections; n != pageConns {
			t.Errorf("the page pool holds up to %d connections, want %d", n, pageConns)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if p.Ping() == nil {
			t.Error("the page pool still answers after Close")
		}
	})
	t.Run("postgres with the operator's plan_cache_mode", func(t *testing.T) {
		db := openMigrated(t, pgtest.URL(t)+"&plan_cache_mode=auto")
		if got := setting(t, db, "plan_cache_mode"); got != "auto" {
			t.Errorf("pages read with plan_cache_mode %q, want the URL's auto", got)
		}
		if db.pageReads(ctx).Statement.ConnPool != db.with(ctx).Statement.ConnPool {
			t.Error("a second pool for pages beside the operator's setting")
		}
	})
	t.Run("sqlite", func(t *testing.T) {
		db := openMigrated(t, "sqlite://:memory:")
		if db.pageReads(ctx).Statement.ConnPool != db.with(ctx).Statement.ConnPool {
			t.Error("a second pool for pages on SQLite")
		}
	})
}
