package match

import "github.com/earshothq/earshot/core"

// unspaced reports whether r, a word character (isWord), belongs to a
// script written without spaces between words (core.Unspaced: Han,
// Hiragana, Katakana, Hangul, Thai, Lao, Khmer or Myanmar, and the marks
// used only with kana). Such a character is a word of its own to the
// matcher: a token of its own that needs no boundary beside it.
func unspaced(r rune) bool {
	return core.Unspaced(r)
}

// NeedsBoundary reports whether r needs a word boundary beside it where
// it is a phrase's first or last character, and breaks one where it is
// the text's character beside the phrase: whether it is a word
// character (a letter, a digit, '_' or a combining mark) of a script
// written with spaces between words. A phrase's edge needs a boundary
// only when both its own character there and the text's character
// beside it do: "acme" is not found in "acmes", but is found in
// "acme東京", and "東京" in "東京タワー", because a character of Han,
// Hiragana, Katakana, Hangul, Thai, Lao, Khmer or Myanmar is a word of
// its own. Whatever shows where a phrase was found (a highlight) judges
// the edges with it. The rule is core.NeedsBoundary, which the scorer
// shares.
func NeedsBoundary(r rune) bool {
	return core.NeedsBoundary(r)
}
