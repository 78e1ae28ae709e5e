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
//   - Every run of white space (unicode.IsSpace, so tabs, line breaks and
//     no-break spaces too) counts as one space, in the text and in phrases.
//   - A phrase whose first (last) character is a word character matches
//     only where the text has no word character just before (after) it.
//     Word characters are letters, digits, '_' and the combining marks Mn
//     and Mc. So "go" is not found in "google" or "ago", while "c++" is
//     found in "c++x" and "#ai" in "x#ai", since their outer '+' and '#'
//     ask for no boundary.
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
// The boundary rule means that a phrase always starts and ends where the
// text can be cut into tokens: whole words (runs of word characters), single
// other characters, and runs of white space. So a Set cuts text into such
// tokens, looks each word up once in a hash table of the words the phrases
// use, and runs an Aho–Corasick automaton over the token numbers. A word is
// read eight bytes at a time, and a scan follows a few pointers per word
// instead of one per byte, which keeps it fast when the automaton is far
// bigger than the processor's caches.
package match

import (
	"math/bits"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
)

// Token numbers. Every other number is a word or a character used by
// some phrase.
const (
	tokNone  = 0 // a word or character no phrase uses
	tokSpace = 1 // a run of white space
	tokFirst = 2

	tokMany = ^uint32(0) // state.tok: look the children up in the edge table
	noAcc   = ^uint32(0)
)

// Character classes of ASCII bytes, and of the non-ASCII lead bytes.
const (
	cWord = iota
	cSpace
	cOther
	cHigh
)

// Set is a compiled phrase set. It is immutable, so its methods are safe
// for concurrent use.
type Set struct {
	n int // phrases given to Compile

	class [256]uint8  // character class of each byte
	sym   [128]uint32 // token of each ASCII non-word character
	syms  map[rune]uint32
	runes map[rune]rune // fold of each non-ASCII rune whose fold some phrase uses

	// Words: an open-addressing table of the keys of the words the
	// phrases use (see key), and the folded words for the keys that are
	// hashes.
	dict     []slot
	dictBits uint
	words    string
	wordAt   []uint32 // words[wordAt[t-tokFirst]:wordAt[t-tokFirst+1]] is word t
	maxWord  int

	// The automaton. State 0 is the root; root[t] is where token t leads
	// from it.
	states []state
	root   []uint32
	// Children of the states with several children other than white
	// space, in an open-addressing table keyed by state and token, with a
	// Bloom filter in front so that most misses cost one load from a
	// table small enough to stay in cache.
	edges     []edge
	edgeBits  uint
	filter    []uint64
	filterBit uint

	// Outputs: acc[k] lists the phrases ending in the states that point
	// to k, then continues with the outputs of the longest suffix.
	acc     []accept
	entries []uint32
}

type state struct {
	fail  uint32 // the longest proper suffix that is a state
	acc   uint32 // outputs, or noAcc
	space uint32 // where a run of white space leads
	tok   uint32 // token of the only child other than white space, tokNone or tokMany
	kid   uint32 // that child
}

type slot struct {
	key uint64 // 0 for an empty slot
	tok uint32
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
	st := uint32(0)
	for i := 0; i < len(text); {
		var tok uint32
		switch c := text[i]; s.class[c] {
		case cWord:
			tok, i = s.word(text, i)
		case cSpace:
			i = skipSpace(text, i+1)
			if st != 0 {
				st = s.states[st].space
			}
			continue
		case cOther:
			tok = s.sym[c]
			i++
		default:
			tok, i = s.high(text, i)
			if tok == tokSpace {
				if st != 0 {
					st = s.states[st].space
				}
				continue
			}
		}
		switch {
		case tok == tokNone:
			st = 0
		case st == 0:
			st = s.root[tok]
		default:
			st = s.next(st, tok)
		}
		if st != 0 {
			if k := s.states[st].acc; k != noAcc {
				s.report(k, found)
			}
		}
		// Most words are followed by one space and another word: take
		// that space here rather than through the switch.
		if i+1 < len(text) && text[i] == ' ' && s.class[text[i+1]] == cWord {
			i++
			if st != 0 {
				st = s.states[st].space
			}
		}
	}
}

// Find returns the sorted, distinct indexes of the phrases that occur in
// any of the texts, or nil if none does. Each text is searched on its own:
// pass a post's title and body parts as separate texts.
func (s *Set) Find(texts ...string) []int {
	var found []int
	add := func(i int) { found = append(found, i) }
	for _, t := range texts {
		s.Scan(t, add)
	}
	slices.Sort(found)
	return slices.Compact(found)
}

