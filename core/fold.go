package core

import (
	"unicode"
	"unicode/utf8"
)

// The matcher's reading of characters, one rule for every reader: the
// matcher (package match) finds phrases by it, the text index of recent
// posts holds their words by it, the dashboard marks them by it, and the
// scorer (core/score) reads posts and judges a phrase near a cue by it.

// VariantRune returns the ASCII character that r is a typed variant of,
// or r itself: a typographic apostrophe (‘ ’ ‛) is ', and a full-width
// form of an ASCII character (U+FF01 to U+FF5E, all but the low line)
// is that character. Phones and word processors write the apostrophe as
// a quotation mark ("Joe’s"), and Japanese and Chinese input methods
// write Latin letters, digits and punctuation in their full-width forms
// ("ＡＣＭＥ"), which Unicode's compatibility normalisation (NFKC) reads
// as the ASCII ones: a reader sees the same word, so the matcher finds
// the same phrase. Each variant is a word character exactly when its
// ASCII character is: the full-width low line is no word character
// where '_' is one, so it is left as it is.
//
// FoldRune stays simple case folding; FoldKey, by which phrases are
// compared for duplicates, folds by this rule too (MatchFold).
func VariantRune(r rune) rune {
	switch {
	case r == '\u2018', r == '\u2019', r == '\u201b':
		return '\''
	case r >= '\uff01' && r <= '\uff5e' && r != '\uff3f':
		return r - ('\uff01' - '!')
	}
	return r
}

// TypedVariants returns, in order, every rune that VariantRune changes,
// so that a table of the characters a phrase uses can take in their
// variants too. The slice is the caller's.
func TypedVariants() []rune {
	rs := make([]rune, 0, 3+'\uff5e'-'\uff01')
	rs = append(rs, '\u2018', '\u2019', '\u201b')
	for r := rune('\uff01'); r <= '\uff5e'; r++ {
		if r != '\uff3f' {
			rs = append(rs, r)
		}
	}
	return rs
}

// MatchFold folds r as the matcher compares characters: its typed
// variant (VariantRune) folded by FoldRune. Two characters are the same
// to the matcher exactly when they fold equal; an Invisible character,
// which the matcher passes over, folds to itself.
func MatchFold(r rune) rune {
	return FoldRune(VariantRune(r))
}

// Invisible reports whether r is a format character a reader does not
// see, which the matcher reads as if it were absent, in a post and in a
// phrase: the soft hyphen (U+00AD), the zero-width space, non-joiner and
// joiner (U+200B to U+200D), the direction marks (U+200E, U+200F, and
// the Arabic letter mark U+061C), the bidirectional embeddings and
// overrides (U+202A to U+202E) and isolates (U+2066 to U+2069), the word
// joiner and the invisible operators (U+2060 to U+2064) and the byte
// order mark (U+FEFF). Web pages hyphenate with soft hyphens and
// zero-width spaces, posts that mix Hebrew or Arabic with Latin carry
// direction marks beside their spaces, pasted files start with a byte
// order mark: "ac\u00adme" reads "acme" and "acme\u200e crm" reads
// "acme crm", so the matcher finds "acme" and "acme crm" there.
//
// None parts words either. A zero-width space marks where a line may
// break, in a long word or address as much as between the words of Thai,
// Khmer or Lao, whose characters are words of their own to the matcher
// anyway (Unspaced), so it costs them nothing: read as a break, it would
// make "ac\u200bme", which reads "acme", two words. The joiners belong
// inside an emoji sequence (U+200D) or a Persian word (U+200C), which
// readers write with or without them.
//
// They are no word characters (IsWordRune) and no white space. FoldKey
// keeps them, so the key of every phrase stays what it was: a phrase that
// holds one inside ("ac\u00adme") is no duplicate of the phrase without it,
// though both are found in the same posts.
func Invisible(r rune) bool {
	if r < '\u200b' {
		return r == '\u00ad' || r == '\u061c'
	}
	return r <= '\u200f' || '\u202a' <= r && r <= '\u202e' || '\u2060' <= r && r <= '\u2069' && r != '\u2065' || r == '\ufeff'
}

