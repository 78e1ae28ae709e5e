// Package match finds many tracked phrases in post text in one pass.
//
// Compile turns a phrase list into a Set, built once and then shared,
// read-only, by any number of goroutines. Scanning follows the matching
// rules of ARCHITECTURE.md:
//
//   - Letters compare under Unicode simple case folding, exactly as
//     core.FoldRune defines it: "ΣΟΦΊΑ" finds "σοφία" and the Kelvin sign
//     finds "k", but "STRASSE" does not find "straße" (that needs full
//     folding) and "İ" finds neither "i" nor "ı".
//   - A typographic apostrophe (’ ‘ ‛) is the ASCII one, and a full-width
//     form of an ASCII character (U+FF01 to U+FF5E, all but the low line)
//     is that character, as NFKC reads it: "joe's" finds "JOE’S" and
//     "acme" finds "ＡＣＭＥ" (see Fold).
//   - Every run of white space (unicode.IsSpace, so tabs, line breaks and
//     no-break spaces too) counts as one space, in the text and in phrases.
//   - A phrase whose first (last) character is a word character matches
//     only where the text has no word character just before (after) it.
//     Word characters are letters, digits, '_' and the combining marks Mn
//     and Mc but the variation selectors U+FE00 to U+FE0F, which draw an
//     emoji ("❤️acme" holds "acme"). So "go" is not found in "google" or "ago", while "c++" is
//     found in "c++x" and "#ai" in "x#ai", since their outer '+' and '#'
//     ask for no boundary.
//   - Scripts written without spaces between words (Han, Hiragana,
//     Katakana, Hangul, Thai, Lao, Khmer, Myanmar) have no boundary to
//     look for: each of their characters is a word of its own, and
//     neither asks for a boundary at a phrase's edge nor breaks one in
//     the text (NeedsBoundary). So "東京" is found in "東京タワー",
//     "ソニー" in "ソニーの新製品" and "삼성" in "삼성은" (Korean particles
//     attach to the noun), and "acme" in "acmeの新製品", as Japanese
//     writes Latin names against kana; "acme" is still not found in
//     "acmes".
//   - The format characters a reader does not see (core.Invisible: a
//     soft hyphen, the zero-width characters, direction marks and other
//     bidirectional controls, the word joiner, a byte order mark) are
//     read as if absent, in the text and in phrases: "acme" is found in
//     "ac\u00adme" and "acme crm" in "acme\u200e crm", but "acme" is not
//     found in "acme\u2060crm", which reads "acmecrm".
//   - Invalid UTF-8 in the text is a non-word character that matches
//     nothing; a phrase that is not valid UTF-8 never matches.
//   - Overlapping phrases are all found: "new york", "york" and
//     "york city" all occur in "new york city".
//
// A post is searched in its title and in each body part separately, so a
// phrase never spans two parts: pass them to Find as separate texts.
//
// # How it works
//
// The boundary rule means that a phrase always starts and ends where text
// can be cut into tokens: whole words (runs of word characters of scripts
// written with spaces), single characters of the scripts written without
// them, single other characters and runs of white space. A Set looks each word up once
// in a hash table of the words its phrases use and runs an Aho–Corasick
// automaton over token numbers, so a scan takes a few steps per word rather
// than one per byte, and the tables it touches stay small even for 100,000
// phrases. Plain ASCII prose takes a fast path that classifies and folds
// 64 bytes at a time (with SSE2 on amd64, with bit operations on 64-bit
// words elsewhere or under the purego build tag) and uses a short word's
// folded bytes as its key; the rest (non-ASCII letters, long words,
// unusual white space) goes rune by rune.
package match

import (
	"slices"
	"sync"
)

// Token numbers. Every other number is a word or a character used by
// some phrase.
const (
	tokNone  = 0 // a word or character no phrase uses
	tokSpace = 1 // a run of white space
	tokFirst = 2

	tokSkip = ^uint32(0) - 1 // what high reads for an invisible character: no token at all

	tokMany = ^uint32(0) // state.tok: look the children up in the edge table
	noAcc   = ^uint32(0)

	// onePhrase marks state.acc of a state where exactly one phrase ends,
	// which holds that phrase rather than an index in acc.
	onePhrase = 1 << 31

	// accBit marks the number of a state with outputs wherever it is
	// stored, so that a scan only loads the state to report.
	accBit = 1 << 31
)

