package gormstore

import (
	"context"
	"testing"

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
