//go:build amd64 && !purego

package uselite

import "golang.org/x/sys/cpu"

// Micro-kernels in gemm_amd64.s. Both compute
// C[0:mr][0:32] += A[0:mr][0:kc] · B[0:kc][0:32] with one fused multiply-add
// chain per element, B being kc consecutive rows of 32 floats, then clamp C
// at 0 when relu is set.

//go:noescape
func kernAVX512(kc int, a *float32, lda int, b *float32, c *float32, ldc int, relu bool)

//go:noescape
func kernAVX2(kc int, a *float32, lda int, b *float32, c *float32, ldc int, relu bool)

// In softmax_amd64.s: in-place softmax of n floats, n a positive multiple
// of 16 (AVX-512) or 8 (AVX2).

//go:noescape
func softmaxAVX512(x *float32, n int)

//go:noescape
func softmaxAVX2(x *float32, n int)

// In reduced_amd64.s: the reduced-precision kernels (8×32 tiles) and the
// row preparation, bit for bit as kernel8Go's callers, quant8Go, maxAbsGo
// and toBF16Go compute.

//go:noescape
func kern8VNNI(kg int, u *uint8, lda int, b *int8, c *float32, ldc int, sa *float32, scale *float32, corr *int32, relu bool)

//go:noescape
func kernBF16(kp int, a *uint16, lda int, b *uint16, c *float32, ldc int, relu bool)

//go:noescape
func maxAbsAVX512(x *float32, n int) float32

//go:noescape
func quant8AVX512(x *float32, n int, inv float32, off int32, dst *uint8)

//go:noescape
func toBF16AVX512(x *float32, n int, dst *uint16)

var vnniKernel = &int8Kernel{name: "vnni", mr: 8, kern: func(kg int, u []uint8, lda int, b []int8, c []float32, ldc int, sa, scale []float32, corr []int32, relu bool) {
	// Bounds checks: the assembly trusts these extents.
	_ = u[7*lda+4*kg-1]
	_ = b[kg*4*nr-1]
	_ = c[7*ldc+nr-1]
	_, _, _ = sa[7], scale[nr-1], corr[nr-1]
	kern8VNNI(kg, &u[0], lda, &b[0], &c[0], ldc, &sa[0], &scale[0], &corr[0], relu)
}}

var bf16Native = &bf16Kernel{name: "bf16", mr: 8, kern: func(kp int, a []uint16, lda int, b []uint16, c []float32, ldc int, relu bool) {
	_ = a[7*lda+2*kp-1]
	_ = b[kp*2*nr-1]
	_ = c[7*ldc+nr-1]
	kernBF16(kp, &a[0], lda, &b[0], &c[0], ldc, relu)
}}

// Row preparation on AVX-512: whole 16-float vectors, the tail in Go.

func maxAbs512(x []float32) float32 {
	n := len(x) &^ 15
	var mx float32
	if n > 0 {
		mx = maxAbsAVX512(&x[0], n)
	}
	return max(mx, maxAbsGo(x[n:]))
}

func quant8512(x []float32, inv float32, off int32, dst []uint8) {
	n := len(x) &^ 15
	_ = dst[len(x)-1]
	if n > 0 {
		quant8AVX512(&x[0], n, inv, off, &dst[0])
	}
	quant8Go(x[n:], inv, off, dst[n:])
}

func toBF16512(x []float32, dst []uint16) {
	n := len(x) &^ 15
	_ = dst[len(x)-1]
	if n > 0 {
		toBF16AVX512(&x[0], n, &dst[0])
	}
	toBF16Go(x[n:], dst[n:])
}

var avx512Impl = &gemmImpl{name: "avx512", mr: 8, maxAbs: maxAbs512, quant8: quant8512, toBF16: toBF16512, kern: func(kc int, a []float32, lda int, b []float32, c []float32, ldc int, relu bool) {
	// Bounds checks: the assembly trusts these extents.
	_ = a[7*lda+kc-1]
	_ = b[kc*nr-1]
	_ = c[7*ldc+nr-1]
	kernAVX512(kc, &a[0], lda, &b[0], &c[0], ldc, relu)
}, softmax: func(x []float32) {
	if len(x)%16 != 0 || len(x) == 0 {
		panic("uselite: softmax row length")
	}
	softmaxAVX512(&x[0], len(x))
}}

var avx2Impl = &gemmImpl{name: "avx2", mr: 3, maxAbs: maxAbsGo, quant8: quant8Go, toBF16: toBF16Go, kern: func(kc int, a []float32, lda int, b []float32, c []float32, ldc int, relu bool) {
	_ = a[2*lda+kc-1]
	_ = b[kc*nr-1]
	_ = c[2*ldc+nr-1]
	kernAVX2(kc, &a[0], lda, &b[0], &c[0], ldc, relu)
}, softmax: func(x []float32) {
	if len(x)%8 != 0 || len(x) == 0 {
		panic("uselite: softmax row length")
	}
	softmaxAVX2(&x[0], len(x))
}}

func init() {
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VNNI {
		avx512Impl.int8 = vnniKernel
	}
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BF16 {
		avx512Impl.bf16 = bf16Native
	}
	switch {
	case cpu.X86.HasAVX512F:
		defaultImpl = avx512Impl
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		defaultImpl = avx2Impl
	}
}

// gemmImpls lists the kernels usable on this CPU, fastest first; an
// AVX-512 one with native reduced-precision kernels is followed by a copy
// without them, which emulates them on its float32 kernel.
func gemmImpls() []*gemmImpl {
	var impls []*gemmImpl
	if cpu.X86.HasAVX512F {
		impls = append(impls, avx512Impl)
		if avx512Impl.int8 != nil || avx512Impl.bf16 != nil {
			emu := *avx512Impl
			emu.name, emu.int8, emu.bf16 = "avx512-emu", nil, nil
			impls = append(impls, &emu)
		}
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		impls = append(impls, avx2Impl)
	}
	return append(impls, goImpl)
}
