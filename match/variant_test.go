package match

import (
	"slices"
	"strings"
	"testing"
)

// TestTypedVariants checks that a phrase is found however a phone or an
// input method typed its characters: an apostrophe typed as the
// typographic one (iOS and word processors write "Joe’s" for "Joe's"),
// and Latin letters, digits and punctuation typed in their full-width
// forms (Japanese and Chinese input methods write "ＡＣＭＥ"), which
// Unicode's compatibility normalisation (NFKC) reads as the ASCII ones.
func TestTypedVariants(t *testing.T) {
	tests := []struct {
		name    string
		phrases []string
		texts   []string
		want    []int
	}{
		{"typographic apostrophe in the text", []string{"Trader Joe's"}, []string{"love trader joe’s!"}, []int{0}},
		{"typographic apostrophe in the phrase", []string{"McDonald’s"}, []string{"MCDONALD'S fries"}, []int{0}},
		{"left quote as an apostrophe", []string{"rock 'n' roll"}, []string{"rock ‘n’ roll"}, []int{0}},
		{"full-width apostrophe", []string{"joe's"}, []string{"joe＇s"}, []int{0}},
		{"apostrophe is still no letter", []string{"joe"}, []string{"joe’s", "o’joe"}, []int{0}},
		{"full-width word between marks", []string{"acme crm"}, []string{"「ＡＣＭＥ ＣＲＭ」"}, []int{0}},
		{"full-width phrase", []string{"ＡＣＭＥ"}, []string{"Acme rocks"}, []int{0}},
		{"mixed widths in a word", []string{"acme"}, []string{"aｃmＥ."}, []int{0}},
		{"full-width digits", []string{"iphone 15"}, []string{"iPhone １５ pro"}, []int{0}},
		{"full-width hashtag", []string{"#ai"}, []string{"＃ＡＩ news"}, []int{0}},
		{"full-width word still has edges", []string{"go"}, []string{"ｇｏｏｇｌｅ", "ａｇｏ"}, nil},
		{"full-width low line is no word character", []string{"go"}, []string{"＿go＿"}, []int{0}},
		{"long full-width word", []string{"internationalisation"}, []string{"ＩＮＴＥＲＮＡＴＩＯＮＡＬＩＳＡＴＩＯＮ"}, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range variants {
				if got := v.find(tt.phrases, tt.texts...); !slices.Equal(got, tt.want) {
					t.Errorf("%s: Find(%q) in %q = %v, want %v", v.name, tt.phrases, tt.texts, got, tt.want)
				}
			}
			if ref := refFind(tt.phrases, tt.texts...); !slices.Equal(ref, tt.want) {
				t.Errorf("reference: %v, want %v", ref, tt.want)
			}
		})
	}
}

// TestTypedVariantWords checks that the words a text index keeps of a
// post read its variants as the matcher does, so that a search of the
// index by a phrase's words finds the posts the matcher would match.
func TestTypedVariantWords(t *testing.T) {
	for _, tt := range []struct {
		text string
		want string
	}{
		{"ＡＣＭＥ ＣＲＭ１", "acme crm1"},
		{"Joe’s", "joe s"},
		{"ａ＿ｂ", "a b"},
	} {
		if got := strings.Join(Words(tt.text), " "); got != tt.want {
			t.Errorf("Words(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
