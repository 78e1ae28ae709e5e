package app

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/earshothq/earshot/adapters/gormstore"
	"github.com/earshothq/earshot/core"
	"github.com/earshothq/earshot/ports"
	"github.com/earshothq/earshot/testkit/benchtest/peakmem"
	"github.com/earshothq/earshot/testkit/dbtest"
)

// zipfScenario is a simulated deployment: n watched communities whose post
// rates follow Zipf's law (the k-th busiest posts top/k as often as the
// busiest), read every 10 minutes on reddit's keyless or OAuth budget.
type zipfScenario struct {
	name     string
	n        int
	oauth    bool
	maxGroup int // 1: one community a request, the baseline
	// keyless is the keyless budget in requests a minute, reddit's and the
	// source's; 0: reddit's published 10.
	keyless int
}

// Rates of the busiest community, per 10-minute cycle. A community with
// more than reddit's listing holds (about 1,000 items) between two reads
// cannot be read whole from listings at all; these stay well inside.
const (
	zipfTopPosts    = 60
	zipfTopComments = 240
	zipfInterval    = 10 * time.Minute
	zipfWarmup      = 3 // cycles to learn the rates, not measured
	zipfMeasured    = 6
)

type zipfResult struct {
	perCycle, requests, missed, posts float64
	// waitMedian and waitP99 are how long a post waited from its making
	// to its match, in minutes, over the posts matched.
	waitMedian, waitP99 float64
}

// matchTimes is a match store that notes when each post was first
// matched, on the simulation's clock.
type matchTimes struct {
	ports.MatchStore
	clock *simClock
	at    map[string]time.Time
}

func (m *matchTimes) SaveMatches(ctx context.Context, owner string, p core.Platform, batch []ports.PostMatches) (ports.SaveResult, error) {
	for _, b := range batch {
		if _, ok := m.at[b.Post.ExternalID]; !ok {
			m.at[b.Post.ExternalID] = m.clock.Now()
		}
	}
	return m.MatchStore.SaveMatches(ctx, owner, p, batch)
}

// BenchmarkRedditZipf runs the poller against a fake reddit that enforces
// its budget (10 requests a minute keyless, 100 with OAuth) for
// zipfWarmup+zipfMeasured simulated cycles and reports, per measured
// cycle, the communities read whole in both listings and the requests
// used, and in all the posts missed: made before the last two cycles and
// never matched. The baseline reads one community a request.
// peak-heap-MB and peak-RSS-MB are this process's over the cycles of the
// last run (the fake reddit and the SQLite in memory share it).
func BenchmarkRedditZipf(b *testing.B) {
	for _, sc := range []zipfScenario{
		{name: "keyless-1000-one-per-request", n: 1000, maxGroup: 1},
		{name: "keyless-1000", n: 1000},
		{name: "keyless-1000-1-per-minute", n: 1000, keyless: 1},
		{name: "oauth-10000", n: 10000, oauth: true},
	} {
		b.Run(sc.name, func(b *testing.B) {
			var res zipfResult
			for b.Loop() {
				res = simulateZipf(b, sc)
			}
			b.ReportMetric(res.perCycle, "communities/cycle")
			b.ReportMetric(res.requests, "requests/cycle")
			b.ReportMetric(res.missed, "posts-missed")
			b.ReportMetric(res.posts, "posts-made")
			b.ReportMetric(res.waitMedian, "wait-median-min")
			b.ReportMetric(res.waitP99, "wait-p99-min")
		})
	}
}

