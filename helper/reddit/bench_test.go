package reddit_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/earshothq/earshot/helper"
	"github.com/earshothq/earshot/helper/reddit"
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
)

// BenchmarkPasses runs passes over 2,000 phrases in 500 communities
// against the fakes, every listing answering a full page of 100 new
// posts of 1 KB each time, and reports the helper's peak heap over the
// run and the process's peak RSS (the fakes included, as they share the
// process). Memory stays flat when the peak does not grow with b.N: the
// helper holds one batch and a listing's pages, never a pass's posts.
func BenchmarkPasses(b *testing.B) {
	g := newRig(b)
	var phrases []helper.Phrase
	for i := range 2000 {
		phrases = append(phrases, helper.Phrase{Phrase: "acme " + strconv.Itoa(i), Community: fmt.Sprintf("sub%03d", i%500)})
	}
	g.earshot.set(func(f *earshotFake) { f.phrases = phrases })
	var seq atomic.Int64
	text := strings.Repeat("acme is fine ", 80)
	g.reddit.answer = func(w http.ResponseWriter, r *http.Request) bool {
		subs := strings.Split(strings.Split(strings.TrimPrefix(r.URL.Path, "/r/"), "/")[0], "+")
		var sb strings.Builder
		sb.WriteString(`{"kind":"Listing","data":{"after":null,"children":[`)
		for i := range 100 {
			n := seq.Add(1)
			if i > 0 {
				sb.WriteByte(',')
			}
			fmt.Fprintf(&sb, `{"kind":"t3","data":{"id":"%s","name":"t3_%s","author":"ada","subreddit":"%s","title":"acme %d","selftext":"%s","created_utc":%d,"score":1,"num_comments":0,"permalink":"/r/%s/comments/%s/x/"}}`,
				strconv.FormatInt(n, 36), strconv.FormatInt(n, 36), subs[i%len(subs)], n, text, 1767225600+n, subs[i%len(subs)], strconv.FormatInt(n, 36))
		}
		sb.WriteString(`]}}`)
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(sb.String()))
		return true
	}
	// The fake server keeps only a count: its map would be the growth seen.
	g.earshot.set(func(f *earshotFake) { f.countOnly = true })
	for _, rd := range g.runner.Readers {
		rd.(*reddit.Reader).Pace = -1
	}
	var peak uint64
	var ms runtime.MemStats
	// The peak RSS is this benchmark's, not the peak since the process
	// began, where the kernel allows starting it afresh.
	_ = peakmem.ResetRSS(os.Getpid())
	b.ResetTimer()
	for b.Loop() {
		if err := g.runner.Pass(context.Background()); err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	peakmem.ReportRSS(b, "peak-RSS", os.Getpid())
	_, _, batches := g.earshot.snapshot()
	b.ReportMetric(float64(batches)/float64(b.N), "batches/pass")
}
