package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"
)

// Every value below histTop has a bucket, the buckets follow one another
// without gap or overlap, and none is wider than 1/128 of its lowest
// value: the precision docs/performance/load.md states.
func TestHistogramBuckets(t *testing.T) {
	if histTop <= clientTimeout {
		t.Fatalf("histTop %s does not reach past the client's timeout %s", histTop, clientTimeout)
	}
	if got := bucket(uint64(histTop - 1)); got != histBuckets-1 {
		t.Fatalf("the last value below histTop is in bucket %d, want %d", got, histBuckets-1)
	}
	// Walk the bucket edges: each bucket's lowest value is the one after
	// the previous bucket's highest.
	var low uint64
	for i := range histBuckets {
		if got := bucket(low); got != i {
			t.Fatalf("value %d is in bucket %d, want %d", low, got, i)
		}
		// The next bucket's lowest value: the first above low in a later
		// bucket, or histTop.
		next := low + uint64(sort.Search(int(uint64(histTop)-low), func(k int) bool { return bucket(low+uint64(k)) > i }))
		width := next - low
		if low >= 128 && width*128 > low {
			t.Fatalf("bucket %d [%d, %d) is wider than 1/128 of %d", i, low, next, low)
		}
		if mid := bucketMid(i); mid < low || mid >= next {
			t.Fatalf("bucket %d [%d, %d) reads as %d, outside it", i, low, next, mid)
		}
		low = next
	}
	if low != uint64(histTop) {
		t.Fatalf("the buckets end at %d, want histTop %d", low, histTop)
	}
}

// Percentiles read from the histogram are the nearest-rank percentiles
// of the latencies themselves to within 1/256 (half a bucket), over
// latencies spread from 1 us to the client's timeout.
func TestHistogramPercentiles(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 2, 3, 99, 100, 101, 1000, 54321} {
		var h histogram
		ls := make([]time.Duration, n)
		for i := range ls {
			// log-uniform from 1 us to 10 s
			ls[i] = time.Duration(math.Exp(r.Float64()*math.Log(1e7))) * time.Microsecond
			h.add(ls[i])
		}
		slices.Sort(ls)
		for _, p := range []int{1, 50, 90, 99, 100} {
			want := ls[(n*p+99)/100-1]
			got := h.percentile(p)
			if (got - want).Abs() > want/256 {
				t.Errorf("%d latencies: p%d %s, want %s to within %s", n, p, got, want, want/256)
			}
		}
	}
}

// A latency past histTop, which the client's timeout should make
// impossible, is read as the longest seen rather than lost or
// understated; one latency reads as itself.
func TestHistogramEdges(t *testing.T) {
	var h histogram
	h.add(3 * time.Millisecond)
	if got := h.percentile(50); got != 3*time.Millisecond {
		t.Errorf("p50 of one latency of 3ms is %s", got)
	}
	h.add(histTop + time.Second)
	if got := h.percentile(99); got != histTop+time.Second {
		t.Errorf("p99 with the slowest past histTop is %s, want %s", got, histTop+time.Second)
	}
}

// The "all" row merges the kinds: the same as recording every latency
// into one histogram.
func TestHistogramMerge(t *testing.T) {
	var a, b, both histogram
	for i := 1; i <= 1000; i++ {
		d := time.Duration(i*i) * time.Microsecond
		if i%3 == 0 {
			a.add(d)
		} else {
			b.add(d)
		}
		both.add(d)
	}
	var m histogram
	m.merge(&a)
	m.merge(&b)
	if m != both {
		t.Errorf("merged: n %d min %s max %s, want n %d min %s max %s or different counts", m.n, m.min, m.max, both.n, both.min, both.max)
	}
}
