package matchbench

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	aho "github.com/petar-dambovaliev/aho-corasick"

	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/match"
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
)

var sizes = []int{10, 1_000, 10_000, 100_000}

// corpus is built once per test binary: about 10 MB of posts.
var corpus = sync.OnceValues(func() ([]string, int64) {
	posts := Corpus(10 << 20)
	var n int64
	for _, p := range posts {
		n += int64(len(p))
	}
	return posts, n
})

// kinds are the phrase sets measured, by name.
var kinds = []struct {
	name     string
	generate func(int) []string
}{{"dense", Phrases}, {"tracked", Tracked}}

var phraseSets = sync.OnceValue(func() map[string][]string {
	sets := map[string][]string{}
	for _, k := range kinds {
		for _, n := range sizes {
			sets[fmt.Sprint(k.name, "/", n)] = k.generate(n)
		}
	}
	return sets
})

// BenchmarkScan scans the whole corpus post by post, once per iteration,
// with each matcher, each kind of phrase set and each size. MB/s is
// corpus throughput; peak-heap-MB is the process's while it scans, the
// corpus and the matcher included.
func BenchmarkScan(b *testing.B) {
	posts, total := corpus()
	for _, k := range kinds {
		for _, n := range sizes {
			name := fmt.Sprint(k.name, "/", n)
			b.Run(name, func(b *testing.B) { benchScan(b, posts, total, n, phraseSets()[name]) })
		}
	}
}

// benchScan measures each matcher on one phrase set of n phrases.
func benchScan(b *testing.B, posts []string, total int64, n int, phrases []string) {
	b.Run("ours", func(b *testing.B) {
		set := match.Compile(phrases)
		hits := 0
		found := func(int) { hits++ }
		b.SetBytes(total)
		stop := peakmem.MeasureHeap(b)
		for b.Loop() {
			for _, p := range posts {
				set.Scan(p, found)
			}
		}
		stop()
		b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
	})
	b.Run("loop", func(b *testing.B) {
		if n > 10_000 {
			b.Skip("one search per phrase per post takes minutes at this size")
		}
		m := newLoop(phrases)
		hits := 0
		found := func(int) { hits++ }
		b.SetBytes(total)
		stop := peakmem.MeasureHeap(b)
		for b.Loop() {
			for _, p := range posts {
				m.scan(p, found)
			}
		}
		stop()
		b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
	})
	// The module's overlapping iterator, as its other ones lose
	// phrases that overlap a match they report.
	b.Run("module", func(b *testing.B) {
		ac := buildModule(phrases)
		hits := 0
		b.SetBytes(total)
		stop := peakmem.MeasureHeap(b)
		for b.Loop() {
			for _, p := range posts {
				it := ac.IterOverlapping(p)
				for m := it.Next(); m != nil; m = it.Next() {
					hits++
				}
			}
		}
		stop()
		b.ReportMetric(float64(hits)/float64(b.N), "hits/op")
	})
}

// TestAgree checks that the matcher and the per-phrase loop find the same
// phrases in the first posts of the corpus, so that the benchmarks compare
// equal work.
func TestAgree(t *testing.T) {
	posts, _ := corpus()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			phrases := phraseSets()[k.name+"/1000"]
			set, m := match.Compile(phrases), newLoop(phrases)
			matched := 0
			for _, p := range posts[:500] {
				var want []int
				m.scan(p, func(i int) { want = append(want, i) })
				if got := set.Find(p); !slices.Equal(got, want) {
					t.Fatalf("post %q: matcher found %v, loop %v", p, got, want)
				}
				matched += len(want)
			}
			if matched == 0 {
				t.Fatal("no phrase occurs in the posts")
			}
		})
	}
}

// BenchmarkCompile reports the build time and the retained memory per
// phrase of each automaton, and the process's peak heap while it
// builds them (peak-heap-MB).
func BenchmarkCompile(b *testing.B) {
	for _, n := range sizes {
		phrases := phraseSets()[fmt.Sprint("dense/", n)]
		b.Run(fmt.Sprintf("%d/ours", n), func(b *testing.B) {
			bytes := retained(func() any { return match.Compile(phrases) })
			start := time.Now()
			stop := peakmem.MeasureHeap(b)
			for b.Loop() {
				match.Compile(phrases)
			}
			took := time.Since(start)
			stop()
			b.ReportMetric(float64(took.Nanoseconds())/float64(b.N*n), "ns/phrase")
			b.ReportMetric(float64(bytes)/float64(n), "B/phrase")
		})
		b.Run(fmt.Sprintf("%d/module", n), func(b *testing.B) {
			bytes := retained(func() any { return buildModule(phrases) })
			start := time.Now()
			stop := peakmem.MeasureHeap(b)
			for b.Loop() {
				buildModule(phrases)
			}
			took := time.Since(start)
			stop()
			b.ReportMetric(float64(took.Nanoseconds())/float64(b.N*n), "ns/phrase")
			b.ReportMetric(float64(bytes)/float64(n), "B/phrase")
		})
	}
}

// retained returns the heap still in use by what build returns.
func retained(build func() any) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(v)
	if after.HeapAlloc < before.HeapAlloc {
		return 0
	}
	return after.HeapAlloc - before.HeapAlloc
}

func buildModule(phrases []string) aho.AhoCorasick {
	builder := aho.NewAhoCorasickBuilder(aho.Opts{
		AsciiCaseInsensitive: true,
		MatchOnlyWholeWords:  true,
		MatchKind:            aho.StandardMatch,
		DFA:                  true,
	})
	return builder.Build(phrases)
}

// loop is the baseline without an automaton: fold the post once, then
// look for each phrase in turn.
type loop struct {
	phrases     [][]byte
	left, right []bool // the phrase starts (ends) with a word character
	buf         []byte
}

func newLoop(phrases []string) *loop {
	m := &loop{}
	for _, p := range phrases {
		f := fold(nil, p)
		first, _ := utf8.DecodeRune(f)
		last, _ := utf8.DecodeLastRune(f)
		m.phrases = append(m.phrases, f)
		m.left = append(m.left, isWord(first))
		m.right = append(m.right, isWord(last))
	}
	return m
}

// scan calls found with each phrase that occurs in post.
func (m *loop) scan(post string, found func(int)) {
	m.buf = fold(m.buf[:0], post)
	t := m.buf
	for i, p := range m.phrases {
		for off := 0; ; {
			j := bytes.Index(t[off:], p)
			if j < 0 {
				break
			}
			at, end := off+j, off+j+len(p)
			if m.left[i] && at > 0 {
				if r, _ := utf8.DecodeLastRune(t[:at]); isWord(r) {
					off = at + 1
					continue
				}
			}
			if m.right[i] && end < len(t) {
				if r, _ := utf8.DecodeRune(t[end:]); isWord(r) {
					off = at + 1
					continue
				}
			}
			found(i)
			break
		}
	}
}

// fold appends s folded rune by rune, each run of white space as one
// space.
func fold(dst []byte, s string) []byte {
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space {
			dst = append(dst, ' ')
			space = false
		}
		dst = utf8.AppendRune(dst, core.FoldRune(r))
	}
	if space {
		dst = append(dst, ' ')
	}
	return dst
}

func isWord(r rune) bool {
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || unicode.In(r, unicode.Mn, unicode.Mc))
}
