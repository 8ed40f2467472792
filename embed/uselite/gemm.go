package uselite

import "sync"

// Matrix multiply for the forward pass: C[m×n] += A[m×k] · B[k×n] with A and
// C row-major float32 (any row stride) and B pre-packed into column panels.
//
// B is stored as n/nr panels of nr columns; inside a panel row p's nr values
// are contiguous, so a micro-kernel streams one panel top to bottom while it
// keeps an mr×nr tile of C in registers (AVX-512: 8×32 in 16 ZMM
// accumulators; AVX2: 3×32 in 12 YMM; portable Go: 4×4 sub-tiles). k is cut
// into kcBlock-row slices so the panel slice the kernel re-reads for every
// row block stays in L1. Every element of C is a single sequential chain
// c = c + a·b over k (fused multiply-add in the assembly kernels), whatever
// the row block, so results do not depend on m, on which rows share a call,
// or on the worker that computes them.

const (
	nr      = 32  // panel width: columns per packed panel
	kcBlock = 256 // rows of a panel processed per kernel call
	maxMR   = 8   // largest micro-kernel height
	amxRows = 32  // rows of an AMX block (two tiles of 16)
)

// kernelFunc computes C[0:mr][0:nr] += A[0:mr][0:kc] · B[0:kc][0:nr] where B
// is the kc×nr slice of a panel, then clamps C at 0 when relu is set.
type kernelFunc func(kc int, a []float32, lda int, b []float32, c []float32, ldc int, relu bool)

// gemmImpl is a set of compute kernels for one instruction set.
type gemmImpl struct {
	name string
	mr   int
	kern kernelFunc
	// kernInit, where set, is kern with C's rows starting from the nr
	// floats of cin (C only written); elsewhere gemmInit fills C first.
	kernInit func(kc int, a []float32, lda int, b []float32, c []float32, ldc int, cin []float32, relu bool)
	// softmax normalises a row in place; len(x) is a multiple of nr and
	// padding lanes hold maskedScore.
	softmax func(x []float32)

	// Reduced precision: native kernels, nil where the CPU has none (the
	// float32 kernel then computes the same result; see reduced.go).
	int8 *int8Kernel
	bf16 *bf16Kernel
	// Row preparation for them: maxAbs and quant8 as maxAbsGo and quant8Go,
	// toBF16 as toBF16Go, bit for bit.
	maxAbs func(x []float32) float32
	quant8 func(x []float32, inv float32, off int32, dst []uint8)
	toBF16 func(x []float32, dst []uint16)
	// bf16Swap as bf16SwapGo, for the float32 kernel standing in for bf16
	bf16Swap func(x []float32, dst []float32)

	// Row operations of the forward pass, bit for bit as the Go functions
	// of the same names.
	layerNorm func(x, y []float32, n, d int, scale, bias []float32, eps float32)
	colMean   func(x []float32, n, d int, inv float32, dst []float32)
	addRows   func(c []float32, n int, row []float32)
	packKeys  func(src []float32, ld, n, hd int, kt []float32)
}

var goImpl = &gemmImpl{name: "go", mr: 4, kern: kernelGo, softmax: softmax, maxAbs: maxAbsGo, quant8: quant8Go, toBF16: toBF16Go, bf16Swap: bf16SwapGo,
	layerNorm: layerNorm, colMean: colMean, addRows: addRows, packKeys: packKeys}

// defaultImpl is the fastest kernel this CPU supports (see gemm_amd64.go).
var defaultImpl = goImpl

// packed is a k×n matrix stored as column panels for gemm.
type packed struct {
	k, n int
	data []float32 // panel j holds columns [j*nr, (j+1)*nr) at data[j*k*nr:]

	// A weight matrix's forms are built on first use from rows, which
	// calls each with every row in order: data (ensureF32) and the
	// reduced-precision forms (weights.prepare).
	rows  func(each func(i int, row []float32))
	f32   sync.Once
	q8    *q8Matrix
	bf    *bfMatrix
	forms reducedForms
	// int8AsBF16 marks the matrices the Int8 precision runs in bf16
	// (see Int8)
	int8AsBF16 bool
}

func newPacked(k, n int) *packed {
	np := (n + nr - 1) / nr * nr
	return &packed{k: k, n: n, data: make([]float32, k*np)}
}

// ensureF32 builds the float32 panels of a weight matrix.
func (p *packed) ensureF32() {
	p.f32.Do(func() {
		if p.data != nil || p.rows == nil {
			return
		}
		np := (p.n + nr - 1) / nr * nr
		p.data = make([]float32, p.k*np)
		p.rows(p.setRow)
	})
}