// Set is a compiled phrase set. It is immutable, so its methods are safe
// for concurrent use.
type Set struct {
	n int // phrases given to Compile

	class [256]uint8  // character class of each byte
	sym   [128]uint32 // token of each ASCII non-word character
	syms  map[rune]uint32
	runes map[rune]rune // fold of each non-ASCII rune whose fold some phrase uses

	// Words: open-addressing tables of the keys of the words the phrases
	// use (see key), one for words of up to eight bytes and one for the
	// longer, and the folded words for the keys that are hashes.
	dict     []slot     // words of up to eight bytes
	long     []longSlot // longer words
	unknown  slot       // what a lookup returns for a word no phrase uses
	dictBits uint
	longBits uint
	arena    string
	wordAt   []uint32 // arena[wordAt[t-tokFirst]:wordAt[t-tokFirst+1]] is word t
	maxWord  int

	// The automaton. State 0 is the root; root[t] is where token t leads
	// from it. Wherever a state's number is stored, it carries accBit if
	// phrases end there. The states below rootFails have the root as
	// their failure link.
	states    []state
	root      []uint32
	rootFails uint32
	// A Bloom filter of the states and tokens that have a child, small
	// enough to stay in cache: most steps from a state other than the
	// root lead nowhere from it, and the filter tells so without loading
	// the state. The children of the states with several children other
	// than white space are in an open-addressing table keyed by state and
	// token.
	filter    []uint64
	filterBit uint
	edges     []edge
	edgeBits  uint

	// Outputs: acc[k] lists the phrases ending in the states that point
	// to k, then continues with the outputs of the longest suffix.
	acc     []accept
	entries []uint32

	// finders keeps the reporters of Find, whose bit sets are sized by
	// the phrase set, for the next call.
	finders sync.Pool
}

type state struct {
	fail  uint32 // the longest proper suffix that is a state
	acc   uint32 // outputs: noAcc, an index in acc, or onePhrase|phrase
	space uint32 // where a run of white space leads
	tok   uint32 // token of the only child other than white space, tokNone or tokMany
	kid   uint32 // that child
}

// slot is a word of up to eight bytes in the word table: sixteen bytes,
// so that the table takes half the cache it would with the longer words'
// second key in every slot.
type slot struct {
	k0  uint64 // 0 for an empty slot
	tok uint32
	// Where white space leads after the word from the root: the most
	// common step, without loading a state.
	rootSpace uint32
}

// longSlot is a word of nine bytes or more, keyed by its bytes up to
// fifteen and by a hash from sixteen on.
type longSlot struct {
	k1 uint64
	slot
}

type edge struct {
	key uint64 // state<<32 | token; 0 for an empty slot
	to  uint32
}

type accept struct {
	lo, hi uint32 // entries of the phrases that end in this state
	next   uint32 // outputs of the longest suffix that has some, or noAcc
}

// Len returns the number of phrases given to Compile, including any that
// can never match (empty or invalid UTF-8).
func (s *Set) Len() int {
	if s == nil {
		return 0
	}
	return s.n
}

// Scan calls found with the index, in the slice given to Compile, of each
// phrase that occurs in text, once per occurrence, so an index can come
// several times; duplicates in the phrase list are reported separately.
// Scan does not allocate; found must not be nil.
func (s *Set) Scan(text string, found func(i int)) {
	if s == nil || len(s.states) < 2 {
		return
	}
	r := reporter{found: found}
	s.scan(text, &r)
}

func (s *Set) scan(text string, r *reporter) {
	st := uint32(0)
	for i := 0; i < len(text); {
		c := text[i]
		cl := s.class[c]
		if cl == cWord {
			var j int
			if st, j = s.words(text, i, st, r); j != i {
				i = j
				continue
			}
		}
		// One token the fast path leaves: a word that is long, has
		// non-ASCII letters or ends the text, white space or another
		// character.
		var tok uint32
		switch cl {
		case cWord:
			tok, i = s.word(text, i)
		case cSpace:
			i = skipSpace(text, i+1)
			st = s.states[st&^accBit].space
			continue
		case cOther:
			tok = s.sym[c]
			i++
		default:
			switch tok, i = s.high(text, i); tok {
			case tokSpace:
				st = s.states[st&^accBit].space
				continue
			case tokSkip:
				continue
			}
		}
		st = s.step(st, tok, r)
	}
}

// Find returns the sorted, distinct indexes of the phrases that occur in
// any of the texts, or nil if none does. Each text is searched on its own:
// pass a post's title and body parts as separate texts.
//
// Find records each phrase once, however often it occurs, so its memory
// is bounded by the phrase set, not by occurrences: nested phrases ("a",
// "a a", "a a a", ...) over a long run of "a" end at every word, and
// collecting every occurrence before removing duplicates would cost words
// times phrases. The outputs of a state are listed once too: a list
// reported before, with the lists it continues with, holds nothing new,
// so the work per word stays constant however deep the nesting.
func (s *Set) Find(texts ...string) []int {
	if s == nil || len(s.states) < 2 {
		return nil
	}
	r, _ := s.finders.Get().(*reporter)
	if r == nil {
		r = &reporter{
			phraseSeen: make([]uint64, (s.n+63)/64),
			accSeen:    make([]uint64, (len(s.acc)+63)/64),
		}
	}
	for _, t := range texts {
		s.scan(t, r)
	}
	var found []int
	if len(r.out) > 0 {
		found = slices.Clone(r.out)
		slices.Sort(found)
	}
	r.reset()
	s.finders.Put(r)
	return found
}