// next returns the state token tok (not white space) leads to from st.
func (s *Set) next(st, tok uint32) uint32 {
	for st != 0 {
		x := &s.states[st]
		if x.tok == tok {
			return x.kid
		}
		if x.tok == tokMany {
			if to := s.child(st, tok); to != 0 {
				return to
			}
		}
		st = x.fail
	}
	return s.root[tok]
}

// child looks up the child of st on tok in the edge table.
func (s *Set) child(st, tok uint32) uint32 {
	key := uint64(st)<<32 | uint64(tok)
	h := mix(key)
	m := uint64(1)<<(h&63) | uint64(1)<<(h>>6&63)
	if s.filter[h>>s.filterBit]&m != m {
		return 0
	}
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

func (s *Set) report(k uint32, found func(int)) {
	for k != noAcc {
		a := &s.acc[k]
		for _, e := range s.entries[a.lo:a.hi] {
			found(int(e))
		}
		k = a.next
	}
}

const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// geq returns the high bit of each byte of x (all below 0x80) that is at
// least b. Adding 0x80-b to a byte below 0x80 never carries into the next.
func geq(x uint64, b byte) uint64 {
	return (x + lows*uint64(0x80-b)) & highs
}

// word reads the word token that starts with the ASCII word character at
// text[i] and returns its token and the index after it. Eight bytes at a
// time it marks the ASCII word characters, folds the capitals and adds
// the folded bytes to the key.
func (s *Set) word(text string, i int) (uint32, int) {
	var h, block uint64
	j, n := i, 0
	for {
		var x uint64
		if j+8 <= len(text) {
			x = load64(text[j : j+8])
		} else {
			var b [8]byte
			copy(b[:], text[j:])
			x = load64(string(b[:]))
		}
		x7 := x &^ highs
		lower := x7 | lows*0x20
		letter := geq(lower, 'a') &^ geq(lower, 'z'+1)
		digit := geq(x7, '0') &^ geq(x7, '9'+1)
		under := geq(x7, '_') &^ geq(x7, '_'+1)
		upper := geq(x7, 'A') &^ geq(x7, 'Z'+1)
		folded := x7 | upper>>2
		// The lowest byte that is not an ASCII word character has its
		// top bit at 8*k+7, where k is the number of word bytes before it.
		m := bits.TrailingZeros64(^((letter | digit | under) &^ x) & highs)
		if m == 64 {
			h = mix(h ^ folded)
			n += 8
			j += 8
			continue
		}
		k := m >> 3
		block = folded & (1<<(m&^7) - 1)
		n += k
		j += k
		break
	}
	if j < len(text) && text[j] >= utf8.RuneSelf {
		return s.wordRest(text, i, j, key{h: h, block: block, nb: n & 7, n: n})
	}
	if n > s.maxWord {
		return tokNone, j
	}
	kv := block
	if n >= 8 {
		kv = mix(h^block^uint64(n)<<56) | 1<<63
	}
	mask := uint64(len(s.dict) - 1)
	for h := kv * hashMul >> s.dictBits; ; h = (h + 1) & mask {
		sl := &s.dict[h]
		if sl.key == kv && (n < 8 || s.same(text[i:j], sl.tok)) {
			return sl.tok, j
		}
		if sl.key == 0 {
			return tokNone, j
		}
	}
}

// load64 returns the eight bytes of b, the first lowest.
func load64(b string) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// hashMul spreads a key over the top bits that index the word table.
const hashMul = 0x9e3779b97f4a7c15

// wordRest goes on with a word that reaches a non-ASCII byte at text[j],
// rune by rune.
func (s *Set) wordRest(text string, i, j int, k key) (uint32, int) {
	known := true
	for j < len(text) {
		c := text[j]
		if c < utf8.RuneSelf {
			if s.class[c] != cWord {
				break
			}
			k.addByte(asciiLower[c])
			j++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[j:])
		if r == utf8.RuneError && size == 1 || !isWord(r) {
			break
		}
		j += size
		if !known {
			continue
		}
		f, ok := s.runes[r]
		if !ok {
			known = false
			continue
		}
		k.addRune(f)
	}
	if !known {
		return tokNone, j
	}
	return s.lookup(text, i, j, &k), j
}

// high reads the token that starts with the non-ASCII byte at text[i].
func (s *Set) high(text string, i int) (uint32, int) {
	r, size := utf8.DecodeRuneInString(text[i:])
	switch {
	case r == utf8.RuneError && size == 1:
		return tokNone, i + 1
	case unicode.IsSpace(r):
		return tokSpace, skipSpace(text, i+size)
	case isWord(r):
		return s.wordRest(text, i, i, key{})
	}
	f, ok := s.runes[r]
	if !ok {
		return tokNone, i + size
	}
	return s.syms[f], i + size
}

// lookup returns the token of the word text[i:j], whose folded key is k.
func (s *Set) lookup(text string, i, j int, k *key) uint32 {
	if k.n > s.maxWord {
		return tokNone
	}
	kv := k.sum()
	mask := uint64(len(s.dict) - 1)
	for h := kv * hashMul >> s.dictBits; ; h = (h + 1) & mask {
		sl := &s.dict[h]
		if sl.key == kv && (k.n < 8 || s.same(text[i:j], sl.tok)) {
			return sl.tok
		}
		if sl.key == 0 {
			return tokNone
		}
	}
}

// same reports whether word folds to the phrase word of token tok. Only
// words of eight bytes and more need it: shorter keys are the bytes.
func (s *Set) same(word string, tok uint32) bool {
	w := s.words[s.wordAt[tok-tokFirst]:s.wordAt[tok-tokFirst+1]]
	var buf [utf8.UTFMax]byte
	for _, r := range word {
		f := r
		if r >= utf8.RuneSelf {
			f = s.runes[r]
		} else {
			f = rune(asciiLower[r])
		}
		b := buf[:utf8.EncodeRune(buf[:], f)]
		if len(w) < len(b) || w[:len(b)] != string(b) {
			return false
		}
		w = w[len(b):]
	}
	return w == ""
}

// key accumulates the folded UTF-8 bytes of a word: whole groups of eight
// bytes go into a hash, the last group stays as it is. A word of fewer
// than eight bytes is its own key, so only longer words need comparing.
type key struct {
	h     uint64
	block uint64 // the last, incomplete group, first byte lowest
	nb    int    // bytes in block
	n     int    // bytes in all
}

func (k *key) addBlock(b uint64) {
	k.h = mix(k.h ^ b)
	k.n += 8
}

func (k *key) addByte(c byte) {
	k.block |= uint64(c) << (8 * k.nb)
	k.n++
	if k.nb++; k.nb == 8 {
		k.h = mix(k.h ^ k.block)
		k.block, k.nb = 0, 0
	}
}

func (k *key) addRune(r rune) {
	var buf [utf8.UTFMax]byte
	for _, c := range buf[:utf8.EncodeRune(buf[:], r)] {
		k.addByte(c)
	}
}

// sum returns the key: the bytes themselves below eight, which leaves the
// top byte zero, else a hash with the top bit set.
func (k *key) sum() uint64 {
	if k.n < 8 {
		return k.block
	}
	return mix(k.h^k.block^uint64(k.n)<<56) | 1<<63
}

// mix is a 64-bit finaliser (from MurmurHash3): every input bit affects
// the top bits, which index the tables.
func mix(x uint64) uint64 {
	x ^= x >> 33
	x *= 0xff51afd7ed558ccd
	x ^= x >> 33
	x *= 0xc4ceb9fe1a85ec53
	x ^= x >> 33
	return x
}

// skipSpace returns the index after the run of white space that goes on
// at text[i].
func skipSpace(text string, i int) int {
	for i < len(text) {
		c := text[i]
		if c < utf8.RuneSelf {
			if asciiSpace[c] {
				i++
				continue
			}
			break
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += size
	}
	return i
}

// isWord reports whether r is a word character: a letter, a digit, '_' or
// a combining mark that extends the letter before it.
func isWord(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiWord[r]
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

var (
	asciiWord, asciiSpace [utf8.RuneSelf]bool
	asciiLower            [utf8.RuneSelf]byte
)

func init() {
	for c := range utf8.RuneSelf {
		asciiWord[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
		asciiSpace[c] = unicode.IsSpace(rune(c))
		asciiLower[c] = byte(core.FoldRune(rune(c)))
	}
}

// fold returns p trimmed, with each run of white space made one space and
// every rune folded by core.FoldRune, or nil if p is empty after that or
// not valid UTF-8.
func fold(p string) []rune {
	if !utf8.ValidString(p) {
		return nil
	}
	var out []rune
	space := false
	for _, r := range p {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && len(out) > 0 {
			out = append(out, ' ')
		}
		space = false
		out = append(out, core.FoldRune(r))
	}
	return out
}
