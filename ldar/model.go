package ldar

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Config sizes a policy network.
type Config struct {
	// Window is how many top ranks the policy reads and bands over (the
	// whole curve when it has fewer). 0 reads the whole curve, as the paper
	// does (slow for long curves: attention is quadratic in it).
	Window int `json:"window"`
	// Freqs is the number of learned frequencies per input feature in the
	// periodic embedding.
	Freqs int `json:"freqs"`
	// FreqSigma is the standard deviation of the initial frequencies.
	FreqSigma float64 `json:"freq_sigma"`
	// Dim is the token width d; Heads divides it.
	Dim    int `json:"dim"`
	Heads  int `json:"heads"`
	Layers int `json:"layers"`
	// FFN is the width of each encoder layer's feed-forward block.
	FFN int `json:"ffn"`
	// Hidden is the width of the MLP after attention pooling.
	Hidden int `json:"hidden"`
	// Head is the activation of the four Beta-parameter heads: "softplus"
	// (the paper) or "exp" (log-parametrised concentrations). Both add 1.
	Head string `json:"head"`
	// Pool is how the encoder's tokens become one vector for the MLP:
	// "attention" (the paper: softmax-weighted mean by a learned scorer) or
	// "flatten" (the Window token vectors concatenated in rank order, zeros
	// past the curve's end; needs Window > 0), which lets the MLP read each
	// rank's state in place, or "pointer": attention pooling that also
	// hands the MLP the attention-weighted mean of the raw token features
	// (where in the window, and at what token cost, the attention sits).
	Pool string `json:"pool"`
	// Channels is how many component score curves (ctxsel.Candidate's
	// Channels: a hybrid's dense and lexical scores) the policy reads
	// beside the curve it cuts; 0 reads that curve alone. See
	// channelFeatures.
	Channels int `json:"channels,omitempty"`
}

func (c Config) poolDim() int {
	switch c.Pool {
	case "flatten":
		return c.Window * c.Dim
	case "pointer":
		return c.Dim + c.numFeatures()
	}
	return c.Dim
}

// DefaultConfig is the configuration of the shipped policy. On HotpotQA
// (use-lite scores, λ = 0.5) it beat the paper-sized network, which did not
// leave a fixed k in the epochs it could afford, at 1/86 of the cost per
// step; flatten pooling beat attention pooling (+7.6 against +5.9 recall
// points at matched tokens). See docs/band.md.
var DefaultConfig = Config{Window: 32, Freqs: 8, FreqSigma: 0.05, Dim: 32, Heads: 4, Layers: 1, FFN: 64, Hidden: 32, Head: "exp", Pool: "flatten"}

// PaperConfig is the size in the LDAR paper (Table 4): d = 256, 2 layers,
// 4 heads, feed-forward width 256, over the whole curve.
var PaperConfig = Config{Window: 0, Freqs: 16, FreqSigma: 0.05, Dim: 256, Heads: 4, Layers: 2, FFN: 256, Hidden: 256, Head: "softplus", Pool: "attention"}

func (c Config) validate() error {
	switch {
	case c.Window < 0 || c.Window > 1<<16:
		return fmt.Errorf("window %d out of range [0, 65536]", c.Window)
	case c.Freqs < 1 || c.Freqs > 1024:
		return fmt.Errorf("freqs %d out of range [1, 1024]", c.Freqs)
	case !(c.FreqSigma > 0) || math.IsInf(c.FreqSigma, 0):
		return fmt.Errorf("freq_sigma %v must be positive", c.FreqSigma)
	case c.Dim < 1 || c.Dim > 4096 || c.Heads < 1 || c.Dim%c.Heads != 0:
		return fmt.Errorf("dim %d must be in [1, 4096] and a multiple of heads %d", c.Dim, c.Heads)
	case c.Layers < 0 || c.Layers > 16:
		return fmt.Errorf("layers %d out of range [0, 16]", c.Layers)
	case c.FFN < 1 || c.FFN > 16384 || c.Hidden < 1 || c.Hidden > 16384:
		return fmt.Errorf("ffn %d and hidden %d must be in [1, 16384]", c.FFN, c.Hidden)
	case c.Head != "softplus" && c.Head != "exp":
		return fmt.Errorf("head %q: want softplus or exp", c.Head)
	case c.Pool != "attention" && c.Pool != "flatten" && c.Pool != "pointer":
		return fmt.Errorf("pool %q: want attention, pointer or flatten", c.Pool)
	case c.Channels < 0 || c.Channels > 8:
		return fmt.Errorf("channels %d out of range [0, 8]", c.Channels)
	case c.Pool == "flatten" && (c.Window < 1 || c.Window*c.Dim > 1<<20):
		return fmt.Errorf("pool flatten needs 1 ≤ window·dim ≤ 2^20 (window %d, dim %d)", c.Window, c.Dim)
	}
	return nil
}

