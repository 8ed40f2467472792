package ldar

import (
	"math"
	"math/rand/v2"
)

// lbeta is log B(a, b) = lgamma(a) + lgamma(b) − lgamma(a+b).
func lbeta(a, b float64) float64 {
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	return la + lb - lab
}

// digamma is ψ(x) = d/dx log Γ(x) for x > 0: the recurrence ψ(x) = ψ(x+1) − 1/x
// up to x ≥ 10, then the asymptotic series (error < 1e-14 there).
func digamma(x float64) float64 {
	if x <= 0 || math.IsNaN(x) {
		return math.NaN()
	}
	r := 0.0
	for x < 10 {
		r -= 1 / x
		x++
	}
	f := 1 / (x * x)
	return r + math.Log(x) - 0.5/x - f*(1.0/12-f*(1.0/120-f*(1.0/252-f*(1.0/240-f*(1.0/132)))))
}

// trigamma is ψ'(x) for x > 0, by the same recurrence and asymptotic series.
func trigamma(x float64) float64 {
	if x <= 0 || math.IsNaN(x) {
		return math.NaN()
	}
	r := 0.0
	for x < 10 {
		r += 1 / (x * x)
		x++
	}
	f := 1 / (x * x)
	return r + 1/x + f/2 + (f/x)*(1.0/6-f*(1.0/30-f*(1.0/42-f*(1.0/30))))
}

// betaLogPDF is log of the Beta(a, b) density at x in (0, 1).
func betaLogPDF(x, a, b float64) float64 {
	return (a-1)*math.Log(x) + (b-1)*math.Log1p(-x) - lbeta(a, b)
}

// betaLogPDFGrad returns ∂/∂a and ∂/∂b of betaLogPDF(x, a, b).
func betaLogPDFGrad(x, a, b float64) (da, db float64) {
	pab := digamma(a + b)
	return math.Log(x) - digamma(a) + pab, math.Log1p(-x) - digamma(b) + pab
}

// betaEntropy is the differential entropy of Beta(a, b).
func betaEntropy(a, b float64) float64 {
	return lbeta(a, b) - (a-1)*digamma(a) - (b-1)*digamma(b) + (a+b-2)*digamma(a+b)
}

// betaEntropyGrad returns ∂H/∂a and ∂H/∂b.
func betaEntropyGrad(a, b float64) (da, db float64) {
	t := (a + b - 2) * trigamma(a+b)
	return -(a-1)*trigamma(a) + t, -(b-1)*trigamma(b) + t
}

// sampleGamma draws from Gamma(shape, 1) (Marsaglia and Tsang 2000; for
// shape < 1 the boost Gamma(a) = Gamma(a+1)·U^(1/a)).
func sampleGamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		u := rng.Float64()
		return sampleGamma(rng, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		var x, v float64
		for {
			x = rng.NormFloat64()
			v = 1 + c*x
			if v > 0 {
				break
			}
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// sampleBeta draws from Beta(a, b), kept inside (0, 1) so that its log
// density is finite.
func sampleBeta(rng *rand.Rand, a, b float64) float64 {
	x := sampleGamma(rng, a)
	y := sampleGamma(rng, b)
	q := x / (x + y)
	const eps = 1e-9
	if !(q > eps) { // also catches NaN from 0/0
		q = eps
	}
	if q > 1-eps {
		q = 1 - eps
	}
	return q
}
