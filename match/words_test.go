package match

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWords(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{"Hello, World!", []string{"hello", "world"}},
		{"c++ and C#", []string{"c", "and", "c"}},
		{"snake_case_name", []string{"snake", "case", "name"}},
		{"\u212aelvin STRASSE", []string{"kelvin", "strasse"}},
		{"x²y ½ Ⅻ", []string{"x", "y"}}, // other numbers are no word characters to the matcher
		{"cafe\u0301", []string{"cafe\u0301"}},
		{"a\xffb", []string{"a", "b"}},
		{"new\u00a0york\tcity\n\nnow", []string{"new", "york", "city", "now"}},
		{"🙂 #ai @bob e-mail", []string{"ai", "bob", "e", "mail"}},
		// A character of a script written without spaces is a word of
		// its own, next to a word of another script too.
		{"東京タワー", []string{"東", "京", "タ", "ワ", "ー"}},
		{"iPhoneを買った", []string{"iphone", "を", "買", "っ", "た"}},
		{"삼성은Galaxy", []string{"삼", "성", "은", "galaxy"}},
		{"ไก่ทอด", []string{"ไ", "ก", "\u0e48", "ท", "อ", "ด"}},
		{"ｿﾆｰ、ＡＣＭＥ", []string{"ｿ", "ﾆ", "ｰ", "acme"}},
	}
	for _, tt := range tests {
		if got := Words(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Words(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
	// Letters equal under simple folding give the same word.
	if a, b := Words("ΣΟΦΊΑ NAÏVE ς"), Words("σοφία naïve Σ"); !slices.Equal(a, b) {
		t.Errorf("folding: %q and %q", a, b)
	}
	if got := string(AppendWords(AppendWords(nil, "Title here"), "and body")); got != "title here and body" {
		t.Errorf("two texts: %q", got)
	}
}

// Wherever the matcher finds a phrase, the phrase's words are words of
// the text one after another: an index search for them never misses a
// post the phrase matches.
func TestWordsOfEveryMatch(t *testing.T) {
	alphabet := []string{"a", "b", "A", "é", "É", "σ", "ς", "Σ", "\u212a", "k", "1", "_", " ", "  ", "\t", "-", "+", "#", ".", "\u0301", "²", "🙂", "\xff", "\u00a0", "'", "’", "Ａ", "ａ", "＿",
		"東", "京", "ー", "ｶ", "\u3099", "삼", "은", "ก", "\u0e48"}
	rng := rand.New(rand.NewPCG(3, 4))
	random := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	contains := func(text, sub []string) bool {
		if len(sub) == 0 {
			return true
		}
		for i := 0; i+len(sub) <= len(text); i++ {
			if slices.Equal(text[i:i+len(sub)], sub) {
				return true
			}
		}
		return false
	}
	found := 0
	for range 20000 {
		phrase := random(1 + rng.IntN(4))
		text := random(rng.IntN(6)) + phrase + random(rng.IntN(6))
		if rng.IntN(3) == 0 {
			text = strings.ToUpper(text)
		}
		if len(Compile([]string{phrase}).Find(text)) == 0 {
			continue
		}
		found++
		if !contains(Words(text), Words(phrase)) {
			t.Fatalf("%q matches %q, but its words %q are not among %q", phrase, text, Words(phrase), Words(text))
		}
	}
	if found < 5000 {
		t.Fatalf("only %d matches checked", found)
	}
}

// TestWordsGrowth measures what a post of a script written without
// spaces costs the index: one word per character, and one space more
// per character, so its words take at most a third more bytes than its
// text. The posts are made up in the shape of ordinary news posts,
// repeated to the length a kept post reaches (core.MaxPostText
// characters).
func TestWordsGrowth(t *testing.T) {
	for _, sentence := range []string{
		"ソニーの新製品が発表された。東京タワーで新しいイベントが始まった。",
		"华为发布新款手机，我爱苹果手机。",
		"삼성은 새로운 스마트폰을 발표했다. ",
		"วันนี้ที่กรุงเทพมีฝนตกหนัก ",
	} {
		text := string([]rune(strings.Repeat(sentence, 2000))[:2000])
		words := AppendWords(nil, text)
		n := len(strings.Fields(string(words)))
		t.Logf("%d characters, %d bytes: %d words, %d bytes (%.2f×)", utf8.RuneCountInString(text), len(text), n, len(words), float64(len(words))/float64(len(text)))
		if len(words) > len(text)*4/3 {
			t.Errorf("%q…: words take %d bytes for %d of text", sentence, len(words), len(text))
		}
		if n > utf8.RuneCountInString(text) {
			t.Errorf("%q…: %d words for %d characters", sentence, n, utf8.RuneCountInString(text))
		}
	}
}
