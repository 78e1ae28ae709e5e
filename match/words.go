package match

import (
	"strings"
	"unicode/utf8"
)

// AppendWords appends to dst the words of text as a text index should
// hold them so that a search for a phrase's Words finds every text the
// phrase matches: each run of word characters (letters, digits and
// combining marks, as the matcher reads them) folded as the matcher
// folds them (Fold: core.FoldRune of each typed variant), with one
// space before each word after the first of dst, the invisible
// characters left out as the matcher passes over them ("ac\u00adme" is
// "acme"). '_', a word character
// to the matcher, separates words here: an index tokenizer reads it as
// punctuation, and cutting a word at it in the text and in the phrase
// alike keeps every phrase's words in the same order in the texts it
// matches. Each character of a script written without spaces (Han,
// Hiragana, Katakana, Hangul, Thai, Lao, Khmer, Myanmar) is a word of
// its own, as it is to the matcher: "東京タワー" is "東 京 タ ワ ー", in
// which the words of "東京" follow one another. A text of those scripts
// grows by one space per character, a third of its bytes at most (each
// such character takes three or four bytes).
//
// So where the matcher finds a phrase, the phrase's words are words of
// the text one after another: the phrase's edges fall on word
// boundaries (or on characters that are not word characters, or on
// characters of scripts written without spaces), and what lies between
// its words in the text is exactly what lies between them in the
// phrase, which holds no word character. The converse need not hold
// ("c++" has the word "c", found in "c#" too), so what an index finds is
// checked with the matcher.
func AppendWords(dst []byte, text string) []byte {
	in := false
	for i := 0; i < len(text); {
		c := text[i]
		var r rune
		size := 1
		if c < utf8.RuneSelf {
			r = rune(c)
		} else {
			r, size = utf8.DecodeRuneInString(text[i:])
			if r == utf8.RuneError && size == 1 {
				r = ' ' // invalid UTF-8 is no word character
			}
		}
		i += size
		if r == '_' || !isWord(r) {
			// An invisible character neither ends the word nor
			// starts one, as to the matcher.
			in = in && invisible(r)
			continue
		}
		// A character of a script written without spaces is a word
		// of its own.
		solo := unspaced(r)
		if (!in || solo) && len(dst) > 0 {
			dst = append(dst, ' ')
		}
		in = !solo
		if r < utf8.RuneSelf {
			dst = append(dst, asciiLower[r])
		} else {
			dst = utf8.AppendRune(dst, Fold(r))
		}
	}
	return dst
}

// Words returns the words of text, as AppendWords writes them.
func Words(text string) []string {
	return strings.Fields(string(AppendWords(nil, text)))
}
