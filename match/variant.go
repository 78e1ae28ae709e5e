package match

import "github.com/earshothq/earshot/core"

// variant returns the ASCII character that r is a typed variant of, or r
// itself. Phones and word processors write the apostrophe as a quotation
// mark ("Joe’s"), and Japanese and Chinese input methods write Latin
// letters, digits and punctuation in their full-width forms ("ＡＣＭＥ"),
// which Unicode's compatibility normalisation (NFKC) reads as the ASCII
// ones: a reader sees the same word, so the matcher finds the same
// phrase. Each variant is a word character exactly when its ASCII
// character is: the full-width low line is no word character where '_'
// is one, so it is left as it is.
//
// The rule is the matcher's own: core.FoldRune, by which phrases are
// compared for duplicates, stays simple case folding.
func variant(r rune) rune {
	switch {
	case r == '\u2018', r == '\u2019', r == '\u201b':
		return '\''
	case r >= '\uff01' && r <= '\uff5e' && r != '\uff3f':
		return r - ('\uff01' - '!')
	}
	return r
}

// Fold folds r as the matcher compares characters: its typed variant
// folded by core.FoldRune. Two characters are the same to the matcher
// exactly when they fold equal, so whatever shows where a phrase was
// found (a highlight) folds with it too.
func Fold(r rune) rune {
	return core.FoldRune(variant(r))
}

// typedVariants are the runes variant changes, so that a compiled set can map
// each to the folded character its phrases use.
var typedVariants = func() []rune {
	rs := []rune{'\u2018', '\u2019', '\u201b'}
	for r := rune('\uff01'); r <= '\uff5e'; r++ {
		if r != '\uff3f' {
			rs = append(rs, r)
		}
	}
	return rs
}()
