package uselite

import (
	"math"
	"sync"
)

// Reduced-precision dense layers (see Precision).
//
// Int8: a weight matrix W (k×n) is stored as q[k][n] int8 with one scale per
// column, W ≈ q·scale[j]; an input row x as u[k] uint8 with one scale per
// row, x ≈ (u − off)·s, off = 128 for signed rows (127 levels each side) and
// 0 for non-negative rows (255 levels). Then
//
//	x·W[:,j] ≈ s·scale[j]·(Σ_k u·q − off·Σ_k q)
//
// and the sum is exact in int32 (|Σ| ≤ 1536·255·127 < 2^26). The result is
// rescaled in one fixed order, c + float32(float32(float32(acc−corr)·scale)·s),
// by every implementation: vpdpbusd (AVX512-VNNI), or the float32 kernels
// summing the same small integers in blocks of at most kcBlock rows, where
// every partial sum is below 2^24 and so exact, the blocks then added in
// int32.
//
// BF16: weights and input rounded to bfloat16 (round to nearest even),
// products exact in float32, accumulated in float32 one product at a time,
// each k pair's odd element first — vdpbf16ps's definition. The float32
// kernels run the same chain on the bfloat16 values with each pair of k rows
// swapped.

// q8Matrix is a k×n matrix quantized per column for the int8 kernels.
type q8Matrix struct {
	k, n, kp int // kp: k rounded up to a multiple of 4 (rows beyond k are 0)
	// data holds n/nr panels of kp/4 groups; group g of panel j is 128
	// bytes at data[j*kp*nr+g*4*nr:], column c's four rows 4g..4g+3 at
	// 4c..4c+3 (the layout vpdpbusd multiplies a broadcast dword with).
	data  []int8
	scale []float32 // per column
	corr  []int32   // per column: 128·Σ_k q, what a signed row's offset adds
	// emu holds the same integers as float32 panels for the float32
	// kernels (built only where there is no native int8 kernel).
	emu *packed
}

// bfMatrix is a k×n matrix in bfloat16 for the bf16 kernels.
type bfMatrix struct {
	k, n, kp int // kp: k rounded up to even
	// data: panels of kp/2 pairs; pair g of panel j is 64 uint16 at
	// data[j*kp*nr+g*2*nr:], column c's rows (2g, 2g+1) at 2c, 2c+1.
	data []uint16
	// emu: the bfloat16 values as float32 panels, rows of each pair
	// swapped, for the float32 kernels.
	emu *packed
}

// quantizeColumns builds the int8 form of p from its rows: one pass for
// the columns' largest magnitudes, one to quantize.
func quantizeColumns(p *packed) *q8Matrix {
	kp := (p.k + 3) &^ 3
	np := (p.n + nr - 1) / nr * nr
	q := &q8Matrix{k: p.k, n: p.n, kp: kp, data: make([]int8, kp*np), scale: make([]float32, np), corr: make([]int32, np)}
	mx := make([]float64, p.n)
	p.eachRow(func(_ int, row []float32) {
		for j, v := range row {
			mx[j] = max(mx[j], math.Abs(float64(v)))
		}
	})
	inv := make([]float64, p.n)
	for j, m := range mx {
		if m > 0 {
			q.scale[j] = float32(m / 127)
			inv[j] = 127 / m
		}
	}
	sum := make([]int32, p.n)
	p.eachRow(func(i int, row []float32) {
		g := (i / 4) * 4 * nr
		for j, v := range row {
			x := int32(math.RoundToEven(float64(v) * inv[j]))
			x = max(-127, min(127, x))
			q.data[(j/nr)*kp*nr+g+(j%nr)*4+i%4] = int8(x)
			sum[j] += x
		}
	})
	for j, s := range sum {
		q.corr[j] = 128 * s
	}
	return q
}

// eachRow calls each with the matrix's rows in order, from its source
// when it has one, else from its panels.
func (p *packed) eachRow(each func(i int, row []float32)) {
	if p.rows != nil {
		p.rows(each)
		return
	}
	row := make([]float32, p.n)
	for i := 0; i < p.k; i++ {
		for j := range row {
			row[j] = p.data[(j/nr)*p.k*nr+i*nr+j%nr]
		}
		each(i, row)
	}
}

