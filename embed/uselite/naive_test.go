package uselite

import (
	"math"
	"sync"
	"testing"
)

// naiveModel is a deliberately straightforward forward pass, kept as the
// baseline for BenchmarkNaive* and as a second implementation for tests: it
// follows the TF.js graph node by node (query scaled after the projection,
// per-token output projection, plain float32 triple loops over the weights
// in their original row-major layout, math.Exp).
type naiveModel struct {
	w      *weights
	emb    []float32
	layers [2]naiveLayer
	tanhW  []float32
	tanhB  []float32
}

type naiveLayer struct {
	dIn, heads, hd int
	qscale         float32
	ln1s, ln1b     []float32
	qkvW, qkvB     []float32
	outW, outB     []float32
	denseW, denseB []float32
	ln2s, ln2b     []float32
	ff1W, ff1B     []float32
	ff2W, ff2B     []float32
}

var (
	naiveOnce sync.Once
	naiveM    *naiveModel
)

func loadNaive(tb testing.TB) *naiveModel {
	tb.Helper()
	w, err := sharedWeights()
	if err != nil {
		tb.Fatal(err)
	}
	naiveOnce.Do(func() {
		b := w.blob
		raw := func(name string) []float32 {
			r, ok := b.refs[name]
			if !ok {
				panic("no tensor " + name)
			}
			v := make([]float32, r.size())
			b.floats(r.off, v)
			return v
		}
		m := &naiveModel{w: w, emb: raw(nameEmbeddings), tanhW: raw(nameTanhW), tanhB: raw(nameTanhB)}
		for l := range m.layers {
			n := layerNames(l)
			nl := &m.layers[l]
			nl.dIn, nl.heads, nl.hd = w.layers[l].dIn, w.layers[l].heads, w.layers[l].headDim
			qs, err := b.scalarF(n["qscale"])
			if err != nil {
				panic(err)
			}
			nl.qscale = qs
			nl.ln1s, nl.ln1b = raw(n["ln1s"]), raw(n["ln1b"])
			nl.qkvW, nl.qkvB = raw(n["qkvW"]), raw(n["qkvB"])
			nl.outW, nl.outB = raw(n["outW"]), raw(n["outB"])
			if l == 0 {
				nl.denseW, nl.denseB = raw(n["denseW"]), raw(n["denseB"])
			}
			nl.ln2s, nl.ln2b = raw(n["ln2s"]), raw(n["ln2b"])
			nl.ff1W, nl.ff1B = raw(n["ff1W"]), raw(n["ff1B"])
			nl.ff2W, nl.ff2B = raw(n["ff2W"]), raw(n["ff2B"])
		}
		naiveM = m
	})
	return naiveM
}

// naiveMatmul returns x[n×k]·w[k×m] + b with three plain loops (in the
// cache-friendly i, p, j order a straightforward implementation would use).
func naiveMatmul(x []float32, n, k int, w []float32, m int, b []float32) []float32 {
	y := make([]float32, n*m)
	for i := 0; i < n; i++ {
		yr := y[i*m : (i+1)*m]
		for p := 0; p < k; p++ {
			a := x[i*k+p]
			wr := w[p*m : (p+1)*m]
			for j := range yr {
				yr[j] += a * wr[j]
			}
		}
		if b != nil {
			for j := range yr {
				yr[j] += b[j]
			}
		}
	}
	return y
}

func naiveLayerNorm(x []float32, n, d int, scale, bias []float32, eps float32) []float32 {
	y := make([]float32, n*d)
	for t := 0; t < n; t++ {
		var mean float32
		for i := 0; i < d; i++ {
			mean += x[t*d+i]
		}
		mean /= float32(d)
		var v float32
		for i := 0; i < d; i++ {
			c := x[t*d+i] - mean
			v += c * c
		}
		v /= float32(d)
		r := float32(1 / math.Sqrt(float64(v+eps)))
		for i := 0; i < d; i++ {
			y[t*d+i] = scale[i]*r*(x[t*d+i]-mean) + bias[i]
		}
	}
	return y
}

func (nl *naiveLayer) attention(y []float32, n int) []float32 {
	d, hd := nl.dIn, nl.hd
	qkv := naiveMatmul(y, n, d, nl.qkvW, 3*d, nl.qkvB)
	o := make([]float32, n*d)
	sc := make([]float32, n)
	for h := 0; h < nl.heads; h++ {
		for i := 0; i < n; i++ {
			mx := float32(math.Inf(-1))
			for j := 0; j < n; j++ {
				var s float32
				for k := 0; k < hd; k++ {
					s += qkv[i*3*d+h*hd+k] * nl.qscale * qkv[j*3*d+d+h*hd+k]
				}
				sc[j] = s
				mx = max(mx, s)
			}
			var sum float32
			for j := range sc {
				sc[j] = float32(math.Exp(float64(sc[j] - mx)))
				sum += sc[j]
			}
			for k := 0; k < hd; k++ {
				var s float32
				for j := 0; j < n; j++ {
					s += sc[j] / sum * qkv[j*3*d+2*d+h*hd+k]
				}
				o[i*d+h*hd+k] = s
			}
		}
	}
	return naiveMatmul(o, n, d, nl.outW, hidden, nl.outB)
}

func (nl *naiveLayer) ffn(h []float32, n int, eps float32) {
	y := naiveLayerNorm(h, n, hidden, nl.ln2s, nl.ln2b, eps)
	f := naiveMatmul(y, n, hidden, nl.ff1W, ffnDim, nl.ff1B)
	for i, v := range f {
		f[i] = max(v, 0)
	}
	o := naiveMatmul(f, n, ffnDim, nl.ff2W, hidden, nl.ff2B)
	for i := range h {
		h[i] += o[i]
	}
}

// embed returns the unit vector for ids (at most MaxTokens of them).
func (m *naiveModel) embed(ids []int32) []float32 {
	n := len(ids)
	w := m.w
	mean := make([]float32, hidden)
	if n > 0 {
		x := make([]float32, n*embedDim)
		for t, id := range ids {
			for i := 0; i < embedDim; i++ {
				e := m.emb[int(id)*embedDim+i]
				x[t*embedDim+i] = e + (e + w.timing[t*embedDim+i])
			}
		}
		l0 := &m.layers[0]
		res := naiveMatmul(x, n, embedDim, l0.denseW, hidden, l0.denseB)
		a := l0.attention(naiveLayerNorm(x, n, embedDim, l0.ln1s, l0.ln1b, w.lnEps), n)
		h := make([]float32, n*hidden)
		for i := range h {
			h[i] = a[i] + res[i]
		}
		l0.ffn(h, n, w.lnEps)
		l1 := &m.layers[1]
		a = l1.attention(naiveLayerNorm(h, n, hidden, l1.ln1s, l1.ln1b, w.lnEps), n)
		for i := range h {
			h[i] += a[i]
		}
		l1.ffn(h, n, w.lnEps)
		for t := 0; t < n; t++ {
			for i := 0; i < hidden; i++ {
				mean[i] += h[t*hidden+i]
			}
		}
		for i := range mean {
			mean[i] /= float32(n)
		}
	}
	z := naiveMatmul(mean, 1, hidden, m.tanhW, hidden, m.tanhB)
	var ss float32
	for i, v := range z {
		z[i] = float32(math.Tanh(float64(v)))
		ss += z[i] * z[i]
	}
	r := float32(1 / math.Sqrt(float64(max(ss, w.l2Eps))))
	for i := range z {
		z[i] *= r
	}
	return z
}
