package score

import (
	"unicode"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
)

// The matcher's reading of characters (package match: Fold and
// NeedsBoundary), which the nearness bonus has to share: the phrase is
// near a cue only where the matcher would find it there. Package match
// lies outside core, and core imports nothing outside it, so the rule is
// repeated here; words_test.go compares the two over every rune, so
// neither can change alone.

// foldRune folds r as the matcher compares characters: a typographic
// apostrophe (‘ ’ ‛) is the ASCII one, a full-width form of an ASCII
// character (U+FF01 to U+FF5E, all but the low line) is that character,
// and the result is folded by core.FoldRune.
func foldRune(r rune) rune {
	return core.FoldRune(variant(r))
}

// variant returns the ASCII character that r is a typed variant of, or r
// itself. Each variant is a word character exactly when its ASCII
// character is, which is why the full-width low line is left alone.
func variant(r rune) rune {
	switch {
	case r == '\u2018', r == '\u2019', r == '\u201b':
		return '\''
	case r >= '\uff01' && r <= '\uff5e' && r != '\uff3f':
		return r - ('\uff01' - '!')
	}
	return r
}

// needsBoundary reports whether r, as a phrase's first or last
// character, asks for no word character beside it in the text, and, as
// the text's character beside a phrase, is one: a word character of a
// script written with spaces between words. A character of Han,
// Hiragana, Katakana, Hangul, Thai, Lao, Khmer or Myanmar is a word of
// its own, so "東京" is found in "東京タワー" and "acme" in "acmeの新製品".
func needsBoundary(r rune) bool {
	return isWord(r) && !unspaced(r)
}

// isWord reports whether r is a word character: a letter, a digit, '_'
// or a combining mark.
func isWord(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '_'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)
}

// unspaced reports whether r, a word character, belongs to a script
// written without spaces between words (or is Hangul, whose particles
// attach to the noun before them), or is one of the marks written only
// with kana that Unicode assigns to no single script.
func unspaced(r rune) bool {
	if r < 0x0e00 {
		return false
	}
	if r < 0x2e80 {
		// Thai and Lao, Myanmar, Hangul Jamo, Khmer and its symbols.
		return r < 0x0f00 || 0x1000 <= r && r < 0x10a0 || 0x1100 <= r && r < 0x1200 ||
			0x1780 <= r && r < 0x1800 || 0x19e0 <= r && r < 0x1a00
	}
	return unicode.In(r, unspacedScripts...) || kanaMarks[r]
}

var unspacedScripts = []*unicode.RangeTable{
	unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
	unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar,
}

// kanaMarks: the kana repeat marks of vertical text, the masu mark, the
// combining voiced sound marks, the prolonged sound mark full width and
// half width, and the half-width voiced sound marks.
var kanaMarks = map[rune]bool{
	'\u3031': true, '\u3032': true, '\u3033': true, '\u3034': true, '\u3035': true,
	'\u303c': true, '\u3099': true, '\u309a': true,
	'\u30fc': true, '\uff70': true, '\uff9e': true, '\uff9f': true,
}
