package match

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
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
	alphabet := []string{"a", "b", "A", "é", "É", "σ", "ς", "Σ", "\u212a", "k", "1", "_", " ", "  ", "\t", "-", "+", "#", ".", "\u0301", "²", "🙂", "\xff", "\u00a0", "'", "’", "Ａ", "ａ", "＿"}
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