func simulateZipf(b *testing.B, sc zipfScenario) zipfResult {
	b.StopTimer()
	ctx := context.Background()
	db := dbtest.Memory(b)
	phrases, matches := gormstore.NewPhraseStore(db), gormstore.NewMatchStore(db)
	// A hundred communities an owner: the plan check counts an owner's
	// phrases at every create, so one owner of them all would make the
	// set-up quadratic.
	var owners []string
	c := newSimClock()
	c.Set(time.Now())
	names := make([]string, sc.n)
	for i := range sc.n {
		if i%100 == 0 {
			o := core.Owner{Email: fmt.Sprintf("sim%d@example.com", i)}
			if err := gormstore.NewOwnerStore(db).CreateOwner(ctx, &o); err != nil {
				b.Fatal(err)
			}
			owners = append(owners, o.ID)
		}
		names[i] = fmt.Sprintf("sub%05d", i)
		p, err := core.NewPhrase(owners[len(owners)-1], "acme", "reddit", names[i])
		if err != nil {
			b.Fatal(err)
		}
		if _, err := phrases.CreatePhrase(ctx, &p, core.Limits{PhrasesPerPlatform: 100}, ports.Idempotency{}); err != nil {
			b.Fatal(err)
		}
	}
	f := newFakeReddit(b, c)
	f.perMinute = 10
	if sc.keyless > 0 {
		f.perMinute, f.keylessPerMinute = sc.keyless, sc.keyless
	}
	if sc.oauth {
		f.perMinute = 100
	}
	times := &matchTimes{MatchStore: matches, clock: c, at: map[string]time.Time{}}
	poller := NewReddit(RedditDeps{Phrases: phrases, Matches: times, Source: f.source(b, false, zipfInterval, sc.oauth),
		Checkpoints: gormstore.NewRedditStore(db), Leases: gormstore.NewLeaseStore(db), Clock: c, Log: quiet, Holder: "sim"})
	poller.maxGroup = sc.maxGroup

	rng := rand.New(rand.NewPCG(1, 2))
	made := map[string]time.Time{}
	var res zipfResult
	c.Advance(time.Second)
	stop := peakmem.Measure(b)
	b.StartTimer()
	for cycle := range zipfWarmup + zipfMeasured {
		start := c.Now()
		// The posts of the cycle to come, at random times within it.
		for i, name := range names {
			for _, l := range []struct {
				listing ports.RedditListing
				top     float64
			}{{ports.RedditPosts, zipfTopPosts}, {ports.RedditComments, zipfTopComments}} {
				for range poisson(rng, l.top/float64(i+1)) {
					at := start.Add(time.Duration(rng.Int64N(int64(zipfInterval))))
					made[f.add(name, l.listing, "acme", at, at, time.Time{})] = at
				}
			}
		}
		st, err := poller.Cycle(ctx, zipfInterval)
		if err != nil {
			b.Fatal(err)
		}
		if cycle >= zipfWarmup {
			res.perCycle += float64(st.Read) / zipfMeasured
			res.requests += float64(st.Requests) / zipfMeasured
		}
		c.Set(start.Add(zipfInterval))
	}
	b.StopTimer()
	stop()
	// Posts made before the last two cycles must all have been matched.
	cutoff := c.Now().Add(-2 * zipfInterval)
	seen := map[string]bool{}
	for _, owner := range owners {
		var before time.Time
		for {
			ms, more, err := matches.Matches(ctx, owner, ports.MatchFilter{MinScore: -1, Limit: 100, Before: before})
			if err != nil {
				b.Fatal(err)
			}
			for _, m := range ms {
				seen[m.Post.ExternalID] = true
			}
			if !more || len(ms) == 0 {
				break
			}
			before = ms[len(ms)-1].CreatedAt
		}
	}
	var waits []float64
	for id, at := range made {
		if at.Before(cutoff) {
			res.posts++
			if !seen[id] {
				res.missed++
			}
		}
		if m, ok := times.at[id]; ok {
			waits = append(waits, m.Sub(at).Minutes())
		}
	}
	if len(waits) > 0 {
		slices.Sort(waits)
		res.waitMedian = waits[len(waits)/2]
		res.waitP99 = waits[min(len(waits)*99/100, len(waits)-1)]
	}
	if _, _, tooMany := f.counts(); tooMany > 0 {
		b.Errorf("reddit answered 429 %d times: the pacing overspent the budget", tooMany)
	}
	b.StartTimer()
	return res
}

// poisson draws a Poisson count of mean m (Knuth's method; means here are
// small).
func poisson(rng *rand.Rand, m float64) int {
	if m > 30 {
		// A normal approximation keeps large means cheap.
		n := int(m + rng.NormFloat64()*math.Sqrt(m) + 0.5)
		return max(n, 0)
	}
	l, k, p := math.Exp(-m), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}