// emulation returns q's integers as float32 panels (kp rows).
func (q *q8Matrix) emulation() *packed {
	e := newPacked(q.kp, q.n)
	row := make([]float32, q.n)
	for i := 0; i < q.kp; i++ {
		for j := range row {
			row[j] = float32(q.data[(j/nr)*q.kp*nr+(i/4)*4*nr+(j%nr)*4+i%4])
		}
		e.setRow(i, row)
	}
	return e
}

// toBF16 rounds f to bfloat16, to nearest even (inputs are finite).
func toBF16(f float32) uint16 {
	b := math.Float32bits(f)
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

func fromBF16(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// bf16Columns builds the bfloat16 form of p from its rows.
func bf16Columns(p *packed) *bfMatrix {
	kp := (p.k + 1) &^ 1
	np := (p.n + nr - 1) / nr * nr
	b := &bfMatrix{k: p.k, n: p.n, kp: kp, data: make([]uint16, kp*np)}
	p.eachRow(func(i int, row []float32) {
		g := (i / 2) * 2 * nr
		for j, v := range row {
			b.data[(j/nr)*kp*nr+g+(j%nr)*2+i%2] = toBF16(v)
		}
	})
	return b
}

// emulation returns b's values as float32 panels with the rows of each
// pair swapped (odd row first), so a float32 FMA chain over k runs in
// vdpbf16ps's order.
func (b *bfMatrix) emulation() *packed {
	e := newPacked(b.kp, b.n)
	row := make([]float32, b.n)
	for i := 0; i < b.kp; i++ {
		src := i ^ 1
		for j := range row {
			row[j] = fromBF16(b.data[(j/nr)*b.kp*nr+(src/2)*2*nr+(j%nr)*2+src%2])
		}
		e.setRow(i, row)
	}
	return e
}

func (w *weights) denseMatrices() []*packed {
	l0, l1 := &w.layers[0], &w.layers[1]
	return []*packed{l0.dense, l0.qkv, l0.out, l0.ff1, l0.ff2, l1.qkv, l1.out, l1.ff1}
}

// prepare builds, once per process and form, the weights of the dense
// layers that run per token in the forms precision p needs with impl (the
// per-sequence layers, Layer_1's last projection on the mean and the
// output layer, are always float32).
func (w *weights) prepare(p Precision, impl *gemmImpl) {
	if p == Int8 {
		w.int8Once.Do(func() {
			// the forms stored in the binary, else computed
			q8, bf, err := int8Forms(w, int8Weights)
			if err != nil {
				return
			}
			for i, m := range w.denseMatrices() {
				if q8[i] != nil {
					m.forms.q8.Do(func() { m.q8 = q8[i] })
				} else {
					m.forms.bf.Do(func() { m.bf = bf[i] })
				}
			}
		})
	}
	for _, m := range w.denseMatrices() {
		switch {
		case p == FP32:
			m.ensureF32()
		case p == Int8 && !m.int8AsBF16:
			m.forms.q8.Do(func() { m.q8 = quantizeColumns(m) })
			if impl.int8 == nil {
				m.forms.q8emu.Do(func() { m.q8.emu = m.q8.emulation() })
			}
		default: // BF16, and Int8's bf16 layers
			m.forms.bf.Do(func() { m.bf = bf16Columns(m) })
			if impl.bf16 == nil {
				m.forms.bfemu.Do(func() { m.bf.emu = m.bf.emulation() })
			}
		}
	}
}

// reducedForms guards the building of a matrix's reduced forms.
type reducedForms struct {
	q8, q8emu, bf, bfemu sync.Once
}

// Row quantization, shared by every int8 path. The vectorised versions
// (gemmImpl.maxAbs, quant8) compute exactly the same bytes.

func maxAbsGo(x []float32) float32 {
	var mx float32
	for _, v := range x {
		if a := float32(math.Abs(float64(v))); a > mx {
			mx = a
		}
	}
	return mx
}

// quant8Go writes clamp(round(x·inv) + off, 0, 255) for each x.
func quant8Go(x []float32, inv float32, off int32, dst []uint8) {
	dst = dst[:len(x)]
	for i, v := range x {
		q := int32(math.RoundToEven(float64(v*inv))) + off
		dst[i] = uint8(max(0, min(255, q)))
	}
}

// quantRows quantizes m rows of x (row stride ldx, k used) into dst (row
// stride kp, padding filled with the offset, which meets zero weights) and
// their scales into sa. nonneg rows use 255 levels and no offset.
func quantRows(impl *gemmImpl, x []float32, ldx, m, k, kp int, nonneg bool, dst []uint8, sa []float32) {
	levels, off := float32(127), int32(128)
	if nonneg {
		levels, off = 255, 0
	}
	for i := 0; i < m; i++ {
		row := x[i*ldx : i*ldx+k]
		d := dst[i*kp : (i+1)*kp]
		mx := impl.maxAbs(row)
		if mx == 0 {
			for j := range d {
				d[j] = uint8(off)
			}
			sa[i] = 0
			continue
		}
		impl.quant8(row, levels/mx, off, d[:k])
		for j := k; j < kp; j++ {
			d[j] = uint8(off)
		}
		sa[i] = mx / levels
	}
}

// dequant8 adds the rescaled int32 sums acc (one per column of the tile) to
// c, then clamps at 0 when relu is set: the epilogue every int8 path runs.
func dequant8(acc []int32, corr []int32, scale []float32, sa float32, c []float32, relu bool) {
	c = c[:len(acc)]
	corr, scale = corr[:len(acc)], scale[:len(acc)]
	for j, a := range acc {
		x := float32(a - corr[j])
		x = float32(x * scale[j])
		v := c[j] + float32(x*sa)
		if relu && !(v > 0) {
			v = 0
		}
		c[j] = v
	}
}

// zeroCorr is the correction of non-negative rows (no offset).
var zeroCorr = make([]int32, ffnDim)

// gemm8 computes C[m×n] += dequant(U·Q) (then ReLU) for quantized rows u
// (stride lda ≥ q.kp) with scales sa.
func (g *gemmScratch) gemm8(m int, u []uint8, lda int, sa []float32, q *q8Matrix, c []float32, ldc int, relu, nonneg bool) {
	g.gemm8From(m, u, lda, sa, q, c, ldc, cAcc, nil, relu, nonneg)
}

// gemm8From is gemm8 with C's rows starting as start says (bias: one row
// of n values).
func (g *gemmScratch) gemm8From(m int, u []uint8, lda int, sa []float32, q *q8Matrix, c []float32, ldc int, start cStart, bias []float32, relu, nonneg bool) {
	if m == 0 {
		return
	}
	n, kp := q.n, q.kp
	if n%nr != 0 || len(u) < (m-1)*lda+kp || len(sa) < m || len(c) < (m-1)*ldc+n {
		panic("uselite: gemm8 operands out of range")
	}
	corr := q.corr
	if nonneg {
		corr = zeroCorr[:n]
	}
	k8 := g.impl.int8
	if k8 != nil && k8.whole != nil && k8.whole(g, m, u, lda, sa, q, corr, c, ldc, start, bias, relu) {
		return
	}
	startRows(g.impl, c, ldc, m, n, start, bias)
	if k8 != nil {
		g.gemm8Native(k8, m, u, lda, sa, q, corr, c, ldc, relu)
		return
	}
	g.gemm8Emulated(m, u, lda, sa, q, corr, c, ldc, relu)
}

func (g *gemmScratch) gemm8Native(k8 *int8Kernel, m int, u []uint8, lda int, sa []float32, q *q8Matrix, corr []int32, c []float32, ldc int, relu bool) {
	mr, kp := k8.mr, q.kp
	full := m / mr * mr
	for j0 := 0; j0 < q.n; j0 += nr {
		panel := q.data[(j0/nr)*kp*nr : (j0/nr+1)*kp*nr]
		sc, co := q.scale[j0:j0+nr], corr[j0:j0+nr]
		for i := 0; i < full; i += mr {
			k8.kern(kp/4, u[i*lda:], lda, panel, c[i*ldc+j0:], ldc, sa[i:i+mr], sc, co, relu)
		}
		if full < m {
			rows := m - full
			ta := g.ta8[:mr*kp]
			tc := g.tc[:mr*nr]
			ts := g.tsa[:mr]
			clear(ta[rows*kp:])
			clear(tc[rows*nr:])
			clear(ts[rows:])
			for i := 0; i < rows; i++ {
				copy(ta[i*kp:(i+1)*kp], u[(full+i)*lda:])
				copy(tc[i*nr:(i+1)*nr], c[(full+i)*ldc+j0:])
				ts[i] = sa[full+i]
			}
			k8.kern(kp/4, ta, kp, panel, tc, nr, ts, sc, co, relu)
			for i := 0; i < rows; i++ {
				copy(c[(full+i)*ldc+j0:(full+i)*ldc+j0+nr], tc[i*nr:])
			}
		}
	}
}

// gemm8Emulated sums the same integers with the float32 kernel, kcBlock
// rows at a time (each block's sums exact), the blocks in int32.
func (g *gemmScratch) gemm8Emulated(m int, u []uint8, lda int, sa []float32, q *q8Matrix, corr []int32, c []float32, ldc int, relu bool) {
	kp := q.kp
	if cap(g.af) < m*kp {
		g.af = make([]float32, m*kp)
	}
	af := g.af[:m*kp]
	for i := 0; i < m; i++ {
		for j, v := range u[i*lda : i*lda+kp] {
			af[i*kp+j] = float32(v)
		}
	}
	if cap(g.acc) < m*nr {
		g.acc = make([]int32, m*nr)
		g.tf = make([]float32, m*nr)
	}
	acc, tf := g.acc[:m*nr], g.tf[:m*nr]
	for j0 := 0; j0 < q.n; j0 += nr {
		bp := q.emu.data[(j0/nr)*kp*nr : (j0/nr+1)*kp*nr]
		clear(acc)
		for k0 := 0; k0 < kp; k0 += kcBlock {
			clear(tf)
			g.block(m, kp, k0, 0, af, kp, bp, tf, nr, nil, false)
			for i, v := range tf {
				acc[i] += int32(v)
			}
		}
		for i := 0; i < m; i++ {
			dequant8(acc[i*nr:(i+1)*nr], corr[j0:j0+nr], q.scale[j0:j0+nr], sa[i], c[i*ldc+j0:], relu)
		}
	}
}

// bf16Rows rounds m rows of x (stride ldx, k used) to bfloat16 into dst
// (stride kp, padding 0).
func bf16Rows(impl *gemmImpl, x []float32, ldx, m, k, kp int, dst []uint16) {
	for i := 0; i < m; i++ {
		d := dst[i*kp : (i+1)*kp]
		impl.toBF16(x[i*ldx:i*ldx+k], d[:k])
		clear(d[k:])
	}
}

// bf16SwapGo writes x rounded to bfloat16 and widened back to float32,
// each pair (2i, 2i+1) swapped, for the float32 kernel to run vdpbf16ps's
// chain against bfMatrix.emu (len(x) even).
func bf16SwapGo(x []float32, dst []float32) {
	dst = dst[:len(x)]
	for j := 0; j+1 < len(x); j += 2 {
		dst[j] = fromBF16(toBF16(x[j+1]))
		dst[j+1] = fromBF16(toBF16(x[j]))
	}
}

func toBF16Go(x []float32, dst []uint16) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = toBF16(v)
	}
}

