package app

import (
	"context"
	"sync"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/core/match"
	"github.com/earshothq/earshot/ports"
)

// Compiled is an owner's listening phrases of one platform, compiled.
type Compiled struct {
	version int64
	phrases []core.Phrase
	set     *match.Set
}

// Matchers caches a compiled matcher per owner and platform. An entry is
// rebuilt when the owner's phrase version moves, which every phrase
// change bumps in the database: so a phrase added through the admin
// console, or through another replica, is seen on the next post.
type Matchers struct {
	store ports.PhraseStore

	mu    sync.Mutex
	cache map[string]*Compiled
}

// NewMatchers returns an empty cache over store.
func NewMatchers(store ports.PhraseStore) *Matchers {
	return &Matchers{store: store, cache: map[string]*Compiled{}}
}

// For returns the compiled listening phrases of the owner on p.
func (m *Matchers) For(ctx context.Context, ownerID string, p core.Platform) (*Compiled, error) {
	v, err := m.store.PhraseVersion(ctx, ownerID)
	if err != nil {
		return nil, err
	}
	key := ownerID + "/" + string(p)
	m.mu.Lock()
	c := m.cache[key]
	m.mu.Unlock()
	if c != nil && c.version == v {
		return c, nil
	}
	ps, err := m.store.Phrases(ctx, ownerID, ports.PhraseFilter{Platform: p, Status: core.Listening})
	if err != nil {
		return nil, err
	}
	c = Compile(ps)
	c.version = v
	m.mu.Lock()
	m.cache[key] = c
	m.mu.Unlock()
	return c, nil
}

// Compile compiles a phrase list.
func Compile(ps []core.Phrase) *Compiled {
	texts := make([]string, len(ps))
	for i, p := range ps {
		texts[i] = p.Phrase
	}
	return &Compiled{phrases: ps, set: match.Compile(texts)}
}

// Match returns the ids of the phrases found in any of the texts.
func (c *Compiled) Match(texts ...string) []string {
	if len(c.phrases) == 0 {
		return nil
	}
	idx := c.set.Find(texts...)
	ids := make([]string, len(idx))
	for i, n := range idx {
		ids[i] = c.phrases[n].ID
	}
	return ids
}
