package app

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/earshothq/earshot/bench/matchbench"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
)

// benchPosts is matchbench's corpus (about 10 MB of posts) as the
// readers hand posts to Compiled.Match: every other post with a title
// (its first words, as a reddit post has one) and a body, the others a
// body alone (as most helper posts).
var benchPosts = sync.OnceValues(func() ([]core.Post, int64) {
	var posts []core.Post
	var n int64
	for i, text := range matchbench.Corpus(10 << 20) {
		p := core.Post{Author: "someone", Text: text, Likes: i % 7, Comments: i % 3}
		if i%2 == 0 {
			if cut := strings.IndexByte(text[min(len(text), 40):], ' '); cut >= 0 {
				p.Title, p.Text = text[:40+cut], text[40+cut+1:]
			}
		}
		posts = append(posts, p)
		n += int64(len(text))
	}
	return posts, n
})

// BenchmarkCompiledMatch measures Compiled.Match, as ingest and the
// reddit reader call it, over matchbench's corpus with 10,000 phrases of
// each of its two kinds (tracked: sparse matches, as a listening service
// sees; dense: nearly every word a phrase's), first without filters, then
// with half of the phrases filtered. MB/s is corpus throughput; the two
// runs side by side are the cost of the filters. peak-heap-MB is the
// process's while it matches, the compiled phrases and the corpus
// included.
//
//	go test -run '^$' -bench CompiledMatch -benchtime 3x -cpu 1 ./app
func BenchmarkCompiledMatch(b *testing.B) {
	posts, total := benchPosts()
	for _, kind := range []struct {
		name     string
		generate func(int) []string
	}{{"tracked", matchbench.Tracked}, {"dense", matchbench.Phrases}} {
		texts := kind.generate(10_000)
		for _, half := range []bool{false, true} {
			name := kind.name + "/10000/no-filters"
			if half {
				name = kind.name + "/10000/half-filtered"
			}
			b.Run(name, func(b *testing.B) {
				c := Compile(benchPhrases(texts, half))
				b.SetBytes(total)
				found := 0
				stop := peakmem.MeasureHeap(b)
				for b.Loop() {
					for _, p := range posts {
						found += len(c.Match(p, "", p.Title, p.Text))
					}
				}
				stop()
				b.ReportMetric(float64(found)/float64(b.N), "found/op")
			})
		}
	}
}

// benchPhrases returns the texts as listening phrases, every other one
// filtered when half is set: one to three exclude words and, for one in
// three, a require word, drawn from 300 words of the corpus vocabulary
// (an owner's noise words are few and shared by many phrases), an
// excluded author for one in four, a minimum of likes or comments for one
// in five, and title only for one in ten.
func benchPhrases(texts []string, half bool) []core.Phrase {
	rng := rand.New(rand.NewPCG(11, 11))
	vocab := matchbench.Vocabulary()
	pool := make([]string, 300)
	for i := range pool {
		pool[i] = vocab[rng.IntN(len(vocab))]
	}
	ps := make([]core.Phrase, len(texts))
	for i, t := range texts {
		ps[i] = core.Phrase{ID: fmt.Sprint("p", i), Phrase: t, Platform: core.X, Status: core.Listening}
		if !half || i%2 == 1 {
			continue
		}
		var f core.PhraseFilters
		for range 1 + rng.IntN(3) {
			f.Exclude = append(f.Exclude, pool[rng.IntN(len(pool))])
		}
		if rng.IntN(3) == 0 {
			f.Require = []string{pool[rng.IntN(len(pool))]}
		}
		if rng.IntN(4) == 0 {
			f.ExcludeAuthors = []string{"spammer"}
		}
		if rng.IntN(5) == 0 {
			f.MinLikes, f.MinComments = rng.IntN(3), rng.IntN(2)
		}
		f.TitleOnly = rng.IntN(10) == 0
		f, err := core.NewPhraseFilters(f)
		if err != nil {
			panic(err)
		}
		ps[i].Filters = f
	}
	return ps
}