// Tensor is one named parameter array (row-major).
type Tensor struct {
	Name  string
	Shape []int
	W     []float64
	idx   int
}

type layerParams struct {
	ln1g, ln1b, wq, bq, wk, bk, wv, bv, wo, bo, ln2g, ln2b, w1, b1, w2, b2 *Tensor
}

// Model is the policy network: periodic embeddings of each token's
// features (learned frequencies, sin/cos, linear, ReLU, layer norm), a
// pre-LN bidirectional Transformer encoder, attention pooling, an MLP and
// four heads (softplus as in the paper, or exp; plus 1): (αL, βL) for the
// lower quantile, (αΔ, βΔ) for the band width.
type Model struct {
	Cfg     Config
	Tensors []*Tensor

	freq, we, be, lneg, lneb *Tensor
	layers                   []layerParams
	lnfg, lnfb, wp           *Tensor
	wg, bg, wout, bout       *Tensor
}

// newModel builds a model with its tensors allocated (zeros).
func newModel(cfg Config) (*Model, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	m := &Model{Cfg: cfg}
	add := func(name string, shape ...int) *Tensor {
		n := 1
		for _, s := range shape {
			n *= s
		}
		t := &Tensor{Name: name, Shape: shape, W: make([]float64, n), idx: len(m.Tensors)}
		m.Tensors = append(m.Tensors, t)
		return t
	}
	d, in := cfg.Dim, 2*cfg.Freqs*cfg.numFeatures()
	m.freq = add("embed.freq", cfg.numFeatures(), cfg.Freqs)
	m.we = add("embed.w", in, d)
	m.be = add("embed.b", d)
	m.lneg = add("embed.ln.g", d)
	m.lneb = add("embed.ln.b", d)
	for l := range cfg.Layers {
		p := func(s string) string { return fmt.Sprintf("layer%d.%s", l, s) }
		m.layers = append(m.layers, layerParams{
			ln1g: add(p("ln1.g"), d), ln1b: add(p("ln1.b"), d),
			wq: add(p("attn.wq"), d, d), bq: add(p("attn.bq"), d),
			wk: add(p("attn.wk"), d, d), bk: add(p("attn.bk"), d),
			wv: add(p("attn.wv"), d, d), bv: add(p("attn.bv"), d),
			wo: add(p("attn.wo"), d, d), bo: add(p("attn.bo"), d),
			ln2g: add(p("ln2.g"), d), ln2b: add(p("ln2.b"), d),
			w1: add(p("ffn.w1"), d, cfg.FFN), b1: add(p("ffn.b1"), cfg.FFN),
			w2: add(p("ffn.w2"), cfg.FFN, d), b2: add(p("ffn.b2"), d),
		})
	}
	m.lnfg = add("final.ln.g", d)
	m.lnfb = add("final.ln.b", d)
	if cfg.Pool != "flatten" {
		m.wp = add("pool.w", d)
	}
	m.wg = add("mlp.w", cfg.poolDim(), cfg.Hidden)
	m.bg = add("mlp.b", cfg.Hidden)
	m.wout = add("head.w", cfg.Hidden, 4)
	m.bout = add("head.b", 4)
	return m, nil
}

// NewModel returns a freshly initialised model.
func NewModel(cfg Config, seed uint64) (*Model, error) {
	m, err := newModel(cfg)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x1da2))
	normal := func(t *Tensor, std float64) {
		for i := range t.W {
			t.W[i] = rng.NormFloat64() * std
		}
	}
	fill := func(t *Tensor, v float64) {
		for i := range t.W {
			t.W[i] = v
		}
	}
	normal(m.freq, cfg.FreqSigma)
	normal(m.we, 1/math.Sqrt(float64(m.we.Shape[0])))
	fill(m.lneg, 1)
	for _, l := range m.layers {
		fill(l.ln1g, 1)
		fill(l.ln2g, 1)
		for _, t := range []*Tensor{l.wq, l.wk, l.wv, l.wo, l.w1} {
			normal(t, 1/math.Sqrt(float64(t.Shape[0])))
		}
		normal(l.w2, 0.5/math.Sqrt(float64(l.w2.Shape[0])))
	}
	fill(m.lnfg, 1)
	if m.wp != nil {
		normal(m.wp, 0.02)
	}
	normal(m.wg, 1/math.Sqrt(float64(m.wg.Shape[0])))
	normal(m.wout, 0.01)
	return m, nil
}

