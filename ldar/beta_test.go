package ldar

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestBetaLogPDF checks the log density against a direct evaluation with
// math.Gamma and its normalisation by numerical integration.
func TestBetaLogPDF(t *testing.T) {
	for _, c := range []struct{ x, a, b float64 }{
		{0.5, 1, 1}, {0.3, 2, 5}, {0.9, 7.5, 1.2}, {0.01, 1.1, 30}, {0.999, 200, 1.5},
	} {
		want := math.Log(math.Gamma(c.a+c.b)/(math.Gamma(c.a)*math.Gamma(c.b))) + (c.a-1)*math.Log(c.x) + (c.b-1)*math.Log(1-c.x)
		if c.a+c.b > 150 { // Γ overflows: compare with Lgamma terms directly
			la, _ := math.Lgamma(c.a)
			lb, _ := math.Lgamma(c.b)
			lab, _ := math.Lgamma(c.a + c.b)
			want = lab - la - lb + (c.a-1)*math.Log(c.x) + (c.b-1)*math.Log(1-c.x)
		}
		if got := betaLogPDF(c.x, c.a, c.b); math.Abs(got-want) > 1e-9*max(1, math.Abs(want)) {
			t.Errorf("betaLogPDF(%v; %v, %v) = %v, want %v", c.x, c.a, c.b, got, want)
		}
		// ∫ density = 1 (midpoint rule)
		const n = 200000
		sum := 0.0
		for i := range n {
			sum += math.Exp(betaLogPDF((float64(i)+0.5)/n, c.a, c.b)) / n
		}
		if c.a >= 1 && c.b >= 1 && math.Abs(sum-1) > 1e-3 {
			t.Errorf("Beta(%v, %v) integrates to %v", c.a, c.b, sum)
		}
	}
}

func TestDigammaTrigamma(t *testing.T) {
	const euler = 0.5772156649015329
	cases := []struct{ x, psi, psi1 float64 }{
		{1, -euler, math.Pi * math.Pi / 6},
		{0.5, -euler - 2*math.Ln2, math.Pi * math.Pi / 2},
		{2, 1 - euler, math.Pi*math.Pi/6 - 1},
		{10, 2.251752589066721, 0.10516633568168575},
	}
	for _, c := range cases {
		if got := digamma(c.x); math.Abs(got-c.psi) > 1e-10 {
			t.Errorf("digamma(%v) = %v, want %v", c.x, got, c.psi)
		}
		if got := trigamma(c.x); math.Abs(got-c.psi1) > 1e-10 {
			t.Errorf("trigamma(%v) = %v, want %v", c.x, got, c.psi1)
		}
	}
	// digamma is the derivative of Lgamma
	for _, x := range []float64{0.3, 1.7, 4.2, 55} {
		h := 1e-5
		lp, _ := math.Lgamma(x + h)
		lm, _ := math.Lgamma(x - h)
		if got, want := digamma(x), (lp-lm)/(2*h); math.Abs(got-want) > 1e-6 {
			t.Errorf("digamma(%v) = %v, finite difference of Lgamma %v", x, got, want)
		}
	}
	if !math.IsNaN(digamma(0)) || !math.IsNaN(trigamma(-1)) {
		t.Error("digamma/trigamma of non-positive x should be NaN")
	}
}

func TestBetaGradients(t *testing.T) {
	for _, c := range []struct{ x, a, b float64 }{{0.3, 2, 5}, {0.9, 7.5, 1.2}, {0.5, 1.01, 1.01}} {
		h := 1e-6
		da, db := betaLogPDFGrad(c.x, c.a, c.b)
		na := (betaLogPDF(c.x, c.a+h, c.b) - betaLogPDF(c.x, c.a-h, c.b)) / (2 * h)
		nb := (betaLogPDF(c.x, c.a, c.b+h) - betaLogPDF(c.x, c.a, c.b-h)) / (2 * h)
		if math.Abs(da-na) > 1e-6 || math.Abs(db-nb) > 1e-6 {
			t.Errorf("log-density gradient at %+v: (%v, %v), numeric (%v, %v)", c, da, db, na, nb)
		}
		ea, eb := betaEntropyGrad(c.a, c.b)
		na = (betaEntropy(c.a+h, c.b) - betaEntropy(c.a-h, c.b)) / (2 * h)
		nb = (betaEntropy(c.a, c.b+h) - betaEntropy(c.a, c.b-h)) / (2 * h)
		if math.Abs(ea-na) > 1e-6 || math.Abs(eb-nb) > 1e-6 {
			t.Errorf("entropy gradient at %+v: (%v, %v), numeric (%v, %v)", c, ea, eb, na, nb)
		}
	}
	if h := betaEntropy(1, 1); math.Abs(h) > 1e-12 {
		t.Errorf("entropy of Beta(1,1) = %v, want 0", h)
	}
}

func TestSampleBeta(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct{ a, b float64 }{{2, 5}, {0.5, 0.5}, {30, 2}, {1, 1}} {
		const n = 40000
		var s, s2 float64
		for range n {
			x := sampleBeta(rng, c.a, c.b)
			if !(x > 0 && x < 1) {
				t.Fatalf("sample %v outside (0, 1)", x)
			}
			s += x
			s2 += x * x
		}
		mean := s / n
		v := s2/n - mean*mean
		wm := c.a / (c.a + c.b)
		wv := c.a * c.b / ((c.a + c.b) * (c.a + c.b) * (c.a + c.b + 1))
		if math.Abs(mean-wm) > 4*math.Sqrt(wv/n) || math.Abs(v-wv) > 0.05*wv {
			t.Errorf("Beta(%v, %v): sample mean %v var %v, want %v %v", c.a, c.b, mean, v, wm, wv)
		}
	}
}