// gemmBFRows computes C[m×n] = C0 + bf16(X)·B (then ReLU), C0 as start
// says, for m float32
// rows x (stride ldx, b.k used): natively through ab (m × b.kp), or on the
// float32 kernel from rounded, pair-swapped float32 rows.
func (g *gemmScratch) gemmBFRows(m int, x []float32, ldx int, b *bfMatrix, c []float32, ldc int, start cStart, bias []float32, relu bool, ab []uint16) {
	if g.impl.bf16 != nil {
		startRows(g.impl, c, ldc, m, b.n, start, bias)
		bf16Rows(g.impl, x, ldx, m, b.k, b.kp, ab)
		g.gemmBF(m, ab, b.kp, b, c, ldc, relu)
		return
	}
	k, kp := b.k, b.kp
	if cap(g.af) < m*kp {
		g.af = make([]float32, m*kp)
	}
	af := g.af[:m*kp]
	for i := 0; i < m; i++ {
		row, d := x[i*ldx:i*ldx+k], af[i*kp:(i+1)*kp]
		even := k &^ 1
		g.impl.bf16Swap(row[:even], d[:even])
		if k != kp { // odd k: the last value pairs with a zero
			d[k-1], d[k] = 0, fromBF16(toBF16(row[k-1]))
		}
	}
	if start == cBias {
		g.gemmInit(m, b.n, kp, af, kp, b.emu.data, c, ldc, bias, relu)
		return
	}
	startRows(g.impl, c, ldc, m, b.n, start, bias)
	g.gemm(m, b.n, kp, af, kp, b.emu.data, c, ldc, relu)
}