// IsWordRune reports whether r is a word character to the matcher: a
// letter, a digit, '_' or a combining mark (Mn, Mc) that extends the
// letter before it. The variation selectors VS1 to VS16 (U+FE00 to
// U+FE0F) are marks too, but they choose how the character before them
// is drawn, mostly an emoji: phones write "❤️" as a heart and U+FE0F, and
// were that a word character, "acme" would not be found in "❤️acme".
func IsWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	if '\ufe00' <= r && r <= '\ufe0f' {
		return false
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

// NeedsBoundary reports whether r needs a word boundary beside it where
// it is a phrase's first or last character, and breaks one where it is
// the text's character beside the phrase: whether it is a word character
// (IsWordRune) of a script written with spaces between words. A phrase's
// edge needs a boundary only when both its own character there and the
// text's character beside it do: "acme" is not found in "acmes", but is
// found in "acme東京", and "東京" in "東京タワー", because a character of
// Han, Hiragana, Katakana, Hangul, Thai, Lao, Khmer or Myanmar is a word
// of its own (Unspaced).
func NeedsBoundary(r rune) bool {
	return IsWordRune(r) && !Unspaced(r)
}

// Unspaced reports whether r, a word character (IsWordRune), belongs to
// a script written without spaces between words: Han, Hiragana,
// Katakana, Hangul, Thai, Lao, Khmer or Myanmar, or is one of the marks
// used only with kana that Unicode assigns to no single script (see
// kanaMarks). Such a character is a word of its own to the matcher: a
// phrase needs no boundary beside it, so "東京" is found in "東京タワー",
// "ソニー" in "ソニーの新製品" and "삼성" in "삼성은" (Korean is written
// with spaces, but particles attach to the noun before them). Characters
// below U+0E00 (Latin, Greek, Cyrillic, Arabic, Hebrew, Devanagari and
// the rest) are never in these scripts, so the common case costs one
// comparison, small enough to be inlined where it is called.
func Unspaced(r rune) bool {
	return r >= 0x0e00 && unspacedHigh(r)
}

func unspacedHigh(r rune) bool {
	if r < 0x2e80 {
		// Thai and Lao, Myanmar, Hangul Jamo, Khmer and its symbols:
		// below the CJK blocks, no other character of these scripts.
		// Vietnamese, Greek and the rest of this range are spaced.
		return r < 0x0f00 || 0x1000 <= r && r < 0x10a0 || 0x1100 <= r && r < 0x1200 ||
			0x1780 <= r && r < 0x1800 || 0x19e0 <= r && r < 0x1a00
	}
	switch {
	case 0x3040 <= r && r <= 0x30ff, // Hiragana and Katakana, U+30FC among them
		0x4e00 <= r && r <= 0x9fff, // CJK Unified Ideographs
		0xac00 <= r && r <= 0xd7a3: // Hangul syllables
		return true
	}
	return unicode.In(r, unspacedScripts...) || kanaMarks[r]
}

// unspacedScripts are the scripts written without spaces between words,
// and Hangul, whose particles attach to the word before them.
var unspacedScripts = []*unicode.RangeTable{
	unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
	unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar,
}

// kanaMarks are the word characters written only with kana that Unicode
// puts in no single script (Common or Inherited): the combining voiced
// sound marks, the kana repeat marks of vertical text, the masu mark and
// the prolonged sound mark ー, full width and half width, and the
// half-width voiced sound marks.
var kanaMarks = map[rune]bool{
	'\u3031': true, '\u3032': true, '\u3033': true, '\u3034': true, '\u3035': true, // 〱〲〳〴〵
	'\u303c': true,                 // 〼
	'\u3099': true, '\u309a': true, // combining voiced and semi-voiced sound marks
	'\u30fc': true, '\uff70': true, // ー ｰ
	'\uff9e': true, '\uff9f': true, // ﾞ ﾟ
}