// NumParams is the number of scalar parameters.
func (m *Model) NumParams() int {
	n := 0
	for _, t := range m.Tensors {
		n += len(t.W)
	}
	return n
}

// grads holds one gradient array per tensor.
type grads [][]float64

func (m *Model) newGrads() grads {
	g := make(grads, len(m.Tensors))
	for i, t := range m.Tensors {
		g[i] = make([]float64, len(t.W))
	}
	return g
}

func (g grads) zero() {
	for _, a := range g {
		clear(a)
	}
}

func (g grads) add(o grads) {
	for i, a := range g {
		for j, v := range o[i] {
			a[j] += v
		}
	}
}

// ---- forward / backward on one curve -------------------------------------

type lnCache struct{ xhat, rstd []float64 }

type layerCache struct {
	in, y1        []float64 // m×d
	q, k, v, o    []float64 // m×d
	p             []float64 // heads×m×m attention weights
	mid, y2       []float64 // m×d
	f1, r1        []float64 // m×ffn
	ln1, ln2      lnCache
	attn, f2, out []float64 // m×d
}

// pass holds one forward pass's activations for the backward pass.
type pass struct {
	m              int
	x, e, h0, x0   []float64
	lne            lnCache
	layers         []layerCache
	hf             []float64
	lnf            lnCache
	a, w, z        []float64
	g1, g, o, beta []float64
	// scratch for backward
	dx, dy, dtmp, dffn, dp []float64
	dq, dk, dv, dt2, de    []float64
}

func grow(s []float64, n int) []float64 {
	if cap(s) < n {
		return make([]float64, n)
	}
	return s[:n]
}

func (ps *pass) resize(cfg Config, m int) {
	d := cfg.Dim
	ps.m = m
	ps.x = grow(ps.x, m*cfg.numFeatures())
	ps.e = grow(ps.e, m*2*cfg.Freqs*cfg.numFeatures())
	ps.h0 = grow(ps.h0, m*d)
	ps.x0 = grow(ps.x0, m*d)
	ps.lne.xhat, ps.lne.rstd = grow(ps.lne.xhat, m*d), grow(ps.lne.rstd, m)
	if len(ps.layers) != cfg.Layers {
		ps.layers = make([]layerCache, cfg.Layers)
	}
	for i := range ps.layers {
		l := &ps.layers[i]
		for _, p := range []*[]float64{&l.in, &l.y1, &l.q, &l.k, &l.v, &l.o, &l.mid, &l.y2, &l.attn, &l.f2, &l.out, &l.ln1.xhat, &l.ln2.xhat} {
			*p = grow(*p, m*d)
		}
		l.ln1.rstd, l.ln2.rstd = grow(l.ln1.rstd, m), grow(l.ln2.rstd, m)
		l.p = grow(l.p, cfg.Heads*m*m)
		l.f1, l.r1 = grow(l.f1, m*cfg.FFN), grow(l.r1, m*cfg.FFN)
	}
	ps.hf = grow(ps.hf, m*d)
	ps.lnf.xhat, ps.lnf.rstd = grow(ps.lnf.xhat, m*d), grow(ps.lnf.rstd, m)
	ps.a, ps.w, ps.z = grow(ps.a, m), grow(ps.w, m), grow(ps.z, cfg.poolDim())
	ps.g1, ps.g = grow(ps.g1, cfg.Hidden), grow(ps.g, cfg.Hidden)
	ps.o, ps.beta = grow(ps.o, 4), grow(ps.beta, 4)
	ps.dx, ps.dy, ps.dtmp = grow(ps.dx, m*d), grow(ps.dy, m*d), grow(ps.dtmp, m*d)
	ps.dffn = grow(ps.dffn, max(m*max(cfg.FFN, cfg.Hidden, 2*cfg.Freqs*cfg.numFeatures()), cfg.poolDim()))
	ps.dp = grow(ps.dp, max(m*m, m))
	ps.dq, ps.dk, ps.dv, ps.dt2 = grow(ps.dq, m*d), grow(ps.dk, m*d), grow(ps.dv, m*d), grow(ps.dt2, m*d)
	ps.de = grow(ps.de, m*2*cfg.Freqs*cfg.numFeatures())
}