// gemmBF computes C[m×n] += A·B (then ReLU) for bfloat16 rows a (stride lda
// ≥ b.kp).
func (g *gemmScratch) gemmBF(m int, a []uint16, lda int, b *bfMatrix, c []float32, ldc int, relu bool) {
	if m == 0 {
		return
	}
	n, kp := b.n, b.kp
	if n%nr != 0 || len(a) < (m-1)*lda+kp || len(c) < (m-1)*ldc+n {
		panic("uselite: gemmBF operands out of range")
	}
	kb := g.impl.bf16
	if kb == nil {
		// the same chain on the float32 kernel: bfloat16 values, pairs swapped
		if cap(g.af) < m*kp {
			g.af = make([]float32, m*kp)
		}
		af := g.af[:m*kp]
		for i := 0; i < m; i++ {
			for j, h := range a[i*lda : i*lda+kp] {
				af[i*kp+j^1] = fromBF16(h)
			}
		}
		g.gemm(m, n, kp, af, kp, b.emu.data, c, ldc, relu)
		return
	}
	mr := kb.mr
	full := m / mr * mr
	for j0 := 0; j0 < n; j0 += nr {
		panel := b.data[(j0/nr)*kp*nr : (j0/nr+1)*kp*nr]
		for k0 := 0; k0 < kp; k0 += kcBlock {
			kc := min(kcBlock, kp-k0)
			r := relu && k0+kc == kp
			bk := panel[k0*nr : (k0+kc)*nr]
			for i := 0; i < full; i += mr {
				kb.kern(kc/2, a[i*lda+k0:], lda, bk, c[i*ldc+j0:], ldc, r)
			}
			if full < m {
				rows := m - full
				ta, tc := g.tab[:mr*kc], g.tc[:mr*nr]
				clear(ta[rows*kc:])
				clear(tc[rows*nr:])
				for i := 0; i < rows; i++ {
					copy(ta[i*kc:(i+1)*kc], a[(full+i)*lda+k0:])
					copy(tc[i*nr:(i+1)*nr], c[(full+i)*ldc+j0:])
				}
				kb.kern(kc/2, ta, kc, bk, tc, nr, r)
				for i := 0; i < rows; i++ {
					copy(c[(full+i)*ldc+j0:(full+i)*ldc+j0+nr], tc[i*nr:])
				}
			}
		}
	}
}

