package uselite

import "math"

// Several short sequences share one forward pass: their token rows are
// stacked so every dense layer streams its weights once per group instead
// of once per text (short texts are otherwise bound by memory bandwidth).
// Attention and pooling stay per sequence, and each row's arithmetic is the
// same whatever else is in the group, so grouping never changes a vector.
const (
	groupRows = 256 // most token rows per group (at least MaxTokens)
	groupSeqs = 64  // most sequences per group (empty texts have no rows)
)

// seqKind says what to do with a finished sequence's vector.
type seqKind uint8

const (
	seqWhole      seqKind = iota // the vector is the text's vector
	seqWindow                    // add to the text's running window sum
	seqLastWindow                // add, then normalise the sum in place
)

type seqRef struct {
	row0, n int
	dst     []float32
	kind    seqKind
}

// worker owns the scratch buffers of one goroutine's forward passes, reused
// across texts, so embedding allocates nothing per token.
type worker struct {
	w    *weights
	prec Precision
	g    gemmScratch
	tok  tokScratch

	// pending group
	ids  []int32 // concatenated token ids
	seqs []seqRef
	// sequences encoded and pooled (their means in mf, mh), waiting for
	// the per-sequence layers
	pooled []seqRef

	x0  []float32 // rows × embedDim: Layer_0 input
	h   []float32 // rows × hidden: residual stream
	y   []float32 // rows × hidden: layer-norm output
	qkv []float32 // rows × 3·hidden
	att []float32 // rows × hidden: attention heads, combined
	f   []float32 // rows × ffnDim: feed-forward activations
	s   []float32 // MaxTokens × padded tokens: one head's scores/probabilities
	kt  []float32 // one head's keys, transposed and packed
	vp  []float32 // one head's values, packed

	mf  []float32 // groupSeqs × ffnDim: pooled sequences' mean activations
	mh  []float32 // groupSeqs × hidden: their mean residual stream
	vec []float32 // groupSeqs × Dim: their vectors

	// a dense layer's input in reduced precision (rows × up to ffnDim)
	u8 []uint8   // int8: quantized rows
	sa []float32 // int8: their scales
	ab []uint16  // bf16: rounded rows
}

const paddedTokens = (MaxTokens + nr - 1) / nr * nr

// maskedScore fills the attention scores of padding keys: its exponential
// underflows to (at most) the smallest normal float, negligible next to the
// row maximum's e^0 = 1, and the value product never reads those columns.
const maskedScore = -1e30

func newWorker(w *weights, impl *gemmImpl, prec Precision) *worker {
	w.prepare(prec, impl)
	wk := &worker{
		w:      w,
		prec:   prec,
		g:      gemmScratch{impl: impl},
		ids:    make([]int32, 0, groupRows),
		seqs:   make([]seqRef, 0, groupSeqs),
		pooled: make([]seqRef, 0, groupSeqs),
		x0:     make([]float32, groupRows*embedDim),
		h:      make([]float32, groupRows*hidden),
		y:      make([]float32, groupRows*hidden),
		qkv:    make([]float32, groupRows*3*hidden),
		att:    make([]float32, groupRows*hidden),
		f:      make([]float32, groupRows*ffnDim),
		s:      make([]float32, MaxTokens*paddedTokens),
		kt:     make([]float32, hidden*paddedTokens),
		vp:     make([]float32, MaxTokens*hidden),
		mf:     make([]float32, groupSeqs*ffnDim),
		mh:     make([]float32, groupSeqs*hidden),
		vec:    make([]float32, groupSeqs*Dim),
	}
	switch prec {
	case Int8:
		wk.u8 = make([]uint8, groupRows*ffnDim)
		wk.sa = make([]float32, groupRows)
		wk.ab = make([]uint16, groupRows*embedDim) // Layer_0's bf16 projections
	case BF16:
		wk.ab = make([]uint16, groupRows*ffnDim)
	}
	return wk
}

