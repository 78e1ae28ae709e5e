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
// owner on Postgres waits for the batch or the batch for it: neither
// takes the phrase's lock and then the owner's while the other holds the
// owner's and waits for the phrase's, which Postgres ends by failing one.
func TestPhraseChangesBesideABatch(t *testing.T) {
	for name, change := range phraseChanges {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := openMigrated(t, pgtest.URL(t))
			o, p, _ := trendFixture(t, db, 0)
			// The batch queues for the owner's row first, then the change.
			pid, release := holdRows(t, db.SQL(), "SELECT id FROM owners WHERE id = $1 FOR NO KEY UPDATE", o.ID)
			ended := make(chan error, 2)
			go func() {
				_, err := NewMatchStore(db).SaveMatches(ctx, o.ID, core.X, []ports.PostMatches{
					{Post: core.Post{ExternalID: newID(), Text: "acme"}, PhraseIDs: []string{p.ID}}})
				ended <- err
			}()
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

// So it is beside a phrase's fill from the window, which stores matches
// as a batch does: a phrase deleted meanwhile gets nothing, and that is
// not an error.
func TestPhraseChangesBesideABackfill(t *testing.T) {
	for name, change := range phraseChanges {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := openMigrated(t, pgtest.URL(t))
			o, p, _ := trendFixture(t, db, 0)
			posts := []core.RecentPost{{OwnerID: o.ID, Platform: core.X, Post: core.Post{ExternalID: newID(), Text: "acme"}}}
			// The fill queues for the owner's row first, then the change.
			pid, release := holdRows(t, db.SQL(), "SELECT id FROM owners WHERE id = $1 FOR NO KEY UPDATE", o.ID)
			ended := make(chan error, 2)
			go func() {
				_, err := NewRecentStore(db).SaveBackfill(ctx, p, posts)
				ended <- err
			}()
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
