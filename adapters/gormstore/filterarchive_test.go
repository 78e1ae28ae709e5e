package gormstore

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// holdRows locks the rows query selects, with the lock it names, in a
// transaction of its own on Postgres until release; it returns the
// transaction's backend.
func holdRows(t *testing.T, pool *sql.DB, query string, args ...any) (pid int, release func()) {
	t.Helper()
	tx, err := pool.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.QueryRow("SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	rows.Close()
	return pid, func() { tx.Commit() }
}

// waitBlocked waits until n backends wait for a lock behind pid, directly
// or behind one that does, or until one of the calls under test ends.
func waitBlocked(t *testing.T, pool *sql.DB, pid, n int, ended <-chan error) {
	t.Helper()
	for {
		var blocked int
		if err := pool.QueryRow(`WITH b AS (SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)))
			SELECT COUNT(*) FROM pg_stat_activity WHERE pid IN (SELECT pid FROM b) OR pg_blocking_pids(pid) && ARRAY(SELECT pid FROM b)`,
			pid).Scan(&blocked); err != nil {
			t.Fatal(err)
		}
		if blocked >= n {
			return
		}
		select {
		case err := <-ended:
			t.Fatalf("a call ended (%v) while the rows it needs were locked", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Two applications of a phrase's filters at once, from two replicas on
// Postgres, leave the phrase one set, as one after the other does: the
// set each makes replaces the one it had.
func TestArchiveSetsAtOnceLeaveOne(t *testing.T) {
	ctx := context.Background()
	db := openMigrated(t, pgtest.URL(t))
	o, p, ms := trendFixture(t, db, 5)
	s := NewFilterArchiveStore(db)
	// A set that archives nothing is not made, so the first holds one.
	first, err := s.ArchiveSet(ctx, o.ID, p.ID, []string{ms[4].ID}, time.Now())
	if err != nil || first.Matches != 1 {
		t.Fatalf("first set = %+v, %v", first, err)
	}
	// Both applications wait at the set they replace, then go on together.
	pid, release := holdRows(t, db.SQL(), "SELECT id FROM filter_archives WHERE id = $1 FOR UPDATE", first.ID)
	ended := make(chan error, 2)
	for i := range 2 {
		ids := []string{ms[2*i].ID, ms[2*i+1].ID}
		go func() {
			_, err := s.ArchiveSet(ctx, o.ID, p.ID, ids, time.Now())
			ended <- err
		}()
	}
	waitBlocked(t, db.SQL(), pid, 2, ended)
	release()
	for range 2 {
		if err := <-ended; err != nil {
			t.Fatal(err)
		}
	}
	var sets int64
	if err := db.with(ctx).Model(&archiveSetRow{}).Where("phrase_id = ?", p.ID).Count(&sets).Error; err != nil {
		t.Fatal(err)
	}
	if sets != 1 {
		t.Fatalf("the phrase has %d sets, want the last one made", sets)
	}
}

// Of two restores of one set at once, from two replicas on Postgres, one
// restores it and the other finds it restored already: KindNotFound, as
// one after the other does.
func TestRestoresAtOnceRestoreOnce(t *testing.T) {
	ctx := context.Background()
	db := openMigrated(t, pgtest.URL(t))
	o, p, ms := trendFixture(t, db, 2)
	s := NewFilterArchiveStore(db)
	set, err := s.ArchiveSet(ctx, o.ID, p.ID, []string{ms[0].ID, ms[1].ID}, time.Now())
	if err != nil || set.Matches != 2 {
		t.Fatalf("ArchiveSet = %+v, %v", set, err)
	}
	// Both restores wait at the flags they clear, then go on together.
	pid, release := holdRows(t, db.SQL(), "SELECT match_id FROM match_triage WHERE owner_id = $1 FOR UPDATE", o.ID)
	type result struct {
		n   int
		err error
	}
	results, ended := make(chan result, 2), make(chan error, 2)
	for range 2 {
		go func() {
			n, err := s.RestoreArchiveSet(ctx, o.ID, set.ID)
			results <- result{n, err}
			ended <- err
		}()
	}
	waitBlocked(t, db.SQL(), pid, 2, ended)
	release()
	a, b := <-results, <-results
	if a.err != nil {
		a, b = b, a
	}
	if a.err != nil || a.n != 2 || !core.IsKind(b.err, core.KindNotFound) {
		t.Fatalf("restores = (%d, %v) and (%d, %v); want 2 restored and one KindNotFound", a.n, a.err, b.n, b.err)
	}
}