// dense computes c[m×W.n] (row stride ldc) = c0 + x·W, c0 as start says
// (bias: one row of W.n values), then ReLU when relu is set, in wk's
// precision; x has m rows of W.k values (stride ldx), and nonneg says they
// are never negative (a ReLU's output).
func (wk *worker) dense(W *packed, x []float32, ldx, m int, c []float32, ldc int, start cStart, bias []float32, relu, nonneg bool) {
	prec := wk.prec
	if prec == Int8 && W.int8AsBF16 {
		prec = BF16
	}
	g := &wk.g
	switch prec {
	case Int8:
		q := W.q8
		quantRows(g.impl, x, ldx, m, q.k, q.kp, nonneg, wk.u8, wk.sa)
		g.gemm8From(m, wk.u8, q.kp, wk.sa, q, c, ldc, start, bias, relu, nonneg)
	case BF16:
		g.gemmBFRows(m, x, ldx, W.bf, c, ldc, start, bias, relu, wk.ab)
	default:
		if start == cBias {
			g.gemmInit(m, W.n, W.k, x, ldx, W.data, c, ldc, bias, relu)
			return
		}
		startRows(g.impl, c, ldc, m, W.n, start, bias)
		g.gemm(m, W.n, W.k, x, ldx, W.data, c, ldc, relu)
	}
}

// add queues a sequence of at most MaxTokens ids whose vector goes to dst
// as kind says, running the pending group first if it is full.
func (wk *worker) add(ids []int32, dst []float32, kind seqKind) {
	if len(ids) > MaxTokens {
		panic("uselite: sequence longer than MaxTokens")
	}
	if len(wk.ids)+len(ids) > groupRows || len(wk.seqs) == groupSeqs {
		wk.runGroup()
	}
	wk.seqs = append(wk.seqs, seqRef{row0: len(wk.ids), n: len(ids), dst: dst, kind: kind})
	wk.ids = append(wk.ids, ids...)
}

// flush runs the pending group and the pooled sequences, and delivers
// their vectors.
func (wk *worker) flush() {
	wk.runGroup()
	wk.finish()
}

// forward embeds one sequence of at most MaxTokens ids into out (len Dim,
// unit norm).
func (wk *worker) forward(ids []int32, out []float32) {
	wk.flush()
	wk.add(ids, out, seqWhole)
	wk.flush()
}

// runGroup encodes the pending group and pools each of its sequences
// (mean over its tokens) for finish, which runs first if the pooled
// sequences would not fit.
func (wk *worker) runGroup() {
	if len(wk.seqs) == 0 {
		return
	}
	if len(wk.pooled)+len(wk.seqs) > groupSeqs {
		wk.finish()
	}
	if len(wk.ids) > 0 {
		wk.encode()
	}
	// Mean over each sequence's tokens. Layer_1's last projection is
	// linear, so mean_t(f_t·W + b) = mean_t(f_t)·W + b: it runs once per
	// sequence on the mean activation instead of once per token.
	ops := wk.g.impl
	for _, sq := range wk.seqs {
		i := len(wk.pooled)
		mf := wk.mf[i*ffnDim : (i+1)*ffnDim]
		mh := wk.mh[i*hidden : (i+1)*hidden]
		if sq.n == 0 {
			clear(mf)
			clear(mh)
		} else {
			inv := 1 / float32(sq.n)
			ops.colMean(wk.f[sq.row0*ffnDim:], sq.n, ffnDim, inv, mf)
			ops.colMean(wk.h[sq.row0*hidden:], sq.n, hidden, inv, mh)
		}
		wk.pooled = append(wk.pooled, sq)
	}
	wk.ids = wk.ids[:0]
	wk.seqs = wk.seqs[:0]
}

