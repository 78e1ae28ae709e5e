package core_test

import (
	"slices"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/earshothq/earshot/core"
)

func TestVariantRune(t *testing.T) {
	for r, want := range map[rune]rune{
		'\u2018': '\'', '\u2019': '\'', '\u201b': '\'', '\uff07': '\'',
		'Ａ': 'A', 'ｚ': 'z', '１': '1', '＃': '#', '！': '!', '～': '~',
		'＿':      '＿', // the full-width low line is no word character, '_' is one
		'\u201c': '\u201c', '\u02bc': '\u02bc', '\uff00': '\uff00', '\uff5f': '\uff5f',
		'a': 'a', '\'': '\'', 'é': 'é', '東': '東',
	} {
		if got := core.VariantRune(r); got != want {
			t.Errorf("VariantRune(%U) = %U, want %U", r, got, want)
		}
	}
}

func TestMatchFold(t *testing.T) {
	for _, c := range []struct {
		a, b rune
		same bool
	}{
		{'A', 'a', true},
		{'Ａ', 'a', true},
		{'ａ', 'A', true},
		{'\u2019', '\'', true},
		{'\u212a', 'k', true}, // Kelvin sign
		{'Σ', 'ς', true},
		{'ß', 's', false},
		{'İ', 'i', false},
		{'＿', '_', false},
		{'\u02bc', '\'', false}, // the modifier letter apostrophe is a letter
	} {
		fa, fb := core.MatchFold(c.a), core.MatchFold(c.b)
		if (fa == fb) != c.same {
			t.Errorf("MatchFold(%U) = %U, MatchFold(%U) = %U; same = %v, want %v", c.a, fa, c.b, fb, fa == fb, c.same)
		}
	}
}

// TestTypedVariants checks that TypedVariants lists exactly the runes
// VariantRune changes, so a table built from it misses none.
func TestTypedVariants(t *testing.T) {
	var want []rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if core.VariantRune(r) != r {
			want = append(want, r)
		}
	}
	got := core.TypedVariants()
	if !slices.Equal(got, want) {
		t.Fatalf("TypedVariants() = %d runes, VariantRune changes %d", len(got), len(want))
	}
	got[0] = 'x'
	if core.TypedVariants()[0] == 'x' {
		t.Fatal("TypedVariants shares its slice with the caller")
	}
}

func TestNeedsBoundary(t *testing.T) {
	for r, want := range map[rune]bool{
		'a': true, 'Z': true, '7': true, '_': true, 'é': true, 'ы': true, '\u0301': true, 'ệ': true, 'Ａ': true,
		'東': false, 'の': false, 'ソ': false, 'ー': false, 'ｶ': false, '삼': false, 'ก': false, '\u0e48': false,
		'ລ': false, 'ក': false, 'က': false, '々': false, '\u3099': false,
		' ': false, '+': false, '#': false, '。': false, '、': false, '「': false, '😀': false, '＿': false, '\'': false, '\ufe0f': false, '\ufe00': false,
	} {
		if got := core.NeedsBoundary(r); got != want {
			t.Errorf("NeedsBoundary(%q) = %v, want %v", r, got, want)
		}
	}
}

// refUnspaced is Unspaced by the script tables alone, without the fast
// ranges.
func refUnspaced(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
		unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar) ||
		slices.Contains([]rune{'\u3031', '\u3032', '\u3033', '\u3034', '\u3035', '\u303c', '\u3099', '\u309a', '\u30fc', '\uff70', '\uff9e', '\uff9f'}, r)
}

// TestCharacterRulesEveryRune checks, over every code point, the fast
// paths against the plain rules, and that folding never moves a
// character from one side of the word and boundary rules to the other:
// the matcher judges the text's characters before folding, a phrase's
// after.
func TestCharacterRulesEveryRune(t *testing.T) {
	for r := rune(0); r <= utf8.MaxRune; r++ {
		word := (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Mc, r)) &&
			!('\ufe00' <= r && r <= '\ufe0f')
		if got := core.IsWordRune(r); got != word {
			t.Fatalf("IsWordRune(%U) = %v, want %v", r, got, word)
		}
		f := core.MatchFold(r)
		if core.NeedsBoundary(f) != core.NeedsBoundary(r) || core.IsWordRune(f) != word {
			t.Fatalf("%U %q folds to %U across the rule", r, r, f)
		}
		if core.MatchFold(f) != f {
			t.Fatalf("MatchFold not idempotent at %U: %U then %U", r, f, core.MatchFold(f))
		}
		if !word {
			if core.NeedsBoundary(r) {
				t.Fatalf("NeedsBoundary(%U) for a non-word character", r)
			}
			continue
		}
		if got, want := core.Unspaced(r), refUnspaced(r); got != want {
			t.Fatalf("Unspaced(%U %q) = %v, want %v", r, r, got, want)
		}
		if core.Unspaced(r) && r < 0x0e00 {
			t.Fatalf("%U is below U+0E00", r)
		}
		if core.NeedsBoundary(r) != !core.Unspaced(r) {
			t.Fatalf("NeedsBoundary(%U) = %v for a word character, Unspaced %v", r, core.NeedsBoundary(r), core.Unspaced(r))
		}
	}
}
