//go:build !purego

#include "textflag.h"

// GROUP classifies the 16 bytes at off(SI): their word mask goes to R8
// and their high-bit mask to R9 from bit off, and the bytes, folded, to
// off(DI). SSE2 has no unsigned byte comparison, so a byte b is taken to
// be in [lo, lo+n] when min(b-lo, n) == b-lo, bytes wrapping around.
// Letters are the bytes b with b|0x20 in ['a', 'z'], the capitals those
// in ['A', 'Z']; no byte of 0x80 and above falls in any range.
//
// Constants: X8 '_', X9 'A', X10 0x20, X11 'a', X12 25, X13 '0', X14 9.
// X15 is left alone: Go code keeps it zero.
#define GROUP(off) \
	MOVOU	off(SI), X0 \
	PMOVMSKB	X0, AX \
	MOVOU	X0, X1 \
	POR	X10, X1 \
	PSUBB	X11, X1 \
	MOVOU	X1, X2 \
	PMINUB	X12, X2 \
	PCMPEQB	X1, X2 \
	MOVOU	X0, X3 \
	PSUBB	X13, X3 \
	MOVOU	X3, X4 \
	PMINUB	X14, X4 \
	PCMPEQB	X3, X4 \
	MOVOU	X0, X5 \
	PCMPEQB	X8, X5 \
	POR	X4, X2 \
	POR	X5, X2 \
	PMOVMSKB	X2, BX \
	MOVOU	X0, X6 \
	PSUBB	X9, X6 \
	MOVOU	X6, X7 \
	PMINUB	X12, X7 \
	PCMPEQB	X6, X7 \
	PAND	X10, X7 \
	POR	X7, X0 \
	MOVOU	X0, off(DI) \
	SHLQ	$off, AX \
	SHLQ	$off, BX \
	ORQ	AX, R9 \
	ORQ	BX, R8

// func classify64(dst *[80]byte, src *byte) (wm, hm uint64)
TEXT ·classify64(SB), NOSPLIT, $0-32
	MOVQ	dst+0(FP), DI
	MOVQ	src+8(FP), SI
	MOVOU	c20<>(SB), X10
	MOVOU	ca<>(SB), X11
	MOVOU	c25<>(SB), X12
	MOVOU	c0<>(SB), X13
	MOVOU	c9<>(SB), X14
	MOVOU	cus<>(SB), X8
	MOVOU	cA<>(SB), X9
	XORQ	R8, R8
	XORQ	R9, R9
	GROUP(0)
	GROUP(16)
	GROUP(32)
	GROUP(48)
	MOVQ	R8, wm+16(FP)
	MOVQ	R9, hm+24(FP)
	RET

// BYTES16 defines name as sixteen copies of one byte, given as eight.
#define BYTES16(name, eight) \
	DATA name<>+0(SB)/8, $eight \
	DATA name<>+8(SB)/8, $eight \
	GLOBL name<>(SB), RODATA|NOPTR, $16

BYTES16(c20, 0x2020202020202020)
BYTES16(ca, 0x6161616161616161)
BYTES16(cA, 0x4141414141414141)
BYTES16(c25, 0x1919191919191919)
BYTES16(c0, 0x3030303030303030)
BYTES16(c9, 0x0909090909090909)
BYTES16(cus, 0x5f5f5f5f5f5f5f5f)
