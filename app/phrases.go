package app

import (
	"context"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
)

// IdempotencyWindow is how long an Idempotency-Key replays its phrase.
const IdempotencyWindow = 24 * time.Hour

// Phrases manages an owner's phrases with the same validation and plan
// limits wherever the request comes from: the API or the admin console.
type Phrases struct {
	store  ports.PhraseStore
	limits core.Limits
	clock  ports.Clock
	// changed is told about every phrase set that changed, so compiled
	// matchers are rebuilt; added about every phrase added.
	changed func(ownerID string)
	added   func(ctx context.Context, p core.Phrase)
}

// NewPhrases returns the phrase service.
func NewPhrases(store ports.PhraseStore, limits core.Limits, clock ports.Clock) *Phrases {
	return &Phrases{store: store, limits: limits, clock: clock, changed: func(string) {}, added: func(context.Context, core.Phrase) {}}
}

// OnChange registers f to be called after an owner's phrases change.
func (s *Phrases) OnChange(f func(ownerID string)) {
	prev := s.changed
	s.changed = func(id string) { prev(id); f(id) }
}

// OnAdd registers f to be called after a phrase is added (not when a
// request is replayed).
func (s *Phrases) OnAdd(f func(ctx context.Context, p core.Phrase)) {
	prev := s.added
	s.added = func(ctx context.Context, p core.Phrase) { prev(ctx, p); f(ctx, p) }
}

// Add validates and creates a phrase. With an idempotency key seen in the
// last day it returns the phrase first created with it and replayed true.
// KindInvalid, KindConflict, KindPlanLimit.
func (s *Phrases) Add(ctx context.Context, ownerID, phrase, platform, community, idemKey string) (core.Phrase, bool, error) {
	return s.AddWithFilters(ctx, ownerID, phrase, platform, community, core.PhraseFilters{}, idemKey)
}

// AddWithFilters is Add of a phrase with filters, checked by
// core.NewPhraseFilters. A replay returns the phrase first created, with
// its own filters. KindInvalid, KindConflict, KindPlanLimit.
func (s *Phrases) AddWithFilters(ctx context.Context, ownerID, phrase, platform, community string, f core.PhraseFilters, idemKey string) (core.Phrase, bool, error) {
	if idemKey != "" {
		if err := core.CheckIdempotencyKey(idemKey); err != nil {
			return core.Phrase{}, false, err
		}
	}
	p, err := core.NewPhrase(ownerID, phrase, platform, community)
	if err != nil {
		return core.Phrase{}, false, err
	}
	if p.Filters, err = core.NewPhraseFilters(f); err != nil {
		return core.Phrase{}, false, err
	}
	idem := ports.Idempotency{Key: idemKey, Since: s.clock.Now().Add(-IdempotencyWindow)}
	replayed, err := s.store.CreatePhrase(ctx, &p, s.limits, idem)
	if err != nil {
		return core.Phrase{}, false, err
	}
	if !replayed {
		s.changed(ownerID)
		s.added(ctx, p)
	}
	return p, replayed, nil
}

// Get returns one of the owner's phrases. KindNotFound.
func (s *Phrases) Get(ctx context.Context, ownerID, id string) (core.Phrase, error) {
	return s.store.Phrase(ctx, ownerID, id)
}

// List returns the owner's phrases, oldest first.
func (s *Phrases) List(ctx context.Context, ownerID string, f ports.PhraseFilter) ([]core.Phrase, error) {
	return s.store.Phrases(ctx, ownerID, f)
}

// SetStatus pauses or resumes a phrase. KindInvalid, KindNotFound.
func (s *Phrases) SetStatus(ctx context.Context, ownerID, id, status string) (core.Phrase, error) {
	st := core.PhraseStatus(status)
	if !st.Valid() {
		return core.Phrase{}, core.Errorf(core.KindInvalid, "status must be listening or paused")
	}
	p, err := s.store.SetPhraseStatus(ctx, ownerID, id, st)
	if err == nil {
		s.changed(ownerID)
	}
	return p, err
}

// Update changes a phrase's status (when status is not nil) and the
// fields of its filters that ch gives, in one step: everything is checked
// first, so a refusal changes nothing. A change of filters is seen by
// every replica's matcher at its next post (the phrase version moves).
// KindInvalid, also when there is nothing to change; KindNotFound.
func (s *Phrases) Update(ctx context.Context, ownerID, id string, status *string, ch core.PhraseFiltersChange) (core.Phrase, error) {
	var c ports.PhraseChange
	if status != nil {
		st := core.PhraseStatus(*status)
		if !st.Valid() {
			return core.Phrase{}, core.Errorf(core.KindInvalid, "status must be listening or paused")
		}
		c.Status = &st
	}
	var err error
	if c.Filters, err = ch.Check(); err != nil {
		return core.Phrase{}, err
	}
	if c.Status == nil && c.Filters.IsZero() {
		return core.Phrase{}, core.Errorf(core.KindInvalid, "nothing to change: send status or a filter field")
	}
	p, err := s.store.UpdatePhrase(ctx, ownerID, id, c)
	if err == nil {
		s.changed(ownerID)
	}
	return p, err
}

// Delete removes a phrase and its matches. KindNotFound.
func (s *Phrases) Delete(ctx context.Context, ownerID, id string) error {
	err := s.store.DeletePhrase(ctx, ownerID, id)
	if err == nil {
		s.changed(ownerID)
	}
	return err
}

// Plan returns the owner's plan with limits and usage.
func (s *Phrases) Plan(ctx context.Context, ownerID string) (core.Plan, error) {
	u, err := s.store.Usage(ctx, ownerID)
	if err != nil {
		return core.Plan{}, err
	}
	p := core.FreePlan(s.limits, u)
	p.OwnerID = ownerID
	return p, nil
}