// finish runs the per-sequence layers (Layer_1's last projection on the
// mean, the output layer) on every pooled sequence at once, so their
// weights are streamed once per up to groupSeqs sequences rather than once
// per group, and delivers the vectors in the order the sequences were
// added. An empty sequence yields the model's "no tokens" vector,
// normalize(tanh(bias)), which is what the graph computes for an empty
// row.
func (wk *worker) finish() {
	ns := len(wk.pooled)
	if ns == 0 {
		return
	}
	w := wk.w
	g := &wk.g
	l1 := &w.layers[1]
	mf := wk.mf[:ns*ffnDim]
	mh := wk.mh[:ns*hidden]
	proj := wk.vec[:ns*hidden]
	fillRows(proj, ns, l1.ff2B)
	g.gemm(ns, hidden, ffnDim, mf, ffnDim, l1.ff2.data, proj, hidden, false)
	for i, sq := range wk.pooled {
		if sq.n == 0 {
			continue
		}
		row := mh[i*hidden : (i+1)*hidden]
		for j, v := range proj[i*hidden : (i+1)*hidden] {
			row[j] += v
		}
	}
	z := wk.vec[:ns*Dim]
	fillRows(z, ns, w.tanhB)
	g.gemm(ns, hidden, hidden, mh, hidden, w.tanhW.data, z, hidden, false)
	for i := 0; i < ns; i++ {
		zr := z[i*Dim : (i+1)*Dim]
		var ss float32
		for j, v := range zr {
			t := float32(math.Tanh(float64(v)))
			zr[j] = t
			ss += t * t
		}
		r := float32(1 / math.Sqrt(float64(max(ss, w.l2Eps))))
		for j := range zr {
			zr[j] *= r
		}
	}
	for i, sq := range wk.pooled {
		v := wk.vec[i*Dim : (i+1)*Dim]
		switch sq.kind {
		case seqWhole:
			copy(sq.dst, v)
		case seqWindow, seqLastWindow:
			for j, x := range v {
				sq.dst[j] += x
			}
			if sq.kind == seqLastWindow {
				normalize(sq.dst, sq.dst)
			}
		}
	}
	wk.pooled = wk.pooled[:0]
}

// encode runs both transformer layers over all pending rows; afterwards
// wk.h holds the residual stream before Layer_1's last projection and wk.f
// that layer's ReLU activations.
func (wk *worker) encode() {
	w := wk.w
	n := len(wk.ids)

	// Layer_0 input: the graph adds the token embedding twice (once through
	// Encode/Scatter, once inside AddTimingSignal) plus the timing signal.
	x0 := wk.x0[:n*embedDim]
	for _, sq := range wk.seqs {
		for t, id := range wk.ids[sq.row0 : sq.row0+sq.n] {
			row := x0[(sq.row0+t)*embedDim : (sq.row0+t+1)*embedDim]
			w.embeddingRow(id, row)
			tim := w.timing[t*embedDim : (t+1)*embedDim]
			for i, e := range row {
				row[i] = e + (e + tim[i])
			}
		}
	}

	// Layer_0: attention at width 256, residual projected 256 → 512.
	l0 := &w.layers[0]
	h := wk.h[:n*hidden]
	wk.dense(l0.dense, x0, embedDim, n, h, hidden, cBias, l0.denseB, false, false)
	ops := wk.g.impl
	ops.layerNorm(x0, wk.y, n, embedDim, l0.ln1s, l0.ln1b, w.lnEps)
	wk.attention(l0, n)
	wk.dense(l0.out, wk.att, embedDim, n, h, hidden, cAddBias, l0.outB, false, false)
	wk.feedForward(l0, n, true)

	// Layer_1: width 512 throughout.
	l1 := &w.layers[1]
	ops.layerNorm(h, wk.y, n, hidden, l1.ln1s, l1.ln1b, w.lnEps)
	wk.attention(l1, n)
	wk.dense(l1.out, wk.att, hidden, n, h, hidden, cAddBias, l1.outB, false, false)
	wk.feedForward(l1, n, false)
}

