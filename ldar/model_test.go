package ldar

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ctxsel/ctxsel"
)

var tinyConfig = Config{Window: 6, Freqs: 2, FreqSigma: 0.3, Dim: 4, Heads: 2, Layers: 2, FFN: 5, Hidden: 3, Head: "softplus", Pool: "attention"}

// randomize gives every parameter a non-trivial value (layer-norm gains and
// biases included), so that the check exercises every path.
func randomize(m *Model, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	for _, t := range m.Tensors {
		for i := range t.W {
			t.W[i] = rng.NormFloat64() * 0.5
		}
	}
}

func tinyPass(t *testing.T, m *Model, n int) *pass {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	scores := make([]float64, n)
	for i := range scores {
		scores[i] = rng.NormFloat64()
	}
	scores[2] += 3
	top := ctxsel.Descending(scores)
	mean, std := curveStats(scores)
	ps := &pass{}
	w := m.Cfg.window(n)
	ps.resize(m.Cfg, w)
	tokens := make([]int, len(top))
	for i := range tokens {
		tokens[i] = 20 + 30*i
	}
	features(top, tokens, w, m.Cfg.numFeatures(), mean, std, ps.x)
	return ps
}

// TestGradientCheck compares the hand-written backward pass with central
// finite differences on every element of every parameter tensor of a tiny
// model (two encoder layers, two heads), for the policy-gradient loss the
// trainer uses: −A·log Beta(qL; αL, βL) − A'·log Beta(qΔ; αΔ, βΔ) − c·H.
func TestGradientCheck(t *testing.T) {
	m, err := newModel(tinyConfig)
	if err != nil {
		t.Fatal(err)
	}
	randomize(m, 1)
	ps := tinyPass(t, m, 9)
	const qL, qD, advL, advD, ent = 0.3, 0.6, 0.7, -1.3, 0.05
	loss := func() float64 {
		m.forward(ps)
		b := ps.beta
		return -advL*betaLogPDF(qL, b[0], b[1]) - advD*betaLogPDF(qD, b[2], b[3]) - ent*(betaEntropy(b[0], b[1])+betaEntropy(b[2], b[3]))
	}
	loss()
	b := ps.beta
	gaL, gbL := betaLogPDFGrad(qL, b[0], b[1])
	gaD, gbD := betaLogPDFGrad(qD, b[2], b[3])
	eaL, ebL := betaEntropyGrad(b[0], b[1])
	eaD, ebD := betaEntropyGrad(b[2], b[3])
	dbeta := [4]float64{-advL*gaL - ent*eaL, -advL*gbL - ent*ebL, -advD*gaD - ent*eaD, -advD*gbD - ent*ebD}
	g := m.newGrads()
	m.backward(ps, dbeta, g)
	const h = 1e-6
	checked := 0
	for _, tn := range m.Tensors {
		nonzero := false
		for _, v := range g[tn.idx] {
			nonzero = nonzero || v != 0
		}
		if !nonzero {
			t.Errorf("%s: gradient is all zero", tn.Name)
		}
		worst := 0.0
		for i := range tn.W {
			old := tn.W[i]
			tn.W[i] = old + h
			lp := loss()
			tn.W[i] = old - h
			lm := loss()
			tn.W[i] = old
			num := (lp - lm) / (2 * h)
			ana := g[tn.idx][i]
			err := math.Abs(num-ana) / max(1e-4, math.Abs(num)+math.Abs(ana))
			worst = max(worst, err)
			checked++
		}
		if worst > 1e-4 {
			t.Errorf("%s: worst relative gradient error %.2e", tn.Name, worst)
		}
	}
	if checked != m.NumParams() {
		t.Fatalf("checked %d of %d parameters", checked, m.NumParams())
	}
}

// TestGradientCheckExpHead repeats the check with the exp head.
func TestGradientCheckExpHead(t *testing.T) {
	cfg := tinyConfig
	cfg.Head = "exp"
	cfg.Layers = 1
	m, _ := newModel(cfg)
	randomize(m, 2)
	ps := tinyPass(t, m, 5)
	loss := func() float64 {
		m.forward(ps)
		b := ps.beta
		return -betaLogPDF(0.8, b[0], b[1]) + 0.5*betaLogPDF(0.1, b[2], b[3])
	}
	loss()
	b := ps.beta
	gaL, gbL := betaLogPDFGrad(0.8, b[0], b[1])
	gaD, gbD := betaLogPDFGrad(0.1, b[2], b[3])
	g := m.newGrads()
	m.backward(ps, [4]float64{-gaL, -gbL, 0.5 * gaD, 0.5 * gbD}, g)
	const h = 1e-6
	for _, tn := range m.Tensors {
		for i := range tn.W {
			old := tn.W[i]
			tn.W[i] = old + h
			lp := loss()
			tn.W[i] = old - h
			lm := loss()
			tn.W[i] = old
			num, ana := (lp-lm)/(2*h), g[tn.idx][i]
			if math.Abs(num-ana)/max(1e-4, math.Abs(num)+math.Abs(ana)) > 1e-4 {
				t.Fatalf("%s[%d]: analytic %v, numeric %v", tn.Name, i, ana, num)
			}
		}
	}
}

// TestGradientCheckFlatten repeats the check with flatten pooling (on a
// curve shorter than the window too: zero padding) and pointer pooling.
func TestGradientCheckFlatten(t *testing.T) {
	cfg := tinyConfig
	cfg.Head, cfg.Layers = "exp", 1
	for _, c := range []struct {
		pool string
		n    int
	}{{"flatten", 4}, {"flatten", 9}, {"pointer", 5}, {"pointer", 9}} {
		cfg.Pool = c.pool
		n := c.n
		m, err := newModel(cfg)
		if err != nil {
			t.Fatal(err)
		}
		randomize(m, 3)
		ps := tinyPass(t, m, n)
		loss := func() float64 {
			m.forward(ps)
			b := ps.beta
			return -betaLogPDF(0.8, b[0], b[1]) + 0.5*betaLogPDF(0.1, b[2], b[3])
		}
		loss()
		b := ps.beta
		gaL, gbL := betaLogPDFGrad(0.8, b[0], b[1])
		gaD, gbD := betaLogPDFGrad(0.1, b[2], b[3])
		g := m.newGrads()
		m.backward(ps, [4]float64{-gaL, -gbL, 0.5 * gaD, 0.5 * gbD}, g)
		const h = 1e-6
		for _, tn := range m.Tensors {
			for i := range tn.W {
				old := tn.W[i]
				tn.W[i] = old + h
				lp := loss()
				tn.W[i] = old - h
				lm := loss()
				tn.W[i] = old
				num, ana := (lp-lm)/(2*h), g[tn.idx][i]
				if math.Abs(num-ana)/max(1e-4, math.Abs(num)+math.Abs(ana)) > 1e-4 {
					t.Fatalf("n=%d %s[%d]: analytic %v, numeric %v", n, tn.Name, i, ana, num)
				}
			}
		}
	}
}
