package match

import (
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/earshothq/earshot/core"
)

// Character classes of ASCII bytes, and of the non-ASCII lead bytes.
const (
	cWord = iota
	cSpace
	cOther
	cHigh
)

// words is the fast path of Scan for plain ASCII prose. From the ASCII
// word character at text[i], with the automaton in state st, it takes 64
// bytes at a time and first marks which are ASCII word characters and
// which are not ASCII at all, and folds them (classify64). Then it walks
// from word to word with bit operations on those masks, looking each word
// up by its folded bytes, and takes the ASCII punctuation and white space
// between words as it goes. So the work on one word does not wait for the
// work on the one before, except for the automaton's state. It stops where
// it needs the general path and returns the state and the index reached.
//
// Shift counts are masked with 63 where they are known to be smaller, so
// that the compiler leaves out its handling of counts of 64 and more.
func (s *Set) words(text string, i int, st uint32, r *reporter) (uint32, int) {
	var folded [80]byte // the chunk folded, and room to read 16 bytes from any of its bytes
	for i < len(text) {
		p := i
		// Which bytes of the chunk are ASCII word characters and which
		// not ASCII at all, and the chunk folded. A chunk that would
		// run past the end of text is read from a copy padded with zero
		// bytes: not word characters, not non-ASCII.
		var wm, hm uint64
		if p+64 <= len(text) {
			wm, hm = classify64(&folded, unsafe.StringData(text[p:]))
		} else {
			var tail [64]byte
			copy(tail[:], text[p:])
			wm, hm = classify64(&folded, &tail[0])
		}
		k := 0 // a word starts at text[p+k]
		for {
			e := k + bits.TrailingZeros64(^wm>>(k&63))
			if e >= 64 {
				// The word goes on past the chunk: start the next
				// chunk with it, unless it fills this one.
				if k == 0 {
					return st, p
				}
				i = p + k
				break
			}
			if hm>>(e&63)&1 != 0 || e-k >= 16 {
				// Non-ASCII letters may follow, or the key is a hash.
				return st, p + k
			}
			k0 := binary.LittleEndian.Uint64(folded[k&63:])
			sl := &s.unknown
			switch n := e - k; {
			case n <= 8:
				sl = s.findShort(k0 & (^uint64(0) >> ((64 - 8*n) & 63)))
			case n <= s.maxWord:
				sl = s.findLong(k0, binary.LittleEndian.Uint64(folded[k&63+8:])&(1<<((8*(n-8))&63)-1))
			}
			root := s.root[sl.tok]
			switch {
			case sl.tok == tokNone:
				st = 0
			case st == 0:
				st = root
			default:
				st = s.next(st, sl.tok, root)
			}
			if st&accBit != 0 {
				s.report(s.states[st&^accBit].acc, r)
			}

			// The characters up to the next word, if they are ASCII
			// and it starts in the chunk.
			next := wm >> (e & 63)
			if next == 0 || hm>>(e&63)&(1<<(bits.TrailingZeros64(next)&63)-1) != 0 {
				return st, p + e
			}
			n := e + bits.TrailingZeros64(next)
			if n == e+1 && text[p+e] == ' ' {
				switch {
				case st == root:
					st = sl.rootSpace
				case st != 0:
					st = s.states[st&^accBit].space
				}
				k = n
				continue
			}
			for q := p + e; q < p+n; {
				c := text[q]
				if s.class[c] == cSpace {
					for q++; q < p+n && s.class[text[q]] == cSpace; q++ {
					}
					st = s.states[st&^accBit].space
					continue
				}
				if t := s.sym[c]; t == tokNone {
					st = 0 // most punctuation: no phrase has it
				} else {
					st = s.step(st, t, r)
				}
				q++
			}
			k = n
		}
	}
	return st, i
}

// loadAt returns the eight bytes of text from i, the first lowest, with
// zeros past its end.
func loadAt(text string, i int) uint64 {
	if i+8 <= len(text) {
		return load64(text[i:])
	}
	return loadTail(text[i:])
}

// loadTail returns the bytes of t, fewer than eight, the first lowest.
func loadTail(t string) uint64 {
	var b [8]byte
	copy(b[:], t)
	return binary.LittleEndian.Uint64(b[:])
}

