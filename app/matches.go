package app

import (
	"context"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// Matches reads an owner's matches.
type Matches struct {
	store ports.MatchStore
}

// NewMatches returns the match reading service.
func NewMatches(store ports.MatchStore) *Matches { return &Matches{store: store} }

// List returns a page of matches. KindInvalid names the parameter out of
// range.
func (s *Matches) List(ctx context.Context, ownerID string, q ports.MatchQuery) (ports.MatchPage, error) {
	limit, minScore, before, err := core.CheckPage(core.PageFilter{Limit: q.Limit, Platform: q.Platform, MinScore: q.MinScore, Before: q.Before})
	if err != nil {
		return ports.MatchPage{}, err
	}
	f := ports.MatchFilter{Platform: q.Platform, MinScore: minScore, Limit: limit, Before: before}
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

// Get returns one match. KindNotFound.
func (s *Matches) Get(ctx context.Context, ownerID, id string) (core.Match, error) {
	return s.store.Match(ctx, ownerID, id)
}
