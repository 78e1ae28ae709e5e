package match

import "encoding/binary"

// classifyGo is classify64 in portable Go, eight bytes at a time with
// bit operations on 64-bit words.
func classifyGo(dst *[80]byte, src *[64]byte) (wm, hm uint64) {
	for g := 0; g < 64; g += 8 {
		x := binary.LittleEndian.Uint64(src[g:])
		hi := x & highs
		x7 := x ^ hi
		lower := x7 | lows*0x20
		alpha := geq(lower, 'a') &^ geq(lower, 'z'+1)
		under := geq(lower, 0x7f) &^ (x7 << 2 & highs) // '_' but not DEL
		digit := geq(x7, '0') &^ geq(x7, '9'+1)
		upper := (geq(x7, 'A') &^ geq(x7, 'Z'+1)) &^ hi
		wm |= movemask((alpha|under|digit)&^hi) << g
		hm |= movemask(hi) << g
		binary.LittleEndian.PutUint64(dst[g:], x|upper>>2)
	}
	return wm, hm
}
