package match

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// benchText returns about size bytes of post-like text over a vocabulary
// of invented words, some capitalised, with punctuation and a few
// non-ASCII words.
func benchText(rng *rand.Rand, vocab []string, size int) string {
	var b strings.Builder
	for b.Len() < size {
		w := vocab[rng.IntN(len(vocab))]
		if rng.IntN(10) == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		b.WriteString(w)
		switch rng.IntN(12) {
		case 0:
			b.WriteString(", ")
		case 1:
			b.WriteString(". ")
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func benchVocab(rng *rand.Rand, n int) []string {
	parts := strings.Fields("ka lo mi ne su ta ri po be da fe go hu ji ku ma no pe ra si to vu wa ye zo")
	vocab := make([]string, n)
	for i := range vocab {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		if rng.IntN(50) == 0 {
			b.WriteString("é")
		}
		vocab[i] = b.String()
	}
	return vocab
}

// BenchmarkScan scans 1 MB of text, cut into posts of about 1,000 bytes,
// for phrase sets of several sizes.
func BenchmarkScan(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 3))
	vocab := benchVocab(rng, 3000)
	text := benchText(rng, vocab, 1<<20)
	var posts []string
	for len(text) > 1000 {
		posts, text = append(posts, text[:1000]), text[1000:]
	}
	for _, n := range []int{10, 1000, 10000, 100000} {
		phrases := make([]string, n)
		for i := range phrases {
			words := make([]string, 1+rng.IntN(3))
			for j := range words {
				words[j] = vocab[rng.IntN(len(vocab))]
			}
			phrases[i] = strings.Join(words, " ")
		}
		s := Compile(phrases)
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