// movemask gathers the top bits of the eight bytes of x, the first byte
// lowest.
func movemask(x uint64) uint64 {
	return x & highs * 0x02040810204081 >> 56
}

// findShort returns the slot of the word of up to eight bytes whose
// folded bytes are k0 (see key), or s.unknown.
func (s *Set) findShort(k0 uint64) *slot {
	mask := uint64(len(s.dict) - 1)
	for h := s.shortHome(k0); ; h = (h + 1) & mask {
		sl := &s.dict[h]
		if sl.k0 == k0 {
			return sl
		}
		if sl.k0 == 0 {
			return &s.unknown
		}
	}
}

// findLong returns the slot of the longer word whose key is k0 and k1,
// or s.unknown.
func (s *Set) findLong(k0, k1 uint64) *slot {
	mask := uint64(len(s.long) - 1)
	for h := s.longHome(k0, k1); ; h = (h + 1) & mask {
		sl := &s.long[h]
		if sl.k0 == k0 && sl.k1 == k1 {
			return &sl.slot
		}
		if sl.k0 == 0 {
			return &s.unknown
		}
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
// text[i] and returns its token and the index after it: the general path
// for words that are long, contain non-ASCII letters or end the chunk of
// the fast path.
func (s *Set) word(text string, i int) (uint32, int) {
	var k key
	j := i
	for {
		folded, m := ascii8(loadAt(text, j))
		if m == 64 {
			k.addGroup(folded)
			j += 8
			continue
		}
		k.cur, k.n = folded&(1<<(m&^7)-1), k.n+m>>3
		j += m >> 3
		break
	}
	if j < len(text) && text[j] >= utf8.RuneSelf {
		return s.wordRest(text, i, j, k)
	}
	return s.lookup(text, i, j, &k), j
}

// ascii8 folds the capitals of the eight bytes in x, the first lowest,
// and returns them with 8*w+7, where w is the number of ASCII word
// characters they start with, or 64 if they all are.
func ascii8(x uint64) (uint64, int) {
	x7 := x &^ highs
	lower := x7 | lows*0x20
	bit5 := x7 << 2 & highs // 0x20 of each byte, moved to its top bit
	alpha := geq(lower, 'a') &^ geq(lower, 'z'+1)
	under := geq(lower, 0x7f) &^ bit5 // '_' is 0x5f; DEL, 0x7f, has 0x20
	digit := geq(x7, '0') &^ geq(x7, '9'+1)
	word := (alpha | under | digit) &^ x
	return x7 | (alpha&^bit5)>>2, bits.TrailingZeros64(^word & highs)
}

// load64 returns the first eight bytes of b, the first lowest.
func load64(b string) uint64 {
	return binary.LittleEndian.Uint64([]byte(b[:8]))
}

// shortHome is the slot of s.dict where the search for a word of up to
// eight bytes with key k0 starts.
func (s *Set) shortHome(k0 uint64) uint64 {
	return k0 * hashMul >> (s.dictBits & 63)
}

// longHome is the slot of s.long where the search for a longer word with
// key k0, k1 starts.
func (s *Set) longHome(k0, k1 uint64) uint64 {
	return (k0 ^ k1*hashMul2) * hashMul >> (s.longBits & 63)
}

// hashMul and hashMul2 spread a key over the top bits that index the
// word table.
const (
	hashMul  = 0x9e3779b97f4a7c15
	hashMul2 = 0xc2b2ae3d27d4eb4f
)

// wordRest goes on with a word that reaches a non-ASCII byte at text[j],
// rune by rune, up to the first character that is no word character or
// is one of a script written without spaces (unspaced), passing over
// the invisible characters.
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
		if r == utf8.RuneError && size == 1 || !isWord(r) || unspaced(r) {
			if invisible(r) {
				j += size // read as if absent: the word goes on
				continue
			}
			break // a character of a script without spaces is a word of its own
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

// high reads the token that starts with the non-ASCII byte at text[i]:
// tokSkip for an invisible character, which is no token.
func (s *Set) high(text string, i int) (uint32, int) {
	r, size := utf8.DecodeRuneInString(text[i:])
	switch {
	case r == utf8.RuneError && size == 1:
		return tokNone, i + 1
	case 0x3040 <= r && r <= 0x30ff, 0x4e00 <= r && r <= 0x9fff, 0xac00 <= r && r <= 0xd7a3:
		// Kana, the common ideographs and the Hangul syllables, most
		// of Japanese, Chinese and Korean text: no white space, and
		// each a token of its own, a word character or not.
	case unicode.IsSpace(r):
		return tokSpace, skipSpace(text, i+size)
	case isWord(r) && !unspaced(r):
		return s.wordRest(text, i, i, key{})
	case invisible(r):
		return tokSkip, i + size
	}
	// Another character, or one of a script written without spaces,
	// which is a word of its own and a token as another character is.
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
	k0, k1 := k.sum()
	if k1 == 0 {
		return s.findShort(k0).tok
	}
	mask := uint64(len(s.long) - 1)
	for h := s.longHome(k0, k1); ; h = (h + 1) & mask {
		sl := &s.long[h]
		if sl.k0 == k0 && sl.k1 == k1 && (k0 != longKey || s.same(text[i:j], sl.tok)) {
			return sl.tok
		}
		if sl.k0 == 0 {
			return tokNone
		}
	}
}

// same reports whether word folds to the phrase word of token tok. Only
// words of sixteen bytes and more need it: shorter keys are the bytes.
func (s *Set) same(word string, tok uint32) bool {
	w := s.arena[s.wordAt[tok-tokFirst]:s.wordAt[tok-tokFirst+1]]
	var buf [utf8.UTFMax]byte
	for _, r := range word {
		f := r
		if r >= utf8.RuneSelf {
			if invisible(r) {
				continue
			}
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

// key accumulates the folded UTF-8 bytes of a word in groups of eight,
// the first byte lowest. A word of up to fifteen bytes is its own key, the
// first two groups, zero-padded (no byte of a word is zero). A longer one
// is keyed by a hash and compared with the phrase word when the hash
// matches.
type key struct {
	g0, g1 uint64 // the first two groups
	h      uint64 // hash of the groups after those
	cur    uint64 // the incomplete group
	n      int    // bytes in all
}

// longKey is the first half of the key of a long word: 0xff is no byte of
// UTF-8, so it is nobody's first group.
const longKey = ^uint64(0)

// addGroup adds eight bytes; the key holds a multiple of eight.
func (k *key) addGroup(g uint64) {
	switch k.n {
	case 0:
		k.g0 = g
	case 8:
		k.g1 = g
	default:
		k.h = mix(k.h ^ g)
	}
	k.n += 8
}

func (k *key) addByte(c byte) {
	k.cur |= uint64(c) << (8 * (k.n & 7))
	if k.n++; k.n&7 == 0 {
		k.n -= 8
		k.addGroup(k.cur)
		k.cur = 0
	}
}

func (k *key) addRune(r rune) {
	var buf [utf8.UTFMax]byte
	for _, c := range buf[:utf8.EncodeRune(buf[:], r)] {
		k.addByte(c)
	}
}

// sum returns the key.
func (k *key) sum() (uint64, uint64) {
	switch {
	case k.n < 8:
		return k.cur, 0
	case k.n < 16:
		return k.g0, k.cur
	}
	return longKey, mix(k.h^k.cur^uint64(k.n)<<56) ^ mix(k.g0^mix(k.g1))
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
// at text[i], with the invisible characters in it and after it.
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
		if !unicode.IsSpace(r) && !invisible(r) {
			break
		}
		i += size
	}
	return i
}

// invisible reports whether r is a format character a reader does not
// see (core.Invisible), which the scan reads as if it were absent: it
// ends no word and breaks no run of white space.
func invisible(r rune) bool {
	return core.Invisible(r)
}

// isWord reports whether r is a word character (core.IsWordRune: a
// letter, a digit, '_' or a combining mark that extends the letter
// before it), reading an ASCII character from the table.
func isWord(r rune) bool {
	if r < utf8.RuneSelf {
		return asciiWord[r]
	}
	return core.IsWordRune(r)
}

// Tables of the ASCII characters, built from core's rules, so that the
// scan reads a byte's class and folded form with one load.
var asciiWord, asciiSpace, asciiLower = func() (word, space [utf8.RuneSelf]bool, lower [utf8.RuneSelf]byte) {
	for c := range utf8.RuneSelf {
		word[c] = core.IsWordRune(rune(c))
		space[c] = unicode.IsSpace(rune(c))
		lower[c] = byte(core.MatchFold(rune(c)))
	}
	return word, space, lower
}()