// linear computes y = x·W + b for m rows (x: m×in, W: in×out).
func linear(y, x, w, b []float64, m, in, out int) {
	for n := range m {
		yr := y[n*out : (n+1)*out]
		copy(yr, b)
		xr := x[n*in : (n+1)*in]
		for i, xv := range xr {
			if xv == 0 {
				continue
			}
			wr := w[i*out : (i+1)*out]
			for j, wv := range wr {
				yr[j] += xv * wv
			}
		}
	}
}

// linearBack accumulates dW, db and (when dx is not nil) sets dx for
// y = x·W + b.
func linearBack(dx, dw, db, x, w, dy []float64, m, in, out int) {
	for n := range m {
		dyr := dy[n*out : (n+1)*out]
		xr := x[n*in : (n+1)*in]
		for j, v := range dyr {
			db[j] += v
		}
		for i, xv := range xr {
			if xv == 0 {
				continue
			}
			dwr := dw[i*out : (i+1)*out]
			for j, v := range dyr {
				dwr[j] += xv * v
			}
		}
		if dx != nil {
			dxr := dx[n*in : (n+1)*in]
			for i := range dxr {
				wr := w[i*out : (i+1)*out]
				s := 0.0
				for j, v := range dyr {
					s += v * wr[j]
				}
				dxr[i] = s
			}
		}
	}
}

const lnEps = 1e-5

func layerNorm(y, x, g, b []float64, c lnCache, m, d int) {
	for n := range m {
		xr := x[n*d : (n+1)*d]
		mu := 0.0
		for _, v := range xr {
			mu += v
		}
		mu /= float64(d)
		vr := 0.0
		for _, v := range xr {
			vr += (v - mu) * (v - mu)
		}
		rstd := 1 / math.Sqrt(vr/float64(d)+lnEps)
		c.rstd[n] = rstd
		xh := c.xhat[n*d : (n+1)*d]
		yr := y[n*d : (n+1)*d]
		for i, v := range xr {
			xh[i] = (v - mu) * rstd
			yr[i] = xh[i]*g[i] + b[i]
		}
	}
}

// layerNormBack accumulates dg, db and adds the input gradient to dx.
func layerNormBack(dx, dg, db, dy, g []float64, c lnCache, m, d int) {
	for n := range m {
		dyr := dy[n*d : (n+1)*d]
		xh := c.xhat[n*d : (n+1)*d]
		var s1, s2 float64
		for i, v := range dyr {
			dg[i] += v * xh[i]
			db[i] += v
			dxh := v * g[i]
			s1 += dxh
			s2 += dxh * xh[i]
		}
		s1 /= float64(d)
		s2 /= float64(d)
		r := c.rstd[n]
		dxr := dx[n*d : (n+1)*d]
		for i, v := range dyr {
			dxr[i] += r * (v*g[i] - s1 - xh[i]*s2)
		}
	}
}