// reporter takes what a scan finds: each occurrence to found (Scan), or,
// when found is nil, each phrase once into out (Find).
type reporter struct {
	found func(int)

	phraseSeen []uint64 // bit i: phrase i is in out
	accSeen    []uint64 // bit k: acc[k] and the lists it continues with are reported
	out        []int
	accTouched []uint32 // the bits set in accSeen, to clear them
}

// reset clears what a Find recorded, in time proportional to it rather
// than to the phrase set, so that a reporter can serve the next Find.
func (r *reporter) reset() {
	for _, i := range r.out {
		r.phraseSeen[i>>6] = 0
	}
	for _, k := range r.accTouched {
		r.accSeen[k>>6] = 0
	}
	r.out, r.accTouched = r.out[:0], r.accTouched[:0]
}

// add records phrase i once.
func (r *reporter) add(i uint32) {
	w, b := i>>6, uint64(1)<<(i&63)
	if r.phraseSeen[w]&b == 0 {
		r.phraseSeen[w] |= b
		r.out = append(r.out, int(i))
	}
}

// step moves the automaton from st on token tok (not white space) and
// reports the phrases that end there.
func (s *Set) step(st, tok uint32, r *reporter) uint32 {
	switch {
	case tok == tokNone:
		return 0
	case st == 0:
		st = s.root[tok]
	default:
		st = s.next(st, tok, s.root[tok])
	}
	if st&accBit != 0 {
		s.report(s.states[st&^accBit].acc, r)
	}
	return st
}

// next returns the state token tok (not white space) leads to from st,
// given the state it leads to from the root.
func (s *Set) next(st, tok, fromRoot uint32) uint32 {
	for st != 0 {
		u := st &^ accBit
		if h := edgeHash(u, tok); s.filter[h>>s.filterBit]&filterBits(h) == filterBits(h) {
			x := &s.states[u]
			if x.tok == tok {
				return x.kid
			}
			if x.tok == tokMany {
				if to := s.child(u, tok, h); to != 0 {
					return to
				}
			}
		}
		if u < s.rootFails {
			break
		}
		st = s.states[u].fail
	}
	return fromRoot
}

// edgeHash hashes a state and a token for the filter and the edge table,
// which take its top bits for their index. Two multiplications that run
// side by side: a scan hashes on most words, so a finaliser such as mix
// would cost the whole scan time (docs/adr/0009-matcher.md).
func edgeHash(st, tok uint32) uint64 {
	return uint64(st)*hashMul ^ uint64(tok)*hashMul2
}

// filterBits returns the two bits of the filter word that stand for h,
// from bits of h that the index of a filter under 8 MB does not use.
func filterBits(h uint64) uint64 {
	return 1<<(h>>32&63) | 1<<(h>>38&63)
}

// child looks up the child of st on tok, whose edgeHash is h, in the edge
// table.
func (s *Set) child(st, tok uint32, h uint64) uint32 {
	key := uint64(st)<<32 | uint64(tok)
	mask := uint64(len(s.edges) - 1)
	for i := h >> s.edgeBits; ; i = (i + 1) & mask {
		e := &s.edges[i]
		if e.key == key {
			return e.to
		}
		if e.key == 0 {
			return 0
		}
	}
}

// report hands r the phrases of state.acc k.
func (s *Set) report(k uint32, r *reporter) {
	if r.found == nil {
		s.collect(k, r)
		return
	}
	if k&onePhrase != 0 {
		r.found(int(k &^ onePhrase))
		return
	}
	for k != noAcc {
		a := &s.acc[k]
		for _, e := range s.entries[a.lo:a.hi] {
			r.found(int(e))
		}
		k = a.next
	}
}

// collect records the phrases of state.acc k in r, stopping at the first
// list it has recorded before: that list's phrases, and those of the
// lists it continues with, are in r already.
func (s *Set) collect(k uint32, r *reporter) {
	if k&onePhrase != 0 {
		r.add(k &^ onePhrase)
		return
	}
	for k != noAcc {
		w, b := k>>6, uint64(1)<<(k&63)
		if r.accSeen[w]&b != 0 {
			return
		}
		r.accSeen[w] |= b
		r.accTouched = append(r.accTouched, k)
		a := &s.acc[k]
		for _, e := range s.entries[a.lo:a.hi] {
			r.add(e)
		}
		k = a.next
	}
}
