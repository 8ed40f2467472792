//go:build amd64 && !purego

#include "textflag.h"

// In-place softmax over a row whose length is a multiple of the vector
// width (the caller pads with a large negative number). e^t, t = x - max,
// uses Cody–Waite reduction t = k·ln2 + r and the degree-6 polynomial of
// expf in forward.go, then scales by 2^k.

// expc: each constant replicated 8 times (32 bytes) so AVX2 code can use it
// as a memory operand; AVX-512 code broadcasts the first lane.
DATA expc<>+0(SB)/4, $0x3fb8aa3b
DATA expc<>+4(SB)/4, $0x3fb8aa3b
DATA expc<>+8(SB)/4, $0x3fb8aa3b
DATA expc<>+12(SB)/4, $0x3fb8aa3b
DATA expc<>+16(SB)/4, $0x3fb8aa3b
DATA expc<>+20(SB)/4, $0x3fb8aa3b
DATA expc<>+24(SB)/4, $0x3fb8aa3b
DATA expc<>+28(SB)/4, $0x3fb8aa3b
DATA expc<>+32(SB)/4, $0x3f318000
DATA expc<>+36(SB)/4, $0x3f318000
DATA expc<>+40(SB)/4, $0x3f318000
DATA expc<>+44(SB)/4, $0x3f318000
DATA expc<>+48(SB)/4, $0x3f318000
DATA expc<>+52(SB)/4, $0x3f318000
DATA expc<>+56(SB)/4, $0x3f318000
DATA expc<>+60(SB)/4, $0x3f318000
DATA expc<>+64(SB)/4, $0xb95e8083
DATA expc<>+68(SB)/4, $0xb95e8083
DATA expc<>+72(SB)/4, $0xb95e8083
DATA expc<>+76(SB)/4, $0xb95e8083
DATA expc<>+80(SB)/4, $0xb95e8083
DATA expc<>+84(SB)/4, $0xb95e8083
DATA expc<>+88(SB)/4, $0xb95e8083
DATA expc<>+92(SB)/4, $0xb95e8083
DATA expc<>+96(SB)/4, $0x39506967
DATA expc<>+100(SB)/4, $0x39506967
DATA expc<>+104(SB)/4, $0x39506967
DATA expc<>+108(SB)/4, $0x39506967
DATA expc<>+112(SB)/4, $0x39506967
DATA expc<>+116(SB)/4, $0x39506967
DATA expc<>+120(SB)/4, $0x39506967
DATA expc<>+124(SB)/4, $0x39506967
DATA expc<>+128(SB)/4, $0x3ab743ce
DATA expc<>+132(SB)/4, $0x3ab743ce
DATA expc<>+136(SB)/4, $0x3ab743ce
DATA expc<>+140(SB)/4, $0x3ab743ce
DATA expc<>+144(SB)/4, $0x3ab743ce
DATA expc<>+148(SB)/4, $0x3ab743ce
DATA expc<>+152(SB)/4, $0x3ab743ce
DATA expc<>+156(SB)/4, $0x3ab743ce
DATA expc<>+160(SB)/4, $0x3c088908
DATA expc<>+164(SB)/4, $0x3c088908
DATA expc<>+168(SB)/4, $0x3c088908
DATA expc<>+172(SB)/4, $0x3c088908
DATA expc<>+176(SB)/4, $0x3c088908
DATA expc<>+180(SB)/4, $0x3c088908
DATA expc<>+184(SB)/4, $0x3c088908
DATA expc<>+188(SB)/4, $0x3c088908
DATA expc<>+192(SB)/4, $0x3d2aa9c1
DATA expc<>+196(SB)/4, $0x3d2aa9c1
DATA expc<>+200(SB)/4, $0x3d2aa9c1
DATA expc<>+204(SB)/4, $0x3d2aa9c1
DATA expc<>+208(SB)/4, $0x3d2aa9c1
DATA expc<>+212(SB)/4, $0x3d2aa9c1
DATA expc<>+216(SB)/4, $0x3d2aa9c1
DATA expc<>+220(SB)/4, $0x3d2aa9c1
DATA expc<>+224(SB)/4, $0x3e2aaaaa
DATA expc<>+228(SB)/4, $0x3e2aaaaa
DATA expc<>+232(SB)/4, $0x3e2aaaaa
DATA expc<>+236(SB)/4, $0x3e2aaaaa
DATA expc<>+240(SB)/4, $0x3e2aaaaa
DATA expc<>+244(SB)/4, $0x3e2aaaaa
DATA expc<>+248(SB)/4, $0x3e2aaaaa
DATA expc<>+252(SB)/4, $0x3e2aaaaa
DATA expc<>+256(SB)/4, $0x3f000000
DATA expc<>+260(SB)/4, $0x3f000000
DATA expc<>+264(SB)/4, $0x3f000000
DATA expc<>+268(SB)/4, $0x3f000000
DATA expc<>+272(SB)/4, $0x3f000000
DATA expc<>+276(SB)/4, $0x3f000000
DATA expc<>+280(SB)/4, $0x3f000000
DATA expc<>+284(SB)/4, $0x3f000000
DATA expc<>+288(SB)/4, $0x3f800000
DATA expc<>+292(SB)/4, $0x3f800000
DATA expc<>+296(SB)/4, $0x3f800000
DATA expc<>+300(SB)/4, $0x3f800000
DATA expc<>+304(SB)/4, $0x3f800000
DATA expc<>+308(SB)/4, $0x3f800000
DATA expc<>+312(SB)/4, $0x3f800000
DATA expc<>+316(SB)/4, $0x3f800000
DATA expc<>+320(SB)/4, $0xc2aeac4f
DATA expc<>+324(SB)/4, $0xc2aeac4f
DATA expc<>+328(SB)/4, $0xc2aeac4f
DATA expc<>+332(SB)/4, $0xc2aeac4f
DATA expc<>+336(SB)/4, $0xc2aeac4f
DATA expc<>+340(SB)/4, $0xc2aeac4f
DATA expc<>+344(SB)/4, $0xc2aeac4f
DATA expc<>+348(SB)/4, $0xc2aeac4f
DATA expc<>+352(SB)/4, $0x0000007f
DATA expc<>+356(SB)/4, $0x0000007f
DATA expc<>+360(SB)/4, $0x0000007f
DATA expc<>+364(SB)/4, $0x0000007f
DATA expc<>+368(SB)/4, $0x0000007f
DATA expc<>+372(SB)/4, $0x0000007f
DATA expc<>+376(SB)/4, $0x0000007f
DATA expc<>+380(SB)/4, $0x0000007f
GLOBL expc<>(SB), RODATA|NOPTR, $384

