package gormstore

import (
	"context"
	"testing"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/pgtest"
)

// phraseChanges are the changes of a phrase that wait for its owner's
// batches: a pause and a deletion.
var phraseChanges = map[string]func(*PhraseStore, core.Phrase) error{
	"update": func(s *PhraseStore, p core.Phrase) error {
		paused := core.Paused
		_, err := s.UpdatePhrase(context.Background(), p.OwnerID, p.ID, ports.PhraseChange{Status: &paused})
		return err
	},
	"delete": func(s *PhraseStore, p core.Phrase) error {
		return s.DeletePhrase(context.Background(), p.OwnerID, p.ID)
	},
}

// A phrase changed or deleted while a batch of posts is stored for its
// owner on Postgres waits for the batch or the batch for it: both take
// the owner's row before the phrase's (lockPhrases), so neither holds
// what the other waits for, which Postgres would end by failing one.
func TestPhraseChangesBesideABatch(t *testing.T) {
	besidePhraseChanges(t, func(db *DB, o core.Owner, p core.Phrase) error {
		_, err := NewMatchStore(db).SaveMatches(context.Background(), o.ID, core.X, []ports.PostMatches{
			{Post: core.Post{ExternalID: newID(), Text: "acme"}, PhraseIDs: []string{p.ID}}})
		return err
	})
}

// So it is beside a phrase's fill from the window, which stores matches
// as a batch does: a phrase deleted meanwhile gets nothing, and that is
// not an error.
func TestPhraseChangesBesideABackfill(t *testing.T) {
	besidePhraseChanges(t, func(db *DB, o core.Owner, p core.Phrase) error {
		posts := []core.RecentPost{{OwnerID: o.ID, Platform: core.X, Post: core.Post{ExternalID: newID(), Text: "acme"}}}
		_, err := NewRecentStore(db).SaveBackfill(context.Background(), p, posts)
		return err
	})
}

// besidePhraseChanges runs store, then each of phraseChanges, queued in
// that order behind a hold of the owner's row, and wants both to succeed.
func besidePhraseChanges(t *testing.T, store func(*DB, core.Owner, core.Phrase) error) {
	for name, change := range phraseChanges {
		t.Run(name, func(t *testing.T) {
			db := openMigrated(t, pgtest.URL(t))
			o, p, _ := trendFixture(t, db, 0)
			pid, release := holdRows(t, db.SQL(), "SELECT id FROM owners WHERE id = $1 FOR NO KEY UPDATE", o.ID)
			ended := make(chan error, 2)
			go func() { ended <- store(db, o, p) }()
			waitBlocked(t, db.SQL(), pid, 1, ended)
			go func() { ended <- change(NewPhraseStore(db), p) }()
			waitBlocked(t, db.SQL(), pid, 2, ended)
			release()
			for range 2 {
				if err := <-ended; err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// The reddit poller marks every phrase of the communities it read, of
// every owner, in one call: more ids than either database takes bound
// values in one statement (32,766 on SQLite, 65,535 on Postgres) are
// marked all the same, the unknown ones passed over.
func TestMarkCheckedManyIDs(t *testing.T) {
	for name, url := range dialects(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := openMigrated(t, url)
			o, p, _ := trendFixture(t, db, 0)
			ids := []string{}
			for range 70_000 {
				ids = append(ids, newID())
			}
			ids[len(ids)/2] = p.ID
			at := time.Now().UTC().Truncate(time.Microsecond).Add(time.Hour)
			if err := NewPhraseStore(db).MarkChecked(ctx, ids, core.SourceMirror, at); err != nil {
				t.Fatalf("MarkChecked of %d ids: %v", len(ids), err)
			}
			got, err := NewPhraseStore(db).Phrase(ctx, o.ID, p.ID)
			if err != nil || !got.LastCheckedAt.Equal(at) || got.LastSource != core.SourceMirror {
				t.Fatalf("the phrase after MarkChecked: %v %s, %v", got.LastCheckedAt, got.LastSource, err)
			}
		})
	}
}
