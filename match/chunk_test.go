package match

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// TestClassify checks classify64 (in assembly where there is one) against
// a byte-by-byte reading of the ASCII rules, on every byte value in every
// position and on random chunks.
func TestClassify(t *testing.T) {
	check := func(src *[64]byte) {
		t.Helper()
		var dst, dstGo [80]byte
		wm, hm := classify64(&dst, &src[0])
		wmGo, hmGo := classifyGo(&dstGo, src)
		var wantW, wantH uint64
		var want [80]byte
		for i, c := range src {
			switch {
			case c >= utf8.RuneSelf:
				wantH |= 1 << i
				want[i] = c
			default:
				if asciiWord[c] {
					wantW |= 1 << i
				}
				want[i] = asciiLower[c]
			}
		}
		if wm != wantW || hm != wantH || dst != want {
			t.Fatalf("classify64(%q) = %x, %x, %q; want %x, %x, %q", src[:], wm, hm, dst[:64], wantW, wantH, want[:64])
		}
		if wmGo != wantW || hmGo != wantH || dstGo != want {
			t.Fatalf("classifyGo(%q) = %x, %x, %q; want %x, %x, %q", src[:], wmGo, hmGo, dstGo[:64], wantW, wantH, want[:64])
		}
	}
	var src [64]byte
	for c := range 256 {
		for i := range src {
			src[i] = byte(c + i)
		}
		check(&src)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10_000 {
		for i := range src {
			src[i] = byte(rng.IntN(256))
		}
		check(&src)
	}
}
