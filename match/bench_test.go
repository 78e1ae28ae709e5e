package match

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
)

// BenchmarkScan scans about 1 MB of post-like text, in posts of 1,000
// bytes, for sets of distinct phrases of one to three words drawn from the
// same vocabulary. bench/matchbench compares it with other matchers on a
// bigger corpus. Every benchmark here reports the process's peak heap
// while it runs (peak-heap-MB).
func BenchmarkScan(b *testing.B) {
	posts, sets := benchCorpus()
	for _, n := range []int{10, 1000, 10000} {
		s := sets[n]
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(posts) * 1000))
			hits := 0
			found := func(int) { hits++ }
			stop := peakmem.MeasureHeap(b)
			for b.Loop() {
				for _, p := range posts {
					s.Scan(p, found)
				}
			}
			stop()
			b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
		})
	}
}

// BenchmarkFind is BenchmarkScan through Find, as the service calls it:
// each post's distinct phrases, sorted.
func BenchmarkFind(b *testing.B) {
	posts, sets := benchCorpus()
	for _, n := range []int{10, 1000, 10000} {
		s := sets[n]
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(posts) * 1000))
			b.ReportAllocs()
			found := 0
			stop := peakmem.MeasureHeap(b)
			for b.Loop() {
				for _, p := range posts {
					found += len(s.Find(p))
				}
			}
			stop()
			b.ReportMetric(float64(found)/float64(b.N), "found/op")
		})
	}
}

// benchCorpus returns about 1 MB of post-like text in posts of 1,000
// bytes and sets of 10, 1,000 and 10,000 distinct phrases of one to
// three words drawn from the same vocabulary.
func benchCorpus() ([]string, map[int]*Set) {
	rng := rand.New(rand.NewPCG(3, 3))
	syllables := strings.Fields("ka lo mi ne su ta ri po be da fe go hu ji ku ma no pe ra si to vu wa ye zo")
	vocab := make([]string, 3000)
	for i := range vocab {
		var w strings.Builder
		for range 1 + rng.IntN(3) {
			w.WriteString(syllables[rng.IntN(len(syllables))])
		}
		if rng.IntN(50) == 0 {
			w.WriteString("é")
		}
		vocab[i] = w.String()
	}
	var text strings.Builder
	for text.Len() < 1<<20 {
		w := vocab[rng.IntN(len(vocab))]
		if rng.IntN(10) == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		}
		text.WriteString(w)
		text.WriteString([]string{" ", " ", " ", " ", " ", " ", " ", " ", ", ", ". "}[rng.IntN(10)])
	}
	var posts []string
	for t := text.String(); len(t) >= 1000; t = t[1000:] {
		posts = append(posts, t[:1000])
	}

	sets := map[int]*Set{}
	for _, n := range []int{10, 1000, 10000} {
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

// BenchmarkFindNested is the worst case for the outputs: nested phrases
// ("a", "a a", ... up to n words) over 1 MB of "a a a ...", where every
// phrase ends at nearly every word. It reports what one Find allocates,
// which bounds the memory it can take at its peak: near the size of the
// phrase set, not words times phrases.
//
//	go test -run '^$' -bench FindNested ./match
func BenchmarkFindNested(b *testing.B) {
	text := strings.Repeat("a ", 1<<19)
	for _, n := range []int{10, 50, 100} {
		s := Compile(nested(n))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			var before, after runtime.MemStats
			stop := peakmem.MeasureHeap(b)
			runtime.ReadMemStats(&before)
			for b.Loop() {
				if got := s.Find(text); len(got) != n {
					b.Fatalf("found %d phrases, want %d", len(got), n)
				}
			}
			runtime.ReadMemStats(&after)
			stop()
			b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N), "alloc-B/op")
		})
	}
}