// setRow stores row i (len n) of the matrix.
func (p *packed) setRow(i int, row []float32) {
	for j0 := 0; j0 < p.n; j0 += nr {
		dst := p.data[(j0/nr)*p.k*nr+i*nr:]
		copy(dst[:nr], row[j0:min(j0+nr, p.n)])
	}
}

// gemmScratch holds the zero-padded copies used for the last, partial row
// block.
type gemmScratch struct {
	impl *gemmImpl
	ta   [maxMR * kcBlock]float32
	tc   [maxMR * nr]float32
	// reduced precision: row tails of quantized and bfloat16 rows, and the
	// float32 kernels' buffers where they stand in for native ones
	ta8 [maxMR * ffnDim]uint8
	tsa [maxMR]float32
	tab [maxMR * kcBlock]uint16
	af  []float32
	acc []int32
	tf  []float32
	// AMX: a block's int32 sums (32×32), and a padded copy of the last
	// block's rows where the caller's end early
	amxTmp [amxRows * nr]int32
	amxA   []uint8
}

// gemm computes C[m×n] += A[m×k]·B, B being k×n in panels (b[j*k*nr:] is
// panel j) and n a multiple of nr, then applies ReLU to C if relu is set.
func (g *gemmScratch) gemm(m, n, k int, a []float32, lda int, b []float32, c []float32, ldc int, relu bool) {
	g.product(m, n, k, a, lda, b, c, ldc, nil, relu)
}

// gemmInit computes C[m×n] = init + A[m×k]·B (then ReLU), init being one
// row of n values for every row of C (zeroRow for zeros): the chains of
// filling C's rows with init and calling gemm, without reading C.
func (g *gemmScratch) gemmInit(m, n, k int, a []float32, lda int, b []float32, c []float32, ldc int, init []float32, relu bool) {
	if g.impl.kernInit == nil || k == 0 {
		for i := 0; i < m; i++ {
			copy(c[i*ldc:i*ldc+n], init[:n])
		}
		g.product(m, n, k, a, lda, b, c, ldc, nil, relu)
		return
	}
	g.product(m, n, k, a, lda, b, c, ldc, init[:n], relu)
}

// cStart says where a product's output rows start from.
type cStart uint8

const (
	cAcc     cStart = iota // C's contents: C += A·B
	cBias                  // a bias row: C = bias + A·B, C only written
	cAddBias               // C's contents plus a bias row: C = (C + bias) + A·B
)

// startRows sets C's m rows (n used, stride ldc) to where a product
// starts from, for the kernels that read C: the bias row, or C plus it.
func startRows(impl *gemmImpl, c []float32, ldc, m, n int, start cStart, bias []float32) {
	switch start {
	case cBias:
		for i := 0; i < m; i++ {
			copy(c[i*ldc:i*ldc+n], bias[:n])
		}
	case cAddBias:
		if ldc == n {
			impl.addRows(c[:m*n], m, bias[:n])
			return
		}
		for i := 0; i < m; i++ {
			impl.addRows(c[i*ldc:i*ldc+n], 1, bias[:n])
		}
	}
}

// zeroRow is gemmInit's init for C = A·B.
var zeroRow = make([]float32, 3*hidden)

// product is gemm, C's rows starting from init in its first k slice when
// init is not nil.
func (g *gemmScratch) product(m, n, k int, a []float32, lda int, b []float32, c []float32, ldc int, init []float32, relu bool) {
	if m == 0 || n == 0 {
		return
	}
	if n%nr != 0 || len(b) < k*n || len(a) < (m-1)*lda+k || len(c) < (m-1)*ldc+n {
		panic("uselite: gemm operands out of range")
	}
	if k == 0 {
		if relu {
			for i := 0; i < m; i++ {
				reluInPlace(c[i*ldc : i*ldc+n])
			}
		}
		return
	}
	// Loop order. Panel-outer re-reads all of A (m×k) once per panel and
	// keeps one C panel hot; k-slice-outer re-reads all of C (m×n) once per
	// k slice and keeps one A slice hot. Re-read the smaller of A and C.
	if k <= n {
		for j0 := 0; j0 < n; j0 += nr {
			for k0 := 0; k0 < k; k0 += kcBlock {
				g.block(m, k, k0, j0, a, lda, b, c, ldc, init, relu)
			}
		}
	} else {
		for k0 := 0; k0 < k; k0 += kcBlock {
			for j0 := 0; j0 < n; j0 += nr {
				g.block(m, k, k0, j0, a, lda, b, c, ldc, init, relu)
			}
		}
	}
}

