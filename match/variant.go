package match

import "github.com/earshothq/earshot/core"

// Fold folds r as the matcher compares characters: its typed variant
// (core.VariantRune: a typographic apostrophe is ', a full-width form
// of an ASCII character is that character) folded by core.FoldRune. Two
// characters are the same to the matcher exactly when they fold equal,
// so whatever shows where a phrase was found (a highlight) folds with it
// too. The rule is core.MatchFold, which the scorer shares.
func Fold(r rune) rune {
	return core.MatchFold(r)
}

// typedVariants are the runes core.VariantRune changes, so that a
// compiled set can map each to the folded character its phrases use.
var typedVariants = core.TypedVariants()
