package match

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// BenchmarkScanMixed is BenchmarkScan over posts that mix scripts, as
// posts from many countries do: Latin words with and without accents,
// Cyrillic, Greek, Arabic and Hebrew words, and runs of Japanese and
// Thai, with phrases of one to three words from the same vocabulary.
// Most of its words go rune by rune rather than through the ASCII fast
// path.
func BenchmarkScanMixed(b *testing.B) {
	posts, sets := mixedCorpus()
	for _, n := range []int{10, 1000} {
		s := sets[n]
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(posts) * 1000))
			hits := 0
			found := func(int) { hits++ }
			for b.Loop() {
				for _, p := range posts {
					s.Scan(p, found)
				}
			}
			b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
		})
	}
}

// mixedCorpus returns about 256 KB of mixed-script text in posts of
// about 1,000 bytes, each cut on a character, and sets of 10 and 1,000
// phrases.
func mixedCorpus() ([]string, map[int]*Set) {
	rng := rand.New(rand.NewPCG(5, 5))
	vocab := strings.Fields(`acme crm pricing support team release great slow
		café naïve über straße größe société déjà señor
		привет компания цена поддержка отличный медленно
		καλημέρα εταιρεία τιμή υποστήριξη
		مرحبا شركة السعر الدعم ممتاز
		שלום חברה מחיר תמיכה מצוין
		東京タワー ソニーの新製品 価格 サポート 新しい
		กรุงเทพ ราคา บริษัท ดีมาก`)
	var text strings.Builder
	for text.Len() < 1<<18 {
		text.WriteString(vocab[rng.IntN(len(vocab))])
		text.WriteString([]string{" ", " ", " ", " ", " ", ", ", ". ", "! "}[rng.IntN(8)])
	}
	var posts []string
	for t := text.String(); len(t) >= 1000; {
		n := 1000
		for n < len(t) && t[n]&0xc0 == 0x80 {
			n++
		}
		posts, t = append(posts, t[:n]), t[n:]
	}
	sets := map[int]*Set{}
	for _, n := range []int{10, 1000} {
		seen := map[string]bool{}
		var phrases []string
		for len(phrases) < n {
			words := make([]string, 1+rng.IntN(3))
			for j := range words {
				words[j] = vocab[rng.IntN(len(vocab))]
			}
			if p := strings.Join(words, " "); !seen[p] {
				seen[p] = true
				phrases = append(phrases, p)
			}
		}
		sets[n] = Compile(phrases)
	}
	return posts, sets
}