// feedForward computes f = relu(LN(h)·W1 + b1) and, when project is set,
// h += f·W2 + b2 (as (h + b2) + f·W2).
func (wk *worker) feedForward(l *layerWeights, n int, project bool) {
	wk.g.impl.layerNorm(wk.h, wk.y, n, hidden, l.ln2s, l.ln2b, wk.w.lnEps)
	f := wk.f[:n*ffnDim]
	wk.dense(l.ff1, wk.y, hidden, n, f, ffnDim, cBias, l.ff1B, true, false)
	if project {
		wk.dense(l.ff2, f, ffnDim, n, wk.h[:n*hidden], hidden, cAddBias, l.ff2B, false, true)
	}
}

// attention reads wk.y (rows × l.dIn, layer-normed) and writes the
// combined heads, before the output projection, to wk.att (rows × l.dIn);
// each sequence attends within its own rows.
func (wk *worker) attention(l *layerWeights, rows int) {
	d := l.dIn
	qkv := wk.qkv[:rows*3*d]
	wk.dense(l.qkv, wk.y, d, rows, qkv, 3*d, cBias, l.qkvB, false, false) // queries come pre-scaled
	for _, sq := range wk.seqs {
		if sq.n > 0 {
			wk.attendSeq(l, qkv[sq.row0*3*d:], wk.att[sq.row0*d:], sq.n)
		}
	}
}

// attendSeq computes the heads of one sequence of n rows: qkv and att start
// at its first row.
func (wk *worker) attendSeq(l *layerWeights, qkv, att []float32, n int) {
	g := &wk.g
	d, hd := l.dIn, l.headDim
	np := (n + nr - 1) / nr * nr
	s := wk.s[:n*np]
	for head := 0; head < l.heads; head++ {
		q0, k0, v0 := head*hd, d+head*hd, 2*d+head*hd

		// Keys, transposed into np/nr panels of hd rows × nr tokens.
		kt := wk.kt[:hd*np]
		g.impl.packKeys(qkv[k0:], 3*d, n, hd, kt)
		g.gemmInit(n, np, hd, qkv[q0:], 3*d, kt, s, np, zeroRow, false)
		for i := 0; i < n; i++ {
			row := s[i*np : (i+1)*np]
			for j := n; j < np; j++ { // padding keys get no weight
				row[j] = maskedScore
			}
			g.impl.softmax(row)
		}

		// Values, packed into hd/nr panels of n rows × nr columns.
		vp := wk.vp[:n*hd]
		for c := 0; c < hd; c += nr {
			panel := vp[c*n : (c+nr)*n]
			for t := 0; t < n; t++ {
				copy(panel[t*nr:(t+1)*nr], qkv[t*3*d+v0+c:])
			}
		}
		g.gemmInit(n, hd, n, s, np, vp, att[q0:], d, zeroRow, false)
	}
}

// packKeys transposes the keys of n tokens (src row t at src[t·ld:], hd
// values) into len(kt)/(hd·nr) panels of hd rows × nr tokens, zero past n.
func packKeys(src []float32, ld, n, hd int, kt []float32) {
	np := len(kt) / hd
	for p := 0; p < np; p += nr {
		panel := kt[p*hd : (p+nr)*hd]
		for j := 0; j < nr; j++ {
			t := p + j
			if t >= n {
				for k := 0; k < hd; k++ {
					panel[k*nr+j] = 0
				}
				continue
			}
			for k, v := range src[t*ld : t*ld+hd] {
				panel[k*nr+j] = v
			}
		}
	}
}

