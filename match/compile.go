package match

import (
	"math/bits"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Compile builds the automaton for phrases. It normalises white space and
// folds case itself, so phrases need not be normalised; empty phrases and
// phrases that are not valid UTF-8 are kept in the numbering but never
// match.
func Compile(phrases []string) *Set {
	return compile(phrases, 2)
}

// compile is Compile putting the children of the states with at least
// many of them in the edge table, which tests lower to 1 to drive every
// transition through it.
func compile(phrases []string, many int) *Set {
	s := &Set{n: len(phrases), syms: map[rune]uint32{}, runes: map[rune]rune{}}
	for c := range s.class {
		switch {
		case c >= utf8.RuneSelf:
			s.class[c] = cHigh
		case asciiWord[c]:
			s.class[c] = cWord
		case asciiSpace[c]:
			s.class[c] = cSpace
		default:
			s.class[c] = cOther
		}
	}

	// Tokens and the trie over them.
	b := builder{s: s, words: map[string]uint32{}, kids: map[uint64]uint32{}}
	b.wordAt = []uint32{0}
	b.nodes = []node{{first: -1, next: -1, out: -1}}
	alphabet := map[rune]bool{}
	for i, p := range phrases {
		f := fold(p)
		if len(f) == 0 {
			continue
		}
		for _, r := range f {
			alphabet[r] = true
		}
		u := uint32(0)
		for len(f) > 0 {
			var t uint32
			switch n := wordLen(f); {
			case f[0] == ' ':
				t, f = tokSpace, f[1:]
			case n > 0:
				t, f = b.word(string(f[:n])), f[n:]
			default:
				t, f = b.sym(f[0]), f[1:]
			}
			u = b.add(u, t)
		}
		b.outs = append(b.outs, output{phrase: uint32(i), next: b.nodes[u].out})
		b.nodes[u].out = int32(len(b.outs) - 1)
	}
	delete(alphabet, ' ')
	for f := range alphabet {
		for m := f; ; {
			if m >= utf8.RuneSelf {
				s.runes[m] = f
			}
			if m = unicode.SimpleFold(m); m == f {
				break
			}
		}
	}
	for _, m := range typedVariants {
		if f := Fold(m); alphabet[f] {
			s.runes[m] = f
		}
	}
	s.arena = b.arena.String()
	s.wordAt = b.wordAt
	b.build(many)
	return s
}

// wordLen returns how many runes at the start of f are word characters
// of scripts written with spaces. A character of a script written
// without spaces (unspaced) is a token of its own, as a non-word
// character is, so that it needs no boundary.
func wordLen(f []rune) int {
	for i, r := range f {
		if !isWord(r) || unspaced(r) {
			return i
		}
	}
	return len(f)
}

type builder struct {
	s      *Set
	words  map[string]uint32
	arena  strings.Builder
	wordAt []uint32
	keys   [][2]uint64 // key of each word token, by token - tokFirst
	lens   []uint32
	nodes  []node
	kids   map[uint64]uint32 // node<<32 | token to child
	outs   []output
}

type node struct {
	first, next int32 // first child and next sibling, or -1
	tok         uint32
	out         int32 // head of this node's own outputs in builder.outs, or -1
}

type output struct {
	phrase uint32
	next   int32
}

// word returns the token of the folded word w, adding it if it is new.
func (b *builder) word(w string) uint32 {
	if t, ok := b.words[w]; ok {
		return t
	}
	t := b.newToken(w)
	b.words[w] = t
	var k key
	for i := 0; i < len(w); i++ {
		k.addByte(w[i])
	}
	k0, k1 := k.sum()
	b.keys[t-tokFirst], b.lens[t-tokFirst] = [2]uint64{k0, k1}, uint32(len(w))
	b.s.maxWord = max(b.s.maxWord, len(w))
	return t
}

// sym returns the token of the folded character r, a non-word character
// or one of a script written without spaces.
func (b *builder) sym(r rune) uint32 {
	if t, ok := b.s.syms[r]; ok {
		return t
	}
	t := b.newToken("")
	b.s.syms[r] = t
	if r < utf8.RuneSelf {
		b.s.sym[r] = t
	}
	return t
}

func (b *builder) newToken(w string) uint32 {
	b.arena.WriteString(w)
	b.wordAt = append(b.wordAt, uint32(b.arena.Len()))
	b.keys = append(b.keys, [2]uint64{})
	b.lens = append(b.lens, 0)
	return uint32(len(b.wordAt) - 2 + tokFirst)
}

func (b *builder) add(u, t uint32) uint32 {
	k := uint64(u)<<32 | uint64(t)
	if v, ok := b.kids[k]; ok {
		return v
	}
	v := uint32(len(b.nodes))
	b.nodes = append(b.nodes, node{first: -1, next: b.nodes[u].first, tok: t, out: -1})
	b.nodes[u].first = int32(v)
	b.kids[k] = v
	return v
}

// build computes the failure links in breadth-first order and lays out
// the tables a scan reads.
func (b *builder) build(manyKids int) {
	s, nodes := b.s, b.nodes
	n := len(nodes)
	ntok := len(b.wordAt) - 1 + tokFirst

	// Failure links, breadth first.
	order := make([]uint32, 0, n)
	fail := make([]uint32, n)
	for v := nodes[0].first; v >= 0; v = nodes[v].next {
		order = append(order, uint32(v))
	}
	for h := 0; h < len(order); h++ {
		u := order[h]
		for v := nodes[u].first; v >= 0; v = nodes[v].next {
			t := nodes[v].tok
			for f := fail[u]; ; f = fail[f] {
				if x, ok := b.kids[uint64(f)<<32|uint64(t)]; ok && x != uint32(v) {
					fail[v] = x
					break
				}
				if f == 0 {
					break
				}
			}
			order = append(order, uint32(v))
		}
	}

	// States are numbered anew: the root, then the states whose failure
	// link is the root, then the rest, each in breadth-first order. So a
	// scan tells from the number alone that a state has no other suffix
	// to try.
	num := make([]uint32, n)
	next := uint32(1)
	for pass := range 2 {
		for _, u := range order {
			if (fail[u] == 0) == (pass == 0) {
				num[u] = next
				next++
			}
		}
		if pass == 0 {
			s.rootFails = next
		}
	}
	at := func(u uint32) *state { return &s.states[num[u]] }

	// Outputs, sharing the list of the failure state, and the
	// transitions on white space, which follow the failure links in
	// advance. Until the numbers are final below, links hold the
	// builder's node numbers.
	s.states = make([]state, n)
	s.states[0] = state{acc: noAcc, tok: tokNone} // no phrase starts with white space
	for _, u := range order {
		st := at(u)
		st.fail = fail[u]
		st.acc = at(fail[u]).acc
		if nodes[u].out >= 0 {
			lo := uint32(len(s.entries))
			for o := nodes[u].out; o >= 0; o = b.outs[o].next {
				s.entries = append(s.entries, b.outs[o].phrase)
			}
			slices.Sort(s.entries[lo:])
			s.acc = append(s.acc, accept{lo: lo, hi: uint32(len(s.entries)), next: st.acc})
			st.acc = uint32(len(s.acc) - 1)
		}
		st.space = at(fail[u]).space
		if k, ok := b.kids[uint64(u)<<32|tokSpace]; ok {
			st.space = k
		}
	}

	// Children on other tokens: from the root a direct table; from a
	// state with one such child inline; otherwise the edge table.
	s.root = make([]uint32, ntok)
	var many []uint32
	edges := 0
	for u := range nodes {
		cnt := 0
		for v := nodes[u].first; v >= 0; v = nodes[v].next {
			t := nodes[v].tok
			switch {
			case t == tokSpace:
			case u == 0:
				s.root[t] = uint32(v)
			default:
				cnt++
				at(uint32(u)).tok, at(uint32(u)).kid = t, uint32(v)
			}
		}
		edges += cnt
		if cnt >= manyKids {
			at(uint32(u)).tok, at(uint32(u)).kid = tokMany, 0
			many = append(many, uint32(u))
		}
	}
	// A state where exactly one phrase ends names it in place.
	for u := range s.states {
		st := &s.states[u]
		if k := st.acc; k != noAcc && s.acc[k].next == noAcc && s.acc[k].hi-s.acc[k].lo == 1 {
			st.acc = onePhrase | s.entries[s.acc[k].lo]
		}
	}

	// From here on a state is named by its number, with accBit when it
	// has outputs.
	id := func(u uint32) uint32 {
		if u != 0 && at(u).acc != noAcc {
			return num[u] | accBit
		}
		return num[u]
	}
	for u := range s.states {
		st := &s.states[u]
		st.fail, st.space = id(st.fail), id(st.space)
		if st.tok != tokMany {
			st.kid = id(st.kid)
		}
	}
	for t, v := range s.root {
		s.root[t] = id(v)
	}

	// The word tables, each word with its first step. Each is at most a
	// quarter full: then a word no phrase uses mostly finds an empty slot
	// at once, a branch the processor learns to predict, which keeps the
	// scan fast when most words are no phrase's (docs/adr/0009-matcher.md).
	var short, long int
	for t := range b.keys {
		switch {
		case b.lens[t] == 0:
		case b.keys[t][1] == 0:
			short++
		default:
			long++
		}
	}
	s.dict = make([]slot, 4<<bits.Len(uint(short)))
	s.dictBits = uint(64 - bits.TrailingZeros(uint(len(s.dict))))
	s.long = make([]longSlot, 4<<bits.Len(uint(long)))
	s.longBits = uint(64 - bits.TrailingZeros(uint(len(s.long))))
	for t := range b.keys {
		if b.lens[t] == 0 {
			continue
		}
		k0, k1 := b.keys[t][0], b.keys[t][1]
		sl := slot{k0: k0, tok: uint32(t + tokFirst), rootSpace: s.states[s.root[t+tokFirst]&^accBit].space}
		if k1 == 0 {
			h := s.shortHome(k0)
			for s.dict[h].k0 != 0 {
				h = (h + 1) & uint64(len(s.dict)-1)
			}
			s.dict[h] = sl
			continue
		}
		h := s.longHome(k0, k1)
		for s.long[h].k0 != 0 {
			h = (h + 1) & uint64(len(s.long)-1)
		}
		s.long[h] = longSlot{k1: k1, slot: sl}
	}

	// The filter of every state and token with a child, and the edge
	// table, at most half full.
	filterWords := max(1, edges/4) // 16 bits per edge
	filterWords = 1 << bits.Len(uint(filterWords-1))
	s.filter = make([]uint64, filterWords)
	s.filterBit = uint(64 - bits.TrailingZeros(uint(filterWords)))
	for u := 1; u < n; u++ {
		for v := nodes[u].first; v >= 0; v = nodes[v].next {
			if t := nodes[v].tok; t != tokSpace {
				h := edgeHash(num[u], t)
				s.filter[h>>s.filterBit] |= filterBits(h)
			}
		}
	}
	manyEdges := 0
	for _, u := range many {
		for v := nodes[u].first; v >= 0; v = nodes[v].next {
			if nodes[v].tok != tokSpace {
				manyEdges++
			}
		}
	}
	edgeSize := 2 << bits.Len(uint(manyEdges))
	s.edges = make([]edge, edgeSize)
	s.edgeBits = uint(64 - bits.TrailingZeros(uint(edgeSize)))
	for _, u := range many {
		for v := nodes[u].first; v >= 0; v = nodes[v].next {
			t := nodes[v].tok
			if t == tokSpace {
				continue
			}
			h := edgeHash(num[u], t)
			i := h >> s.edgeBits
			for s.edges[i].key != 0 {
				i = (i + 1) & uint64(edgeSize-1)
			}
			s.edges[i] = edge{key: uint64(num[u])<<32 | uint64(t), to: id(uint32(v))}
		}
	}
}

// fold returns p trimmed, with each run of white space made one space,
// the invisible characters left out and every other rune folded by Fold,
// or nil if p is empty after that or not valid UTF-8.
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
		if invisible(r) {
			continue
		}
		if space && len(out) > 0 {
			out = append(out, ' ')
		}
		space = false
		out = append(out, Fold(r))
	}
	return out
}
