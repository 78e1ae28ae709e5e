package gormstore

import (
	"context"
	"testing"

	"github.com/earshothq/earshot/testkit/pgtest"
)

// The pool of index walks, where the scorer's claim runs, has bitmap
// scans off, so Postgres walks matches_unscored with an index scan,
// which marks the entries of scored matches dead for the next claim;
// the main pool keeps bitmap scans for everything else.
func TestWalksPoolHasNoBitmapScans(t *testing.T) {
	db, err := Open(pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	for pool, want := range map[string]string{"pages": "off", "main": "on"} {
		p := db.sql
		if pool == "pages" {
			p = db.pages
		}
		var got string
		if err := p.QueryRow("SHOW enable_bitmapscan").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s pool: enable_bitmapscan %s, want %s", pool, got, want)
		}
	}
}