// func softmaxAVX512(x *float32, n int)
// Requires n > 0, n % 16 == 0.
TEXT ·softmaxAVX512(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $4, CX

	// max
	MOVQ SI, DI
	MOVQ CX, DX
	VMOVUPS (DI), Z0
	ADDQ $64, DI
	DECQ DX
	JZ s512maxdone

s512max:
	VMAXPS (DI), Z0, Z0
	ADDQ $64, DI
	DECQ DX
	JNZ s512max

s512maxdone:
	VEXTRACTF64X4 $1, Z0, Y1
	VMAXPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS X1, X0, X0
	VBROADCASTSS X0, Z31

	VBROADCASTSS expc<>+0(SB), Z20
	VBROADCASTSS expc<>+32(SB), Z21
	VBROADCASTSS expc<>+64(SB), Z22
	VBROADCASTSS expc<>+96(SB), Z23
	VBROADCASTSS expc<>+128(SB), Z24
	VBROADCASTSS expc<>+160(SB), Z25
	VBROADCASTSS expc<>+192(SB), Z26
	VBROADCASTSS expc<>+224(SB), Z27
	VBROADCASTSS expc<>+256(SB), Z28
	VBROADCASTSS expc<>+288(SB), Z29
	VBROADCASTSS expc<>+320(SB), Z19
	VPXORD Z30, Z30, Z30
	MOVQ SI, DI
	MOVQ CX, DX

s512exp:
	VMOVUPS (DI), Z0
	VSUBPS Z31, Z0, Z0
	VMAXPS Z19, Z0, Z0
	VMULPS Z20, Z0, Z1
	VRNDSCALEPS $0, Z1, Z1
	VFNMADD231PS Z21, Z1, Z0
	VFNMADD231PS Z22, Z1, Z0
	VMOVAPS Z23, Z2
	VFMADD213PS Z24, Z0, Z2
	VFMADD213PS Z25, Z0, Z2
	VFMADD213PS Z26, Z0, Z2
	VFMADD213PS Z27, Z0, Z2
	VFMADD213PS Z28, Z0, Z2
	VMULPS Z0, Z0, Z3
	VFMADD213PS Z0, Z3, Z2
	VADDPS Z29, Z2, Z2
	VSCALEFPS Z1, Z2, Z2
	VMOVUPS Z2, (DI)
	VADDPS Z2, Z30, Z30
	ADDQ $64, DI
	DECQ DX
	JNZ s512exp

	VMOVAPS Z30, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VADDPS X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VADDPS X1, X0, X0
	VMOVSS expc<>+288(SB), X1
	VDIVSS X0, X1, X1
	VBROADCASTSS X1, Z1
	MOVQ SI, DI
	MOVQ CX, DX

s512scale:
	VMULPS (DI), Z1, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, DI
	DECQ DX
	JNZ s512scale
	VZEROUPPER
	RET

// func softmaxAVX2(x *float32, n int)
// Requires n > 0, n % 8 == 0.
TEXT ·softmaxAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	SHRQ $3, CX

	MOVQ SI, DI
	MOVQ CX, DX
	VMOVUPS (DI), Y0
	ADDQ $32, DI
	DECQ DX
	JZ s256maxdone

s256max:
	VMAXPS (DI), Y0, Y0
	ADDQ $32, DI
	DECQ DX
	JNZ s256max

s256maxdone:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4e, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VMAXPS X1, X0, X0
	VBROADCASTSS X0, Y15
	VXORPS Y14, Y14, Y14
	VMOVUPS expc<>+0(SB), Y13
	VMOVUPS expc<>+320(SB), Y12
	MOVQ SI, DI
	MOVQ CX, DX

s256exp:
	VMOVUPS (DI), Y0
	VSUBPS Y15, Y0, Y0
	VMAXPS Y12, Y0, Y0
	VMULPS Y13, Y0, Y1
	VROUNDPS $0, Y1, Y1
	VFNMADD231PS expc<>+32(SB), Y1, Y0
	VFNMADD231PS expc<>+64(SB), Y1, Y0
	VMOVUPS expc<>+96(SB), Y2
	VFMADD213PS expc<>+128(SB), Y0, Y2
	VFMADD213PS expc<>+160(SB), Y0, Y2
	VFMADD213PS expc<>+192(SB), Y0, Y2
	VFMADD213PS expc<>+224(SB), Y0, Y2
	VFMADD213PS expc<>+256(SB), Y0, Y2
	VMULPS Y0, Y0, Y3
	VFMADD213PS Y0, Y3, Y2
	VADDPS expc<>+288(SB), Y2, Y2
	VCVTPS2DQ Y1, Y4
	VPADDD expc<>+352(SB), Y4, Y4
	VPSLLD $23, Y4, Y4
	VMULPS Y4, Y2, Y2
	VMOVUPS Y2, (DI)
	VADDPS Y2, Y14, Y14
	ADDQ $32, DI
	DECQ DX
	JNZ s256exp

	VEXTRACTF128 $1, Y14, X1
	VADDPS X1, X14, X0
	VPERMILPS $0x4e, X0, X1
	VADDPS X1, X0, X0
	VPERMILPS $0xb1, X0, X1
	VADDPS X1, X0, X0
	VMOVSS expc<>+288(SB), X1
	VDIVSS X0, X1, X1
	VBROADCASTSS X1, Y1
	MOVQ SI, DI
	MOVQ CX, DX

s256scale:
	VMULPS (DI), Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, DI
	DECQ DX
	JNZ s256scale
	VZEROUPPER
	RET

