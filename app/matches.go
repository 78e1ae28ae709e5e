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
	if q.Limit == 0 {
		q.Limit = 25
	}
	if q.Limit < 1 || q.Limit > 100 {
		return ports.MatchPage{}, core.Errorf(core.KindInvalid, "limit must be from 1 to 100")
	}
	if q.Platform != "" && !q.Platform.Valid() {
		return ports.MatchPage{}, core.Errorf(core.KindInvalid, "platform must be one of reddit, x, facebook")
	}
	f := ports.MatchFilter{Platform: q.Platform, MinScore: -1, Limit: q.Limit}
	if q.MinScore != nil {
		if *q.MinScore < 0 || *q.MinScore > 100 {
			return ports.MatchPage{}, core.Errorf(core.KindInvalid, "min_score must be from 0 to 100")
		}
		f.MinScore = *q.MinScore
	}
	if q.Before != 0 {
		t, err := core.CursorTime(q.Before)
		if err != nil {
			return ports.MatchPage{}, err
		}
		f.Before = t
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

// Get returns one match. KindNotFound.
func (s *Matches) Get(ctx context.Context, ownerID, id string) (core.Match, error) {
	return s.store.Match(ctx, ownerID, id)
}
