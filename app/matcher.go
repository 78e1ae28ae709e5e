package app

import (
	"context"
	"slices"
	"sort"
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
	// set finds the phrases, numbered as in phrases, then the distinct
	// words of their filters' exclude and require lists, numbered from
	// len(phrases): one scan finds both.
	set *match.Set
	// words holds, for each phrase with such words, the numbers in set
	// of its exclude and require words; nil when no phrase has any.
	words  []filterWords
	nwords int // distinct filter words
	// read holds, for each phrase, when a helper's read of it was last
	// recorded, in µs since 1970 (0: not yet): per phrase, since a batch
	// may leave the phrases of some communities unread.
	read []atomic.Int64
}

// filterWords are the numbers in Compiled.set of a phrase's exclude and
// require words.
type filterWords struct {
	exclude, require []int
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
// lastCheckedAt, from helper), all but those of the communities unread
// and those whose text is among texts (both sorted; texts as
// core.UnreadPhrases.Keys gives them), each phrase at most once every
// readEvery per process. A phrase added, paused or resumed compiles a
// new set, so its first read is recorded at once; a phrase left unread
// by one batch is recorded by the next that reads it, however soon.
func (m *Matchers) markRead(ctx context.Context, c *Compiled, now time.Time, unread, texts []string) error {
	at := now.UnixMicro()
	var ids []string
	for i := range c.phrases {
		p := &c.phrases[i]
		if _, skip := slices.BinarySearch(unread, p.Community); skip && p.Community != "" {
			continue
		}
		if len(texts) > 0 {
			if _, skip := slices.BinarySearch(texts, unreadKey(p.Phrase)); skip {
				continue
			}
		}
		// A read recorded more than readEvery ahead of now was recorded
		// before the clock was set back: waiting for the clock to pass it
		// would leave the phrase read at a time not come yet.
		last := c.read[i].Load()
		if d := at - last; (last != 0 && d < readEvery.Microseconds() && d > -readEvery.Microseconds()) || !c.read[i].CompareAndSwap(last, at) {
			continue
		}
		ids = append(ids, p.ID)
	}
	if len(ids) == 0 {
		return nil
	}
	return m.store.MarkChecked(ctx, ids, core.SourceHelper, now)
}

// unreadKey is a stored phrase's text in the form core.UnreadPhrases.Keys
// gives a helper's: normalised as a phrase is now, then folded. A phrase
// stored before the normalisation trimmed what it now trims (an invisible
// character at an edge) keeps it, and GET /phrases gives it with it; its
// stored text folded alone would never equal the key of that text. A
// stored text that is no longer a phrase is folded as it is.
func unreadKey(text string) string {
	if n, err := core.NormalizePhrase(text); err == nil {
		text = n
	}
	return core.FoldKey(text)
}

// Compile compiles a phrase list. The words of the filters are compiled
// with the phrases, each distinct word once (as the matcher compares
// them: folded, white space as one space), so a list whose phrases have
// none compiles as the phrases alone.
func Compile(ps []core.Phrase) *Compiled {
	c := &Compiled{phrases: ps, read: make([]atomic.Int64, len(ps))}
	texts := make([]string, len(ps))
	for i, p := range ps {
		texts[i] = p.Phrase
	}
	number := map[string]int{}
	word := func(w string) int {
		k := core.FoldKey(w)
		n, ok := number[k]
		if !ok {
			n = len(texts)
			number[k] = n
			texts = append(texts, w)
		}
		return n
	}
	for i, p := range ps {
		if len(p.Filters.Exclude) == 0 && len(p.Filters.Require) == 0 {
			continue
		}
		if c.words == nil {
			c.words = make([]filterWords, len(ps))
		}
		fw := &c.words[i]
		for _, w := range p.Filters.Exclude {
			fw.exclude = append(fw.exclude, word(w))
		}
		for _, w := range p.Filters.Require {
			if n := word(w); !slices.Contains(fw.require, n) {
				fw.require = append(fw.require, n)
			}
		}
	}
	c.nwords = len(texts) - len(ps)
	c.set = match.Compile(texts)
	return c
}

// Match returns the ids of the phrases of community found in a post that
// their filters keep. The post's title and each part of its body are
// searched apart, so a phrase never spans two; p gives what the filters
// read besides the words (author, likes, comments). A reddit phrase
// listens in its own community only, so a post is matched against its
// community's phrases, as the reddit reader matches the posts it reads;
// on the other platforms every phrase's community, and the post's, is "".
// A phrase without filters is found exactly as the matcher finds it.
func (c *Compiled) Match(p core.Post, community, title string, body ...string) []string {
	if len(c.phrases) == 0 {
		return nil
	}
	var buf [4]string
	found := c.set.Find(append(append(buf[:0], title), body...)...)
	n := len(c.phrases)
	words := found[sort.SearchInts(found, n):] // the filter words in the post
	found = found[:len(found)-len(words)]
	ids := make([]string, 0, len(found))
	var post core.FilterPost
	var inTitle []int
	read, titled, marked := false, false, false
	// The filter words found, as bits, when there are few enough words
	// to keep the bits on the stack; else countIn searches words.
	var bits [64]uint64
	seen := bits[:0]
	if c.nwords <= len(bits)*64 {
		seen = bits[:(c.nwords+63)/64]
	}
	for _, i := range found {
		ph := &c.phrases[i]
		if ph.Community != community {
			continue
		}
		if !ph.Filters.IsZero() {
			if !read {
				post, read = core.FilterPostOf(p, community), true
			}
			h := core.FilterHits{}
			if ph.Filters.TitleOnly && title != "" {
				// Which phrases are in the title is asked only when a
				// phrase found needs it; titles are short.
				if !titled {
					inTitle, titled = c.set.Find(title), true
				}
				h.InTitle = contains(inTitle, i)
			}
			if c.words != nil && len(words) > 0 {
				if !marked && len(seen) > 0 {
					for _, w := range words {
						seen[(w-n)>>6] |= 1 << ((w - n) & 63)
					}
					marked = true
				}
				h.Excluded = c.countIn(words, seen, c.words[i].exclude)
				h.Required = c.countIn(words, seen, c.words[i].require)
			}
			if !ph.Filters.Keep(post, h) {
				continue
			}
		}
		ids = append(ids, ph.ID)
	}
	return ids
}

// contains reports whether the sorted list holds n.
func contains(sorted []int, n int) bool {
	_, ok := slices.BinarySearch(sorted, n)
	return ok
}

// countIn counts the words of ns (numbers in c.set) among the words
// found: in seen, their bits, unless it is empty; else in found, sorted.
func (c *Compiled) countIn(found []int, seen []uint64, ns []int) int {
	k, n := 0, len(c.phrases)
	for _, w := range ns {
		in := false
		if len(seen) > 0 {
			in = seen[(w-n)>>6]>>((w-n)&63)&1 != 0
		} else {
			in = contains(found, w)
		}
		if in {
			k++
		}
	}
	return k
}
