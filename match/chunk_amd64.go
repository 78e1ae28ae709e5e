//go:build !purego

package match

// classify64 returns the masks of the ASCII word characters and of the
// non-ASCII bytes among the 64 bytes at src, the first byte lowest, and
// writes those bytes to dst[:64] with the ASCII capitals folded. This is
// classifyGo in SSE2, which every amd64 processor has, so no feature test:
// it takes under half the instructions (docs/adr/0009-matcher.md).
//
//go:noescape
func classify64(dst *[80]byte, src *byte) (wm, hm uint64)
