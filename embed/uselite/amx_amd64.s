//go:build amd64 && !purego

#include "textflag.h"

// The int8 product on AMX tiles (see amx_amd64.go). The Go assembler does
// not know the AMX instructions: they are written as bytes, each with its
// GNU as form (encodings taken from GNU as 2.40).
//
// Tiles (all 16 rows × 64 bytes, the configuration at cfg):
//   tmm0 tmm1 / tmm2 tmm3  the int32 sums of a 32-row × 32-column block
//   tmm4 tmm5              rows 0–15 and 16–31 of the block, 64 bytes of k
//   tmm6 tmm7              columns 0–15 and 16–31 of the panel, 16 groups
//                          of 4 k rows (the panel's 128-byte groups, so
//                          its rows are tile rows at stride 128)
//
// Registers: DI panel, SI block's first row, DX lda, R8/R9 the two A row
// pointers, R10 panel k pointer, R11 = 128, CX k steps left, BX the int32
// scratch, R12 panels left, R13 C row, AX scratch and tilestored stride.

// func amxGemm8(kb int, u *uint8, lda int, mb int, rows int, b *int8, np int, c *float32, ldc int, sa *float32, scale *float32, corr *int32, relu bool, tmp *int32, cfg *byte, start int, bias *float32)
//
// For each of np panels of 32 columns (kb·2048 bytes each) and each of mb
// blocks of 32 rows of u (stride lda bytes; rows past rows are computed
// but not stored): the exact int32 sums over kb·64 bytes of k, then
// c = c0 + float32(float32(float32(acc-corr)*scale)*sa), ReLU when set —
// kern8VNNI's epilogue, instruction for instruction — where c0 is, as
// start says, C (0), the bias row (1: C is only written) or C + bias (2).
//
// Frame: 0 C's first row at this panel's columns, 8 scale, 16 corr, 48
// bias (this panel's), 24 blocks left, 32 rows left, 40 sa of the next
// block's row.
TEXT ·amxGemm8(SB), NOSPLIT, $56-136
	MOVQ cfg+112(FP), AX
	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0x00 // ldtilecfg (%rax)
	MOVQ b+40(FP), DI
	MOVQ np+48(FP), R12
	MOVQ lda+16(FP), DX
	MOVQ c+56(FP), AX
	MOVQ AX, 0(SP)
	MOVQ scale+80(FP), AX
	MOVQ AX, 8(SP)
	MOVQ corr+88(FP), AX
	MOVQ AX, 16(SP)
	MOVQ bias+128(FP), AX
	MOVQ AX, 48(SP)
	VPXORD Z31, Z31, Z31

panel:
	MOVQ 8(SP), AX
	VMOVUPS (AX), Z18
	VMOVUPS 64(AX), Z19
	MOVQ 16(SP), AX
	VMOVDQU32 (AX), Z16
	VMOVDQU32 64(AX), Z17
	MOVQ start+120(FP), AX
	TESTQ AX, AX
	JZ nobias
	MOVQ 48(SP), AX
	VMOVUPS (AX), Z21
	VMOVUPS 64(AX), Z22

nobias:
	MOVQ mb+24(FP), AX
	MOVQ AX, 24(SP)
	MOVQ rows+32(FP), AX
	MOVQ AX, 32(SP)
	MOVQ sa+72(FP), AX
	MOVQ AX, 40(SP)
	MOVQ 0(SP), R13
	MOVQ u+8(FP), SI

block:
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc0 // tilezero %tmm0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xc8 // tilezero %tmm1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd0 // tilezero %tmm2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x49; BYTE $0xd8 // tilezero %tmm3
	MOVQ SI, R8
	MOVQ DX, R9
	SHLQ $4, R9
	ADDQ SI, R9
	MOVQ DI, R10
	MOVQ $128, R11
	MOVQ kb+0(FP), CX

