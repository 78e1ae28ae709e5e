package main

import (
	"math/bits"
	"time"
)

// histogram counts latencies in log-linear buckets (the HDR histogram's
// layout), so a run of any length holds the same few thousand counters
// and its percentiles are still read to within 0.4%.
//
// Below 256 ns every nanosecond has its bucket. Above, each power of two
// [2^k, 2^(k+1)) is cut into 128 buckets of equal width, a width of at
// most 1/128 (0.8%) of any value in the bucket; a percentile read as
// the middle of its bucket is off by at most half of that. The buckets
// end at histTop, above the longest wait a request can have:
// clientTimeout ends every exchange, and the rest of a request's time
// (building a batch, scheduling) is small beside 7 s of margin. Anything
// longer counts in n alone, so a rank past the buckets reads as the
// longest latency seen.
type histogram struct {
	counts   [histBuckets]uint64
	n        uint64 // latencies, histTop or more among them
	min, max time.Duration
}

const (
	histSubBits = 7 // 128 buckets a power of two
	histTopBits = 34
	// histTop is 2^34 ns, about 17.2 s.
	histTop = time.Duration(1) << histTopBits
	// histBuckets: 256 one-nanosecond buckets, then 128 for each power
	// of two from 2^8 to 2^33 ns, 3,584 in all.
	histBuckets = 1<<(histSubBits+1) + (histTopBits-histSubBits-1)<<histSubBits
)

// bucket is the index of v's bucket, for 0 <= v < histTop.
func bucket(v uint64) int {
	if v < 1<<(histSubBits+1) {
		return int(v)
	}
	e := bits.Len64(v) - (histSubBits + 1) // v>>e is in [128, 256)
	return e<<histSubBits + int(v>>e)
}

// bucketMid is the middle of bucket i's range: the value it is read as.
func bucketMid(i int) uint64 {
	if i < 1<<(histSubBits+1) {
		return uint64(i)
	}
	e := i>>histSubBits - 1
	low := uint64(i-e<<histSubBits) << e
	return low + 1<<(e-1)
}

func (h *histogram) add(d time.Duration) {
	d = max(d, 0)
	if h.n == 0 || d < h.min {
		h.min = d
	}
	if h.n == 0 || d > h.max {
		h.max = d
	}
	h.n++
	if d >= histTop {
		return
	}
	h.counts[bucket(uint64(d))]++
}

// merge adds o's latencies to h's.
func (h *histogram) merge(o *histogram) {
	if o.n == 0 {
		return
	}
	if h.n == 0 || o.min < h.min {
		h.min = o.min
	}
	if h.n == 0 || o.max > h.max {
		h.max = o.max
	}
	h.n += o.n
	for i, c := range o.counts {
		h.counts[i] += c
	}
}

// percentile is the nearest-rank p-th percentile, the smallest latency
// that at least p% of them do not pass, to within half its bucket:
// read as the middle of the bucket the rank falls in, kept within the
// shortest and longest latencies seen. h is not empty.
func (h *histogram) percentile(p int) time.Duration {
	rank := (h.n*uint64(p) + 99) / 100
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(max(time.Duration(bucketMid(i)), h.min), h.max)
		}
	}
	return h.max
}