// layerNorm writes scale·(x-mean)/sqrt(var+eps)+bias for n rows of width d
// (both x and y have row stride d), in the graph's operation order. The
// float32 conversions keep every product rounded on its own (Go may
// otherwise fuse x*y+z): the vectorised version computes the same bits.
func layerNorm(x, y []float32, n, d int, scale, bias []float32, eps float32) {
	inv := 1 / float32(d)
	for t := 0; t < n; t++ {
		xr := x[t*d : (t+1)*d]
		yr := y[t*d : (t+1)*d]
		mean := sum32(xr) * inv
		var v0, v1, v2, v3 float32
		i := 0
		for ; i+4 <= len(xr); i += 4 {
			a := xr[i] - mean
			b := xr[i+1] - mean
			c := xr[i+2] - mean
			e := xr[i+3] - mean
			v0 += float32(a * a)
			v1 += float32(b * b)
			v2 += float32(c * c)
			v3 += float32(e * e)
		}
		for ; i < len(xr); i++ {
			a := xr[i] - mean
			v0 += float32(a * a)
		}
		r := lnScale(((v0+v1)+(v2+v3))*inv, eps)
		sc := scale[:d]
		bs := bias[:d]
		for i, v := range xr {
			yr[i] = float32(float32(sc[i]*r)*(v-mean)) + bs[i]
		}
	}
}

// lnScale is layerNorm's 1/sqrt(variance+eps).
func lnScale(variance, eps float32) float32 {
	return float32(1 / math.Sqrt(float64(variance+eps)))
}

func sum32(x []float32) float32 {
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i]
		s1 += x[i+1]
		s2 += x[i+2]
		s3 += x[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// softmax normalises x in place.
func softmax(x []float32) {
	m := x[0]
	for _, v := range x[1:] {
		if v > m {
			m = v
		}
	}
	var s float32
	for i, v := range x {
		e := expf(v - m)
		x[i] = e
		s += e
	}
	r := 1 / s
	for i := range x {
		x[i] *= r
	}
}

// fillRows sets each of the n rows of c (row length len(row)) to row.
func fillRows(c []float32, n int, row []float32) {
	d := len(row)
	for t := 0; t < n; t++ {
		copy(c[t*d:(t+1)*d], row)
	}
}

// addRows adds row to each of the n rows of c.
func addRows(c []float32, n int, row []float32) {
	d := len(row)
	for t := 0; t < n; t++ {
		cr := c[t*d : (t+1)*d]
		for i, v := range row {
			cr[i] += v
		}
	}
}

// colMean writes the mean of the n rows of x (width d) to dst.
func colMean(x []float32, n, d int, inv float32, dst []float32) {
	dst = dst[:d]
	copy(dst, x[:d])
	for t := 1; t < n; t++ {
		xr := x[t*d : (t+1)*d]
		for i, v := range xr {
			dst[i] += v
		}
	}
	for i := range dst {
		dst[i] *= inv
	}
}

// expf is a float32 e^x (Cody–Waite range reduction, degree-6 polynomial),
// accurate to about 1 ulp over the range softmax uses.
func expf(x float32) float32 {
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375
		ln2lo = -2.12194440e-4
	)
	if x < -87.33654 {
		return 0
	}
	if x > 88.72283 {
		return float32(math.Inf(1))
	}
	// k = floor(x·log2e + 0.5); the argument is above -127 here, so
	// truncating after a shift by 128 is a floor.
	k := float32(int32(x*log2e+128.5)) - 128
	r := x - k*ln2hi - k*ln2lo
	z := r * r
	p := ((((1.9875691500e-4*r+1.3981999507e-3)*r+8.3334519073e-3)*r+4.1665795894e-2)*r+1.6666665459e-1)*r + 5.0000001201e-1
	p = p*z + r + 1
	// p·2^k; k is at least -126 here except right at the bottom of the
	// range, where scaling in two steps keeps the result normal or zero.
	ki := int32(k)
	if ki < -125 {
		return p * math.Float32frombits(uint32(ki+126+127)<<23) * math.Float32frombits(uint32(-126+127)<<23)
	}
	return p * math.Float32frombits(uint32(ki+127)<<23)
}

// discard drops the pending group and the pooled sequences.
func (wk *worker) discard() {
	wk.ids = wk.ids[:0]
	wk.seqs = wk.seqs[:0]
	wk.pooled = wk.pooled[:0]
}
