//go:build !amd64 || purego

package match

import "unsafe"

// classify64 returns the masks of the ASCII word characters and of the
// non-ASCII bytes among the 64 bytes at src, the first byte lowest, and
// writes those bytes to dst[:64] with the ASCII capitals folded.
func classify64(dst *[80]byte, src *byte) (wm, hm uint64) {
	return classifyGo(dst, (*[64]byte)(unsafe.Pointer(src)))
}
