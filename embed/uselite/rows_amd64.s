//go:build amd64 && !purego

#include "textflag.h"

// Row operations of the forward pass on AVX-512, each bit for bit the Go
// loop it replaces (named in each comment; TestRowOps checks them): the
// same float32 operations per element in the same order, none fused.

// func bf16SwapAVX512(x *float32, n int, dst *float32)
// bf16SwapGo for n a positive multiple of 16: each x rounded to bfloat16
// (to nearest even, as toBF16), widened back, each pair swapped.
TEXT ·bf16SwapAVX512(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVQ dst+16(FP), DI
	SHRQ $4, CX
	MOVL $0x7fff, AX
	VPBROADCASTD AX, Z30
	MOVL $1, AX
	VPBROADCASTD AX, Z29
	MOVL $0xffff0000, AX
	VPBROADCASTD AX, Z28

bfloop:
	VMOVDQU32 (SI), Z0
	VPSRLD $16, Z0, Z1
	VPANDD Z29, Z1, Z1
	VPADDD Z30, Z0, Z0
	VPADDD Z1, Z0, Z0
	VPANDD Z28, Z0, Z0
	VPSHUFD $0xb1, Z0, Z0
	VMOVDQU32 Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNZ bfloop
	VZEROUPPER
	RET

// func rowSums4(p0, p1, p2, p3 *float32, d int, out *float32)
// sum32 of four rows of d floats (d a positive multiple of 4): each row's
// four running sums are one XMM register's lanes, s_l += x[i+l], then
// (s0+s1)+(s2+s3). The four rows run interleaved to hide the add latency.
TEXT ·rowSums4(SB), NOSPLIT, $0-48
	MOVQ p0+0(FP), AX
	MOVQ p1+8(FP), BX
	MOVQ p2+16(FP), CX
	MOVQ p3+24(FP), DX
	MOVQ d+32(FP), SI
	SHRQ $2, SI
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X2, X2, X2
	VXORPS X3, X3, X3
	XORQ DI, DI

sumloop:
	VADDPS (AX)(DI*1), X0, X0
	VADDPS (BX)(DI*1), X1, X1
	VADDPS (CX)(DI*1), X2, X2
	VADDPS (DX)(DI*1), X3, X3
	ADDQ $16, DI
	DECQ SI
	JNZ sumloop

	MOVQ out+40(FP), DI
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, 0(DI)
	VHADDPS X1, X1, X1
	VHADDPS X1, X1, X1
	VMOVSS X1, 4(DI)
	VHADDPS X2, X2, X2
	VHADDPS X2, X2, X2
	VMOVSS X2, 8(DI)
	VHADDPS X3, X3, X3
	VHADDPS X3, X3, X3
	VMOVSS X3, 12(DI)
	RET

// func rowSqDev4(p0, p1, p2, p3 *float32, d int, mean *float32, out *float32)
// layerNorm's variance sums of four rows: a = x-mean, a·a rounded, added
// to the lane's running sum (lanes as in rowSums4), then (v0+v1)+(v2+v3).
TEXT ·rowSqDev4(SB), NOSPLIT, $0-56
	MOVQ p0+0(FP), AX
	MOVQ p1+8(FP), BX
	MOVQ p2+16(FP), CX
	MOVQ p3+24(FP), DX
	MOVQ d+32(FP), SI
	SHRQ $2, SI
	MOVQ mean+40(FP), DI
	VBROADCASTSS 0(DI), X4
	VBROADCASTSS 4(DI), X5
	VBROADCASTSS 8(DI), X6
	VBROADCASTSS 12(DI), X7
	VXORPS X0, X0, X0
	VXORPS X1, X1, X1
	VXORPS X2, X2, X2
	VXORPS X3, X3, X3
	XORQ DI, DI

sqloop:
	VMOVUPS (AX)(DI*1), X8
	VMOVUPS (BX)(DI*1), X9
	VMOVUPS (CX)(DI*1), X10
	VMOVUPS (DX)(DI*1), X11
	VSUBPS X4, X8, X8
	VSUBPS X5, X9, X9
	VSUBPS X6, X10, X10
	VSUBPS X7, X11, X11
	VMULPS X8, X8, X8
	VMULPS X9, X9, X9
	VMULPS X10, X10, X10
	VMULPS X11, X11, X11
	VADDPS X8, X0, X0
	VADDPS X9, X1, X1
	VADDPS X10, X2, X2
	VADDPS X11, X3, X3
	ADDQ $16, DI
	DECQ SI
	JNZ sqloop

	MOVQ out+48(FP), DI
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0
	VMOVSS X0, 0(DI)
	VHADDPS X1, X1, X1
	VHADDPS X1, X1, X1
	VMOVSS X1, 4(DI)
	VHADDPS X2, X2, X2
	VHADDPS X2, X2, X2
	VMOVSS X2, 8(DI)
	VHADDPS X3, X3, X3
	VHADDPS X3, X3, X3
	VMOVSS X3, 12(DI)
	RET

// func lnApplyAVX512(x, y *float32, d int, scale, bias *float32, mean, r float32)
// layerNorm's last step for one row, d a positive multiple of 16:
// y = float32(float32(scale·r)·(x−mean)) + bias.
TEXT ·lnApplyAVX512(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ d+16(FP), CX
	SHRQ $4, CX
	MOVQ scale+24(FP), AX
	MOVQ bias+32(FP), BX
	VBROADCASTSS mean+40(FP), Z30
	VBROADCASTSS r+44(FP), Z31

lnloop:
	VMULPS (AX), Z31, Z0
	VMOVUPS (SI), Z1
	VSUBPS Z30, Z1, Z1
	VMULPS Z1, Z0, Z0
	VADDPS (BX), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	ADDQ $64, AX
	ADDQ $64, BX
	DECQ CX
	JNZ lnloop
	VZEROUPPER
	RET

// func colSumAVX512(x *float32, n, d, ldx int, inv float32, dst *float32)
// colMean for d a positive multiple of 128 and n ≥ 1: dst = x[0], then
// dst += x[t] for t = 1..n-1 (one chain per column, in row order), then
// dst *= inv; 128 columns at a time in eight registers.
TEXT ·colSumAVX512(SB), NOSPLIT, $0-48
	MOVQ x+0(FP), SI
	MOVQ d+16(FP), R8
	SHRQ $7, R8
	MOVQ ldx+24(FP), DX
	SHLQ $2, DX
	VBROADCASTSS inv+32(FP), Z31
	MOVQ dst+40(FP), DI

colblock:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS 128(SI), Z2
	VMOVUPS 192(SI), Z3
	VMOVUPS 256(SI), Z4
	VMOVUPS 320(SI), Z5
	VMOVUPS 384(SI), Z6
	VMOVUPS 448(SI), Z7
	MOVQ n+8(FP), CX
	DECQ CX
	JZ colscale
	MOVQ SI, AX

colrow:
	ADDQ DX, AX
	VADDPS (AX), Z0, Z0
	VADDPS 64(AX), Z1, Z1
	VADDPS 128(AX), Z2, Z2
	VADDPS 192(AX), Z3, Z3
	VADDPS 256(AX), Z4, Z4
	VADDPS 320(AX), Z5, Z5
	VADDPS 384(AX), Z6, Z6
	VADDPS 448(AX), Z7, Z7
	DECQ CX
	JNZ colrow

colscale:
	VMULPS Z31, Z0, Z0
	VMULPS Z31, Z1, Z1
	VMULPS Z31, Z2, Z2
	VMULPS Z31, Z3, Z3
	VMULPS Z31, Z4, Z4
	VMULPS Z31, Z5, Z5
	VMULPS Z31, Z6, Z6
	VMULPS Z31, Z7, Z7
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	VMOVUPS Z4, 256(DI)
	VMOVUPS Z5, 320(DI)
	VMOVUPS Z6, 384(DI)
	VMOVUPS Z7, 448(DI)
	ADDQ $512, SI
	ADDQ $512, DI
	DECQ R8
	JNZ colblock
	VZEROUPPER
	RET

// func addRowsAVX512(c *float32, n, ldc int, row *float32, d int)
// addRows for d a positive multiple of 16: c[t][i] += row[i].
TEXT ·addRowsAVX512(SB), NOSPLIT, $0-40
	MOVQ c+0(FP), DI
	MOVQ n+8(FP), R8
	MOVQ ldc+16(FP), DX
	SHLQ $2, DX
	MOVQ row+24(FP), BX

addrow:
	MOVQ d+32(FP), CX
	SHRQ $4, CX
	XORQ AX, AX

addcol:
	VMOVUPS (DI)(AX*1), Z0
	VADDPS (BX)(AX*1), Z0, Z0
	VMOVUPS Z0, (DI)(AX*1)
	ADDQ $64, AX
	DECQ CX
	JNZ addcol
	ADDQ DX, DI
	DECQ R8
	JNZ addrow
	VZEROUPPER
	RET

// func packKeysAVX512(src *float32, ld, n, hd, np int, dst *float32)
// attendSeq's key panels: for each of np/32 panels of 32 tokens, hd rows
// of the panel's 32 tokens' values of one dimension, dst[p·hd·32+k·32+j] =
// src[(32p+j)·ld+k], zero for tokens at or past n; sixteen tokens per
// gather.
TEXT ·packKeysAVX512(SB), NOSPLIT, $0-48
	MOVQ src+0(FP), SI
	MOVQ ld+8(FP), DX
	MOVQ n+16(FP), R8
	MOVQ hd+24(FP), R9
	MOVQ np+32(FP), R10
	SHRQ $4, R10 // halves of panels left
	MOVQ dst+40(FP), DI
	// Z1: token offsets 0, ld, ..., 15·ld (elements)
	MOVL DX, AX
	VPBROADCASTD AX, Z2
	MOVL $0, AX
	VPBROADCASTD AX, Z1
	MOVQ $0x0706050403020100, AX
	VMOVQ AX, X3
	MOVQ $0x0f0e0d0c0b0a0908, AX
	VPINSRQ $1, AX, X3, X3
	VPMOVZXBD X3, Z3
	VPMULLD Z2, Z3, Z1
	MOVQ DX, R11
	SHLQ $6, R11 // 16 tokens of ld floats, in bytes
	XORQ R12, R12 // half index (0: tokens 0–15 of the panel, 1: 16–31)

khalf:
	// mask of the valid tokens among these 16: min(max(n,0),16) low bits
	MOVQ R8, CX
	CMPQ CX, $16
	JLE kmask
	MOVQ $16, CX

kmask:
	XORQ AX, AX
	TESTQ CX, CX
	JLE kmaskset
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX

kmaskset:
	MOVQ SI, BX // this half's first token, dimension 0
	MOVQ DI, R13
	MOVQ R9, CX

kdim:
	VPXORD Z0, Z0, Z0
	KMOVW AX, K1
	VGATHERDPS (BX)(Z1*4), K1, Z0
	VMOVUPS Z0, (R13)
	ADDQ $4, BX
	ADDQ $128, R13
	DECQ CX
	JNZ kdim

	SUBQ $16, R8
	ADDQ R11, SI
	XORQ $1, R12
	JNZ knexthalf
	// a panel is done: the next one starts hd rows of 32 further on
	MOVQ R9, AX
	SHLQ $7, AX
	ADDQ AX, DI
	SUBQ $64, DI
	JMP knext

knexthalf:
	ADDQ $64, DI

knext:
	DECQ R10
	JNZ khalf
	VZEROUPPER
	RET
