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

var avx512Impl = &gemmImpl{name: "avx512", mr: 8, kern: func(kc int, a []float32, lda int, b []float32, c []float32, ldc int, relu bool) {
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

var avx2Impl = &gemmImpl{name: "avx2", mr: 3, kern: func(kc int, a []float32, lda int, b []float32, c []float32, ldc int, relu bool) {
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
	switch {
	case cpu.X86.HasAVX512F:
		defaultImpl = avx512Impl
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		defaultImpl = avx2Impl
	}
}

// gemmImpls lists the kernels usable on this CPU, fastest first.
func gemmImpls() []*gemmImpl {
	var impls []*gemmImpl
	if cpu.X86.HasAVX512F {
		impls = append(impls, avx512Impl)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		impls = append(impls, avx2Impl)
	}
	return append(impls, goImpl)
}