// int8Kernel computes, for mr rows and nr columns, the int32 sums of kg
// groups of 4 bytes (u rows of stride lda bytes, one 128-byte group of the
// panel per step), then dequant8's epilogue into c.
type int8Kernel struct {
	name string
	mr   int
	kern func(kg int, u []uint8, lda int, b []int8, c []float32, ldc int, sa, scale []float32, corr []int32, relu bool)
	// whole, when set, computes gemm8's whole product (corr already
	// chosen) and reports true, or false for a product it cannot take,
	// which kern then computes.
	whole func(g *gemmScratch, m int, u []uint8, lda int, sa []float32, q *q8Matrix, corr []int32, c []float32, ldc int, start cStart, bias []float32, relu bool) bool
	// usable, when set, reports whether whole can run at all (asking the
	// OS the first time); fallback is what runs when it cannot.
	usable   func() bool
	fallback *int8Kernel
}

// active is the kernel that runs: k, or its fallback where k cannot.
func (k *int8Kernel) active() *int8Kernel {
	if k.usable != nil && !k.usable() {
		return k.fallback
	}
	return k
}

// bf16Kernel computes C[0:mr][0:nr] += A·B over kp pairs of bfloat16 (A
// rows of stride lda elements), vdpbf16ps's chain, then ReLU when set.
type bf16Kernel struct {
	name string
	mr   int
	kern func(kp int, a []uint16, lda int, b []uint16, c []float32, ldc int, relu bool)
}
