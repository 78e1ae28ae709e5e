package app

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/match"
	"github.com/earshothq/earshot/ports"
)

// Compiled is an owner's listening phrases of one platform, compiled.
type Compiled struct {
	version int64
	phrases []core.Phrase
	set     *match.Set
	read    atomic.Int64 // when a helper's read of these phrases was last recorded, in µs since 1970
}

// Matchers caches a compiled matcher per owner and platform. An entry is
// rebuilt when the owner's phrase version moves, which every phrase
// change bumps in the database: so a phrase added through the admin
// console, or through another replica, is seen on the next post.
type Matchers struct {
	store ports.ListeningStore

	mu    sync.Mutex
	cache map[string]*Compiled
}

// NewMatchers returns an empty cache over store.
func NewMatchers(store ports.ListeningStore) *Matchers {
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
	ps, err := m.store.OwnerListeningPhrases(ctx, ownerID, p)
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

// readEvery is how often a helper's reads of the same phrases are
// recorded: every batch would be a write per batch of posts.
const readEvery = time.Minute

// markRead records that a helper read c's phrases at now (their
// lastCheckedAt, from helper), at most once every readEvery per process.
// A phrase added, paused or resumed compiles a new set, so its first read
// is recorded at once.
func (m *Matchers) markRead(ctx context.Context, c *Compiled, now time.Time) error {
	last := c.read.Load()
	if len(c.phrases) == 0 || (last != 0 && now.UnixMicro()-last < readEvery.Microseconds()) || !c.read.CompareAndSwap(last, now.UnixMicro()) {
		return nil
	}
	ids := make([]string, len(c.phrases))
	for i, p := range c.phrases {
		ids[i] = p.ID
	}
	return m.store.MarkChecked(ctx, ids, core.SourceHelper, now)
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

// MatchIn returns the ids of the phrases of community found in any of
// the texts. A reddit phrase listens in its own community only, so a
// post is matched against its community's phrases, as the reddit reader
// matches the posts it reads; on the other platforms every phrase's
// community, and the post's, is "".
func (c *Compiled) MatchIn(community string, texts ...string) []string {
	if len(c.phrases) == 0 {
		return nil
	}
	idx := c.set.Find(texts...)
	ids := make([]string, 0, len(idx))
	for _, n := range idx {
		if c.phrases[n].Community == community {
			ids = append(ids, c.phrases[n].ID)
		}
	}
	return ids
}