func softplus(x float64) float64 {
	if x > 30 {
		return x
	}
	return math.Log1p(math.Exp(x))
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// forward runs the network on m tokens whose features are in ps.x and
// leaves the four Beta parameters in ps.beta.
func (md *Model) forward(ps *pass) {
	cfg := md.Cfg
	m, d, K := ps.m, cfg.Dim, cfg.Freqs
	in := 2 * K * md.Cfg.numFeatures()
	// periodic embedding
	for n := range m {
		er := ps.e[n*in : (n+1)*in]
		for f := range md.Cfg.numFeatures() {
			xv := ps.x[n*md.Cfg.numFeatures()+f]
			for j := range K {
				u := 2 * math.Pi * md.freq.W[f*K+j] * xv
				s, c := math.Sincos(u)
				er[f*2*K+j] = s
				er[f*2*K+K+j] = c
			}
		}
	}
	linear(ps.h0, ps.e, md.we.W, md.be.W, m, in, d)
	for i, v := range ps.h0 {
		ps.dtmp[i] = max(v, 0)
	}
	layerNorm(ps.x0, ps.dtmp[:m*d], md.lneg.W, md.lneb.W, ps.lne, m, d)
	cur := ps.x0
	for li := range md.layers {
		lp, lc := &md.layers[li], &ps.layers[li]
		copy(lc.in, cur)
		layerNorm(lc.y1, lc.in, lp.ln1g.W, lp.ln1b.W, lc.ln1, m, d)
		linear(lc.q, lc.y1, lp.wq.W, lp.bq.W, m, d, d)
		linear(lc.k, lc.y1, lp.wk.W, lp.bk.W, m, d, d)
		linear(lc.v, lc.y1, lp.wv.W, lp.bv.W, m, d, d)
		md.attention(lc, m)
		linear(lc.attn, lc.o, lp.wo.W, lp.bo.W, m, d, d)
		for i := range lc.mid {
			lc.mid[i] = lc.in[i] + lc.attn[i]
		}
		layerNorm(lc.y2, lc.mid, lp.ln2g.W, lp.ln2b.W, lc.ln2, m, d)
		linear(lc.f1, lc.y2, lp.w1.W, lp.b1.W, m, d, cfg.FFN)
		for i, v := range lc.f1 {
			lc.r1[i] = max(v, 0)
		}
		linear(lc.f2, lc.r1, lp.w2.W, lp.b2.W, m, cfg.FFN, d)
		for i := range lc.out {
			lc.out[i] = lc.mid[i] + lc.f2[i]
		}
		cur = lc.out
	}
	layerNorm(ps.hf, cur, md.lnfg.W, md.lnfb.W, ps.lnf, m, d)
	if cfg.Pool == "flatten" {
		clear(ps.z)
		copy(ps.z, ps.hf[:m*d])
	} else {
		md.attentionPool(ps)
	}
	linear(ps.g1, ps.z, md.wg.W, md.bg.W, 1, cfg.poolDim(), cfg.Hidden)
	for i, v := range ps.g1 {
		ps.g[i] = max(v, 0)
	}
	linear(ps.o, ps.g, md.wout.W, md.bout.W, 1, cfg.Hidden, 4)
	for i, v := range ps.o {
		ps.beta[i] = md.headAct(v) + betaFloor
	}
}

func (md *Model) attentionPool(ps *pass) {
	m, d := ps.m, md.Cfg.Dim
	amax := math.Inf(-1)
	for n := range m {
		s := 0.0
		hr := ps.hf[n*d : (n+1)*d]
		for i, v := range hr {
			s += v * md.wp.W[i]
		}
		ps.a[n] = s
		amax = max(amax, s)
	}
	sum := 0.0
	for n := range m {
		ps.w[n] = math.Exp(ps.a[n] - amax)
		sum += ps.w[n]
	}
	clear(ps.z)
	for n := range m {
		ps.w[n] /= sum
		hr := ps.hf[n*d : (n+1)*d]
		for i, v := range hr {
			ps.z[i] += ps.w[n] * v
		}
		if md.Cfg.Pool == "pointer" {
			for f := range md.Cfg.numFeatures() {
				ps.z[d+f] += ps.w[n] * ps.x[n*md.Cfg.numFeatures()+f]
			}
		}
	}
}

// maxHeadExp bounds the exp head (e^8 ≈ 3000: a band within about half a
// rank of a 64-rank window) so that the policy never becomes so sharp that
// every sample is the same band and learning stops.
const maxHeadExp = 8

// The exp head is exp(M·tanh(o/M)) with M = maxHeadExp: exp(o) for
// moderate o, smoothly bounded (its gradient never vanishes outright).
func (md *Model) headAct(o float64) float64 {
	if md.Cfg.Head == "exp" {
		return math.Exp(maxHeadExp * math.Tanh(o/maxHeadExp))
	}
	return softplus(o)
}

func (md *Model) headGrad(o float64) float64 {
	if md.Cfg.Head == "exp" {
		th := math.Tanh(o / maxHeadExp)
		return math.Exp(maxHeadExp*th) * (1 - th*th)
	}
	return sigmoid(o)
}

// betaFloor is added to every softplus head: with α, β ≥ 1 the Beta
// densities are unimodal and bounded, so log-density gradients stay finite
// for samples near 0 and 1 (the paper adds nothing; this is for stability).
const betaFloor = 1

func (md *Model) attention(lc *layerCache, m int) {
	cfg := md.Cfg
	d, H := cfg.Dim, cfg.Heads
	dh := d / H
	scale := 1 / math.Sqrt(float64(dh))
	for h := range H {
		p := lc.p[h*m*m : (h+1)*m*m]
		for n := range m {
			qr := lc.q[n*d+h*dh : n*d+(h+1)*dh]
			pr := p[n*m : (n+1)*m]
			mx := math.Inf(-1)
			for t := range m {
				kr := lc.k[t*d+h*dh : t*d+(h+1)*dh]
				s := 0.0
				for i, v := range qr {
					s += v * kr[i]
				}
				s *= scale
				pr[t] = s
				mx = max(mx, s)
			}
			sum := 0.0
			for t := range pr {
				pr[t] = math.Exp(pr[t] - mx)
				sum += pr[t]
			}
			or := lc.o[n*d+h*dh : n*d+(h+1)*dh]
			clear(or)
			for t := range pr {
				pr[t] /= sum
				vr := lc.v[t*d+h*dh : t*d+(h+1)*dh]
				for i, v := range vr {
					or[i] += pr[t] * v
				}
			}
		}
	}
}

// backward accumulates into g the gradient of a loss whose gradient with
// respect to the four Beta parameters is dbeta, for the pass in ps.
func (md *Model) backward(ps *pass, dbeta [4]float64, g grads) {
	cfg := md.Cfg
	m, d := ps.m, cfg.Dim
	var do [4]float64
	for i := range do {
		do[i] = dbeta[i] * md.headGrad(ps.o[i])
	}
	dg := ps.dffn[:cfg.Hidden]
	linearBack(dg, g[md.wout.idx], g[md.bout.idx], ps.g, md.wout.W, do[:], 1, cfg.Hidden, 4)
	for i, v := range ps.g1 {
		if v <= 0 {
			dg[i] = 0
		}
	}
	dz := ps.dffn[:cfg.poolDim()]
	dg = ps.dtmp[:cfg.Hidden]
	copy(dg, ps.dffn[:cfg.Hidden])
	linearBack(dz, g[md.wg.idx], g[md.bg.idx], ps.z, md.wg.W, dg, 1, cfg.poolDim(), cfg.Hidden)
	dh := ps.dy // gradient w.r.t. hf
	if cfg.Pool == "flatten" {
		copy(dh, dz[:m*d])
	} else {
		md.attentionPoolBack(ps, dz, dh, g)
	}
	// final layer norm: dx = d(cur)
	dx := ps.dx
	clear(dx)
	layerNormBack(dx, g[md.lnfg.idx], g[md.lnfb.idx], dh, md.lnfg.W, ps.lnf, m, d)
	md.encoderBack(ps, dx, g)
}

func (md *Model) attentionPoolBack(ps *pass, dz, dh []float64, g grads) {
	m, d := ps.m, md.Cfg.Dim
	dwsum := 0.0
	dw := ps.dp[:m]
	for n := range m {
		hr := ps.hf[n*d : (n+1)*d]
		s := 0.0
		for i, v := range hr {
			s += v * dz[i]
		}
		if md.Cfg.Pool == "pointer" {
			for f := range md.Cfg.numFeatures() {
				s += ps.x[n*md.Cfg.numFeatures()+f] * dz[d+f]
			}
		}
		dw[n] = s
		dwsum += ps.w[n] * s
	}
	gwp := g[md.wp.idx]
	for n := range m {
		da := ps.w[n] * (dw[n] - dwsum)
		hr := ps.hf[n*d : (n+1)*d]
		dhr := dh[n*d : (n+1)*d]
		for i := range dhr {
			dhr[i] = ps.w[n]*dz[i] + da*md.wp.W[i]
			gwp[i] += da * hr[i]
		}
	}
}

// encoderBack backpropagates dx, the gradient with respect to the encoder
// output, through the layers and the embedding.
func (md *Model) encoderBack(ps *pass, dx []float64, g grads) {
	cfg := md.Cfg
	m, d, K := ps.m, cfg.Dim, cfg.Freqs
	for li := len(md.layers) - 1; li >= 0; li-- {
		lp, lc := &md.layers[li], &ps.layers[li]
		// out = mid + f2: dx is d(out) = d(mid) (so far) = d(f2)
		dr1 := ps.dffn[:m*cfg.FFN]
		linearBack(dr1, g[lp.w2.idx], g[lp.b2.idx], lc.r1, lp.w2.W, dx, m, cfg.FFN, d)
		for i, v := range lc.f1 {
			if v <= 0 {
				dr1[i] = 0
			}
		}
		dy2 := ps.dy
		linearBack(dy2, g[lp.w1.idx], g[lp.b1.idx], lc.y2, lp.w1.W, dr1, m, d, cfg.FFN)
		layerNormBack(dx, g[lp.ln2g.idx], g[lp.ln2b.idx], dy2, lp.ln2g.W, lc.ln2, m, d)
		// mid = in + attn: dx is d(mid) = d(in) (so far) = d(attn)
		dov := ps.dy
		linearBack(dov, g[lp.wo.idx], g[lp.bo.idx], lc.o, lp.wo.W, dx, m, d, d)
		dq, dk, dv := ps.dq, ps.dk, ps.dv
		clear(dq)
		clear(dk)
		clear(dv)
		md.attentionBack(lc, m, dov, dq, dk, dv, ps.dp)
		dy1 := ps.dtmp
		tmp := ps.dt2
		linearBack(dy1, g[lp.wq.idx], g[lp.bq.idx], lc.y1, lp.wq.W, dq, m, d, d)
		linearBack(tmp, g[lp.wk.idx], g[lp.bk.idx], lc.y1, lp.wk.W, dk, m, d, d)
		for i, v := range tmp {
			dy1[i] += v
		}
		linearBack(tmp, g[lp.wv.idx], g[lp.bv.idx], lc.y1, lp.wv.W, dv, m, d, d)
		for i, v := range tmp {
			dy1[i] += v
		}
		layerNormBack(dx, g[lp.ln1g.idx], g[lp.ln1b.idx], dy1, lp.ln1g.W, lc.ln1, m, d)
	}
	// embedding layer norm; its input was relu(h0)
	da0 := ps.dy
	clear(da0)
	layerNormBack(da0, g[md.lneg.idx], g[md.lneb.idx], dx, md.lneg.W, ps.lne, m, d)
	for i, v := range ps.h0 {
		if v <= 0 {
			da0[i] = 0
		}
	}
	in := 2 * K * md.Cfg.numFeatures()
	de := ps.de
	linearBack(de, g[md.we.idx], g[md.be.idx], ps.e, md.we.W, da0, m, in, d)
	gf := g[md.freq.idx]
	for n := range m {
		er := ps.e[n*in : (n+1)*in]
		der := de[n*in : (n+1)*in]
		for f := range md.Cfg.numFeatures() {
			xv := ps.x[n*md.Cfg.numFeatures()+f]
			for j := range K {
				s, c := er[f*2*K+j], er[f*2*K+K+j]
				gf[f*K+j] += 2 * math.Pi * xv * (der[f*2*K+j]*c - der[f*2*K+K+j]*s)
			}
		}
	}
}

func (md *Model) attentionBack(lc *layerCache, m int, dov, dq, dk, dv, dp []float64) {
	cfg := md.Cfg
	d, H := cfg.Dim, cfg.Heads
	dh := d / H
	scale := 1 / math.Sqrt(float64(dh))
	dp = dp[:m]
	for h := range H {
		p := lc.p[h*m*m : (h+1)*m*m]
		for n := range m {
			pr := p[n*m : (n+1)*m]
			dor := dov[n*d+h*dh : n*d+(h+1)*dh]
			dot := 0.0
			for t := range m {
				vr := lc.v[t*d+h*dh : t*d+(h+1)*dh]
				dvr := dv[t*d+h*dh : t*d+(h+1)*dh]
				s := 0.0
				for i, v := range dor {
					s += v * vr[i]
					dvr[i] += pr[t] * v
				}
				dp[t] = s
				dot += s * pr[t]
			}
			qr := lc.q[n*d+h*dh : n*d+(h+1)*dh]
			dqr := dq[n*d+h*dh : n*d+(h+1)*dh]
			for t := range m {
				ds := pr[t] * (dp[t] - dot) * scale
				if ds == 0 {
					continue
				}
				kr := lc.k[t*d+h*dh : t*d+(h+1)*dh]
				dkr := dk[t*d+h*dh : t*d+(h+1)*dh]
				for i := range dqr {
					dqr[i] += ds * kr[i]
					dkr[i] += ds * qr[i]
				}
			}
		}
	}
}
