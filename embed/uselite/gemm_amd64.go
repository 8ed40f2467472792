//go:build amd64 && !purego

package uselite

import "golang.org/x/sys/cpu"

// Micro-kernels in gemm_amd64.s. Both compute
// C[0:mr][0:32] += A[0:mr][0:kc] · B[0:kc][0:32] with one fused multiply-add
// chain per element, B being kc consecutive rows of 32 floats, then clamp C
// at 0 when relu is set.

//go:noescape
func kernAVX512(kc int, a *float32, lda int, b *float32, c *float32, ldc int, relu bool, cin *float32)

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

// In rows_amd64.s.

//go:noescape
func bf16SwapAVX512(x *float32, n int, dst *float32)

//go:noescape
func rowSums4(p0, p1, p2, p3 *float32, d int, out *float32)

//go:noescape
func rowSqDev4(p0, p1, p2, p3 *float32, d int, mean *float32, out *float32)

//go:noescape
func lnApplyAVX512(x, y *float32, d int, scale, bias *float32, mean, r float32)

//go:noescape
func colSumAVX512(x *float32, n, d, ldx int, inv float32, dst *float32)

//go:noescape
func addRowsAVX512(c *float32, n, ldc int, row *float32, d int)

//go:noescape
func packKeysAVX512(src *float32, ld, n, hd, np int, dst *float32)

func packKeys512(src []float32, ld, n, hd int, kt []float32) {
	np := len(kt) / hd
	if n == 0 || np%nr != 0 || ld >= 1<<27 {
		packKeys(src, ld, n, hd, kt)
		return
	}
	// the gathers read src[t·ld+k] for t < n, k < hd only
	_ = src[(n-1)*ld+hd-1]
	_ = kt[np*hd-1]
	packKeysAVX512(&src[0], ld, n, hd, np, &kt[0])
}

// layerNorm512 is layerNorm with the statistics of four rows at a time
// (rowSums4, rowSqDev4) and the normalisation in 16-float vectors.
func layerNorm512(x, y []float32, n, d int, scale, bias []float32, eps float32) {
	if d%16 != 0 || n == 0 {
		layerNorm(x, y, n, d, scale, bias, eps)
		return
	}
	_, _ = x[n*d-1], y[n*d-1]
	_, _ = scale[d-1], bias[d-1]
	inv := 1 / float32(d)
	var sums, mean, dev [4]float32
	for t := 0; t < n; t += 4 {
		// rows past n repeat the last one
		p := [4]*float32{}
		for i := range p {
			p[i] = &x[min(t+i, n-1)*d]
		}
		rowSums4(p[0], p[1], p[2], p[3], d, &sums[0])
		for i := range mean {
			mean[i] = sums[i] * inv
		}
		rowSqDev4(p[0], p[1], p[2], p[3], d, &mean[0], &dev[0])
		for i := 0; i < 4 && t+i < n; i++ {
			lnApplyAVX512(p[i], &y[(t+i)*d], d, &scale[0], &bias[0], mean[i], lnScale(dev[i]*inv, eps))
		}
	}
}

func colMean512(x []float32, n, d int, inv float32, dst []float32) {
	if d%128 != 0 || n == 0 {
		colMean(x, n, d, inv, dst)
		return
	}
	_, _ = x[(n-1)*d+d-1], dst[d-1]
	colSumAVX512(&x[0], n, d, d, inv, &dst[0])
}

func addRows512(c []float32, n int, row []float32) {
	d := len(row)
	if d%16 != 0 || n == 0 {
		addRows(c, n, row)
		return
	}
	_ = c[n*d-1]
	addRowsAVX512(&c[0], n, d, &row[0], d)
}

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

func bf16Swap512(x []float32, dst []float32) {
	n := len(x) &^ 15
	_ = dst[len(x)-1]
	if n > 0 {
		bf16SwapAVX512(&x[0], n, &dst[0])
	}
	bf16SwapGo(x[n:], dst[n:])
}

var avx512Impl = &gemmImpl{name: "avx512", mr: 8, maxAbs: maxAbs512, quant8: quant8512, toBF16: toBF16512, bf16Swap: bf16Swap512,
	layerNorm: layerNorm512, colMean: colMean512, addRows: addRows512, packKeys: packKeys512, kern: func(kc int, a []float32, lda int, b []float32, c []float32, ldc int, relu bool) {
		// Bounds checks: the assembly trusts these extents.
		_ = a[7*lda+kc-1]
		_ = b[kc*nr-1]
		_ = c[7*ldc+nr-1]
		kernAVX512(kc, &a[0], lda, &b[0], &c[0], ldc, relu, nil)
	}, kernInit: func(kc int, a []float32, lda int, b []float32, c []float32, ldc int, cin []float32, relu bool) {
		_ = a[7*lda+kc-1]
		_ = b[kc*nr-1]
		_ = c[7*ldc+nr-1]
		_ = cin[nr-1]
		kernAVX512(kc, &a[0], lda, &b[0], &c[0], ldc, relu, &cin[0])
	}, softmax: func(x []float32) {
		if len(x)%16 != 0 || len(x) == 0 {
			panic("uselite: softmax row length")
		}
		softmaxAVX512(&x[0], len(x))
	}}

var avx2Impl = &gemmImpl{name: "avx2", mr: 3, maxAbs: maxAbsGo, quant8: quant8Go, toBF16: toBF16Go, bf16Swap: bf16SwapGo,
	layerNorm: layerNorm, colMean: colMean, addRows: addRows, packKeys: packKeys, kern: func(kc int, a []float32, lda int, b []float32, c []float32, ldc int, relu bool) {
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
		if cpu.X86.HasAMXTile && cpu.X86.HasAMXInt8 {
			avx512Impl.int8 = amxKernel // VNNI where the OS refuses AMX
		}
	}
	// vdpbf16ps where it beats two float32 FMAs: on AMD Zen 4 (one 512-bit
	// FMA per cycle) it doubles the rate; on Intel cores with AMX (two
	// 512-bit FMA units) it ran at 0.55–0.6 of the emulation on the
	// float32 kernel (BenchmarkGemmBF), which is then the default and
	// computes the same bits.
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512BF16 && !cpu.X86.HasAMXBF16 {
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
// without them, which emulates them on its float32 kernel, and one with
// AMX (which also passes over vdpbf16ps) by a copy using VNNI and
// vdpbf16ps instead.
func gemmImpls() []*gemmImpl {
	var impls []*gemmImpl
	if cpu.X86.HasAVX512F {
		impls = append(impls, avx512Impl)
		if avx512Impl.int8 == amxKernel || (avx512Impl.bf16 == nil && cpu.X86.HasAVX512BF16) {
			// the native kernels the default passes over
			vnni := *avx512Impl
			vnni.name = "avx512-vnni"
			if vnni.int8 != nil {
				vnni.int8 = vnniKernel
			}
			if cpu.X86.HasAVX512BF16 {
				vnni.bf16 = bf16Native
			}
			impls = append(impls, &vnni)
		}
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