kloop:
	BYTE $0xc4; BYTE $0xc2; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x10 // tileloadd (%r8,%rdx,1), %tmm4
	BYTE $0xc4; BYTE $0xc2; BYTE $0x7b; BYTE $0x4b; BYTE $0x2c; BYTE $0x11 // tileloadd (%r9,%rdx,1), %tmm5
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x1a // tileloadd (%r10,%r11,1), %tmm6
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x7c; BYTE $0x1a; BYTE $0x40 // tileloadd 0x40(%r10,%r11,1), %tmm7
	BYTE $0xc4; BYTE $0xe2; BYTE $0x49; BYTE $0x5e; BYTE $0xc4 // tdpbusd %tmm6, %tmm4, %tmm0
	BYTE $0xc4; BYTE $0xe2; BYTE $0x41; BYTE $0x5e; BYTE $0xcc // tdpbusd %tmm7, %tmm4, %tmm1
	BYTE $0xc4; BYTE $0xe2; BYTE $0x49; BYTE $0x5e; BYTE $0xd5 // tdpbusd %tmm6, %tmm5, %tmm2
	BYTE $0xc4; BYTE $0xe2; BYTE $0x41; BYTE $0x5e; BYTE $0xdd // tdpbusd %tmm7, %tmm5, %tmm3
	ADDQ $64, R8
	ADDQ $64, R9
	ADDQ $2048, R10
	DECQ CX
	JNZ kloop

	MOVQ tmp+104(FP), BX
	MOVQ $128, AX
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x03 // tilestored %tmm0, (%rbx,%rax,1)
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7a; BYTE $0x4b; BYTE $0x4c; BYTE $0x03; BYTE $0x40 // tilestored %tmm1, 0x40(%rbx,%rax,1)
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7a; BYTE $0x4b; BYTE $0x94; BYTE $0x03; BYTE $0x00; BYTE $0x08; BYTE $0x00; BYTE $0x00 // tilestored %tmm2, 0x800(%rbx,%rax,1)
	BYTE $0xc4; BYTE $0xe2; BYTE $0x7a; BYTE $0x4b; BYTE $0x9c; BYTE $0x03; BYTE $0x40; BYTE $0x08; BYTE $0x00; BYTE $0x00 // tilestored %tmm3, 0x840(%rbx,%rax,1)

	// epilogue: the block's first min(32, rows left) rows
	MOVQ 32(SP), R8
	MOVQ $32, CX
	CMPQ R8, CX
	CMOVQLT R8, CX
	SUBQ CX, R8
	MOVQ R8, 32(SP)
	MOVQ 40(SP), R9
	MOVQ ldc+64(FP), R10
	SHLQ $2, R10
	MOVQ BX, R11
	MOVBLZX relu+96(FP), AX
	MOVQ start+120(FP), BX

erow:
	VMOVDQU32 (R11), Z0
	VMOVDQU32 64(R11), Z1
	VPSUBD Z16, Z0, Z0
	VPSUBD Z17, Z1, Z1
	VCVTDQ2PS Z0, Z0
	VCVTDQ2PS Z1, Z1
	VMULPS Z18, Z0, Z0
	VMULPS Z19, Z1, Z1
	VBROADCASTSS (R9), Z20
	VMULPS Z20, Z0, Z0
	VMULPS Z20, Z1, Z1
	CMPQ BX, $1
	JEQ ebias
	JGT eaddbias
	VADDPS (R13), Z0, Z0
	VADDPS 64(R13), Z1, Z1
	JMP erelu

ebias:
	VADDPS Z21, Z0, Z0
	VADDPS Z22, Z1, Z1
	JMP erelu

eaddbias:
	VMOVUPS (R13), Z2
	VMOVUPS 64(R13), Z3
	VADDPS Z21, Z2, Z2
	VADDPS Z22, Z3, Z3
	VADDPS Z2, Z0, Z0
	VADDPS Z3, Z1, Z1

erelu:
	TESTL AX, AX
	JZ estore
	VMAXPS Z31, Z0, Z0
	VMAXPS Z31, Z1, Z1

estore:
	VMOVUPS Z0, (R13)
	VMOVUPS Z1, 64(R13)
	ADDQ $128, R11
	ADDQ $4, R9
	ADDQ R10, R13
	DECQ CX
	JNZ erow
	MOVQ R9, 40(SP)

	// next block: 32 rows of u further on
	MOVQ DX, AX
	SHLQ $5, AX
	ADDQ AX, SI
	DECQ 24(SP)
	JNZ block

	// next panel: B, scale, corr and C's columns move on
	MOVQ kb+0(FP), AX
	SHLQ $11, AX
	ADDQ AX, DI
	ADDQ $128, 0(SP)
	ADDQ $128, 8(SP)
	ADDQ $128, 16(SP)
	ADDQ $128, 48(SP)
	DECQ R12
	JNZ panel

	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0 // tilerelease
	VZEROUPPER
	RET