// block runs the micro-kernel down all m rows for the k slice starting at
// k0 and the panel starting at column j0 (C starting from init's columns
// in the first slice, when init is not nil). Whatever the loop order, each
// element of C sees its k slices in increasing order.
func (g *gemmScratch) block(m, k, k0, j0 int, a []float32, lda int, b []float32, c []float32, ldc int, init []float32, relu bool) {
	mr, kern := g.impl.mr, g.impl.kern
	var cin []float32
	if init != nil && k0 == 0 {
		cin = init[j0 : j0+nr]
	}
	full := m / mr * mr
	kc := min(kcBlock, k-k0)
	r := relu && k0+kc == k
	bk := b[(j0/nr)*k*nr+k0*nr : (j0/nr)*k*nr+(k0+kc)*nr]
	for i := 0; i < full; i += mr {
		if cin != nil {
			g.impl.kernInit(kc, a[i*lda+k0:], lda, bk, c[i*ldc+j0:], ldc, cin, r)
		} else {
			kern(kc, a[i*lda+k0:], lda, bk, c[i*ldc+j0:], ldc, r)
		}
	}
	if full < m {
		rows := m - full
		ta, tc := g.ta[:mr*kc], g.tc[:mr*nr]
		clear(ta[rows*kc:])
		clear(tc[rows*nr:])
		for i := 0; i < rows; i++ {
			copy(ta[i*kc:(i+1)*kc], a[(full+i)*lda+k0:])
			if cin != nil {
				copy(tc[i*nr:(i+1)*nr], cin)
			} else {
				copy(tc[i*nr:(i+1)*nr], c[(full+i)*ldc+j0:])
			}
		}
		kern(kc, ta, kc, bk, tc, nr, r)
		for i := 0; i < rows; i++ {
			copy(c[(full+i)*ldc+j0:(full+i)*ldc+j0+nr], tc[i*nr:])
		}
	}
}

// reluInPlace clamps x at +0 as the assembly's vmaxps does (-0 and NaN
// become +0).
func reluInPlace(x []float32) {
	for i, v := range x {
		if !(v > 0) {
			x[i] = 0
		}
	}
}

// kernelGo is the portable micro-kernel (mr = 4): 4×4 register sub-tiles,
// eight of them across the 4×32 tile. Sixteen accumulators suit targets
// with 32 floating-point registers (arm64, ppc64le, riscv64); on amd64 the
// assembly kernels are used instead.
func kernelGo(kc int, a []float32, lda int, b []float32, c []float32, ldc int, relu bool) {
	a0 := a[:kc]
	a1 := a[lda : lda+kc]
	a2 := a[2*lda : 2*lda+kc]
	a3 := a[3*lda : 3*lda+kc]
	a1, a2, a3 = a1[:len(a0)], a2[:len(a0)], a3[:len(a0)]
	b = b[:kc*nr]
	for j := 0; j < nr; j += 4 {
		c0 := c[j : j+4 : j+4]
		c1 := c[ldc+j : ldc+j+4 : ldc+j+4]
		c2 := c[2*ldc+j : 2*ldc+j+4 : 2*ldc+j+4]
		c3 := c[3*ldc+j : 3*ldc+j+4 : 3*ldc+j+4]
		s00, s01, s02, s03 := c0[0], c0[1], c0[2], c0[3]
		s10, s11, s12, s13 := c1[0], c1[1], c1[2], c1[3]
		s20, s21, s22, s23 := c2[0], c2[1], c2[2], c2[3]
		s30, s31, s32, s33 := c3[0], c3[1], c3[2], c3[3]
		bj := b[j:]
		for p, x := range a0 {
			bb := bj[p*nr : p*nr+4 : p*nr+4]
			b0, b1, b2, b3 := bb[0], bb[1], bb[2], bb[3]
			s00 += x * b0
			s01 += x * b1
			s02 += x * b2
			s03 += x * b3
			x = a1[p]
			s10 += x * b0
			s11 += x * b1
			s12 += x * b2
			s13 += x * b3
			x = a2[p]
			s20 += x * b0
			s21 += x * b1
			s22 += x * b2
			s23 += x * b3
			x = a3[p]
			s30 += x * b0
			s31 += x * b1
			s32 += x * b2
			s33 += x * b3
		}
		c0[0], c0[1], c0[2], c0[3] = s00, s01, s02, s03
		c1[0], c1[1], c1[2], c1[3] = s10, s11, s12, s13
		c2[0], c2[1], c2[2], c2[3] = s20, s21, s22, s23
		c3[0], c3[1], c3[2], c3[3] = s30, s31, s32, s33
		if relu {
			reluInPlace(c0)
			reluInPlace(c1)
			reluInPlace(c2)
			reluInPlace(c3)
		}
	}
}
