package app

import (
	"context"
	"iter"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Matches reads an owner's matches.
type Matches struct {
	store ports.MatchStore
}

// NewMatches returns the match reading service.
func NewMatches(store ports.MatchStore) *Matches { return &Matches{store: store} }

// filter checks q and turns it into a store filter. KindInvalid names
// the parameter out of range.
func (s *Matches) filter(q ports.MatchQuery) (ports.MatchFilter, error) {
	limit, minScore, before, err := core.CheckPage(core.PageFilter{Limit: q.Limit, Platform: q.Platform, MinScore: q.MinScore, Before: q.Before})
	if err != nil {
		return ports.MatchFilter{}, err
	}
	search, err := core.ParseSearch(q.Q)
	if err != nil {
		return ports.MatchFilter{}, err
	}
	return ports.MatchFilter{Platform: q.Platform, MinScore: minScore, Limit: limit, Before: before, Search: search}, nil
}

// List returns a page of matches. KindInvalid names the parameter out of
// range.
func (s *Matches) List(ctx context.Context, ownerID string, q ports.MatchQuery) (ports.MatchPage, error) {
	f, err := s.filter(q)
	if err != nil {
		return ports.MatchPage{}, err
	}
	ms, more, err := s.store.Matches(ctx, ownerID, f)
	if err != nil {
		return ports.MatchPage{}, err
	}
	page := ports.MatchPage{Matches: ms}
	if more && len(ms) > 0 {
		c := core.Millis(ms[len(ms)-1].CreatedAt)
		page.Next = &c
	}
	return page, nil
}

// ExportPage is how many matches an export reads from the store at a
// time: what it holds in memory, however many it writes.
const ExportPage = 500

// Export returns every match of q's view, from q's cursor on, newest
// first, read page by page through the list's cursor as a client
// paging the API would, so an export of any size holds one page at a
// time. q's limit is no bound: every match of the view comes. KindInvalid
// names the parameter out of range, before anything is read; a page that
// fails ends the pages with its error.
func (s *Matches) Export(ctx context.Context, ownerID string, q ports.MatchQuery) (iter.Seq2[[]core.Match, error], error) {
	q.Limit = 0
	f, err := s.filter(q)
	if err != nil {
		return nil, err
	}
	f.Limit = ExportPage
	return func(yield func([]core.Match, error) bool) {
		for {
			ms, more, err := s.store.Matches(ctx, ownerID, f)
			if err != nil {
				yield(nil, err)
				return
			}
			if len(ms) == 0 || !yield(ms, nil) || !more {
				return
			}
			f.Before = ms[len(ms)-1].CreatedAt
		}
	}, nil
}

// Get returns one match. KindNotFound.
func (s *Matches) Get(ctx context.Context, ownerID, id string) (core.Match, error) {
	return s.store.Match(ctx, ownerID, id)
}
