package app

import (
	"context"
	"iter"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Inbox lists an owner's matches with their triage and keeps the owner's
// read, starred and archived flags: the dashboard's inbox and the API's
// triage extension share it.
type Inbox struct {
	store ports.TriageStore
}

// NewInbox returns the inbox service.
func NewInbox(store ports.TriageStore) *Inbox { return &Inbox{store: store} }

// filter checks q and turns it into a store filter. KindInvalid names
// the parameter out of range.
func (s *Inbox) filter(q ports.InboxQuery) (ports.InboxFilter, error) {
	limit, minScore, before, err := core.CheckPage(core.PageFilter{Limit: q.Limit, Platform: q.Platform, MinScore: q.MinScore, Before: q.Before})
	if err != nil {
		return ports.InboxFilter{}, err
	}
	if q.Intent != "" && !q.Intent.Valid() {
		return ports.InboxFilter{}, core.Errorf(core.KindInvalid, "intent must be one of buying, recommendation, complaint, question, praise, discussion, promotion")
	}
	search, err := core.ParseSearch(q.Q)
	if err != nil {
		return ports.InboxFilter{}, err
	}
	f := ports.InboxFilter{Platform: q.Platform, MinScore: minScore, Intent: q.Intent, PhraseID: q.PhraseID,
		Read: q.Read, Starred: q.Starred, Archived: q.Archived, Limit: limit, Before: before, Search: search}
	return f, nil
}

// List returns a page of the inbox. KindInvalid names the parameter out
// of range.
func (s *Inbox) List(ctx context.Context, ownerID string, q ports.InboxQuery) (ports.InboxPage, error) {
	f, err := s.filter(q)
	if err != nil {
		return ports.InboxPage{}, err
	}
	items, more, err := s.store.Inbox(ctx, ownerID, f)
	if err != nil {
		return ports.InboxPage{}, err
	}
	page := ports.InboxPage{Items: items}
	if more && len(items) > 0 {
		c := core.Millis(items[len(items)-1].Match.CreatedAt)
		page.Next = &c
	}
	return page, nil
}

// Export returns every item of q's view of the inbox, from q's cursor
// on, newest first, read ExportPage at a time through the inbox's
// cursor, as Matches.Export does. KindInvalid names the parameter out of
// range, before anything is read.
func (s *Inbox) Export(ctx context.Context, ownerID string, q ports.InboxQuery) (iter.Seq2[[]ports.InboxItem, error], error) {
	q.Limit = 0
	f, err := s.filter(q)
	if err != nil {
		return nil, err
	}
	f.Limit = ExportPage
	return func(yield func([]ports.InboxItem, error) bool) {
		for {
			items, more, err := s.store.Inbox(ctx, ownerID, f)
			if err != nil {
				yield(nil, err)
				return
			}
			if len(items) == 0 || !yield(items, nil) || !more {
				return
			}
			f.Before = items[len(items)-1].Match.CreatedAt
		}
	}, nil
}

// Changes returns what a live view of q has to show since it last
// looked: matches created after after, newest first, and matches scored
// after scoredAfter. At most limit of each.
func (s *Inbox) Changes(ctx context.Context, ownerID string, q ports.InboxQuery, after, scoredAfter time.Time, limit int) (created, scored []ports.InboxItem, err error) {
	q.Before, q.Limit = 0, limit
	f, err := s.filter(q)
	if err != nil {
		return nil, nil, err
	}
	nf := f
	nf.After = after
	if created, _, err = s.store.Inbox(ctx, ownerID, nf); err != nil {
		return nil, nil, err
	}
	sf := f
	sf.ScoredAfter = scoredAfter
	if scored, _, err = s.store.Inbox(ctx, ownerID, sf); err != nil {
		return nil, nil, err
	}
	return created, scored, nil
}

// Item returns one match with its triage. KindNotFound.
func (s *Inbox) Item(ctx context.Context, ownerID, id string) (core.Triage, error) {
	return s.store.Triage(ctx, ownerID, id)
}

// Set changes the triage of one of the owner's matches and returns it.
// KindInvalid for a change that sets nothing, KindNotFound when the match
// is not the owner's.
func (s *Inbox) Set(ctx context.Context, ownerID, id string, c core.TriageChange) (core.Triage, error) {
	if c.Empty() {
		return core.Triage{}, core.Errorf(core.KindInvalid, "set at least one of read, starred, archived")
	}
	n, err := s.store.SetTriage(ctx, ownerID, []string{id}, c)
	if err != nil {
		return core.Triage{}, err
	}
	if n == 0 {
		return core.Triage{}, core.Errorf(core.KindNotFound, "match not found")
	}
	return s.store.Triage(ctx, ownerID, id)
}

// SetMany changes the triage of up to core.MaxTriageBatch of the owner's
// matches and returns how many were the owner's; other ids are skipped.
// KindInvalid for no ids, too many, or a change that sets nothing.
func (s *Inbox) SetMany(ctx context.Context, ownerID string, ids []string, c core.TriageChange) (int, error) {
	switch {
	case len(ids) == 0:
		return 0, core.Errorf(core.KindInvalid, "ids must name at least one match")
	case len(ids) > core.MaxTriageBatch:
		return 0, core.Errorf(core.KindInvalid, "ids may name at most %d matches", core.MaxTriageBatch)
	case c.Empty():
		return 0, core.Errorf(core.KindInvalid, "set at least one of read, starred, archived")
	}
	return s.store.SetTriage(ctx, ownerID, ids, c)
}
