package evidencetrain

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/ctxsel/ctxsel/evidence"
)

// Rows are labelled sentences: X[i] holds every evidence.FeatureNames
// feature, Y[i] whether the sentence is gold, W[i] its weight (nil: 1).
type Rows struct {
	X [][]float64
	Y []bool
	W []float64
}

func (r Rows) weight(i int) float64 {
	if r.W == nil {
		return 1
	}
	return r.W[i]
}

// check reports rows a learner cannot fit, and the columns (indices into
// evidence.FeatureNames) of the named features.
func (r Rows) check(features []string) ([]int, error) {
	n := len(r.X)
	if n == 0 || len(r.Y) != n || (r.W != nil && len(r.W) != n) {
		return nil, fmt.Errorf("%d rows, %d labels, %d weights", n, len(r.Y), len(r.W))
	}
	cols := make([]int, len(features))
	for i, f := range features {
		cols[i] = slices.Index(evidence.FeatureNames, f)
		if cols[i] < 0 {
			return nil, fmt.Errorf("unknown feature %q", f)
		}
	}
	pos, wsum := 0, 0.0
	for i, x := range r.X {
		if len(x) != len(evidence.FeatureNames) {
			return nil, fmt.Errorf("row %d has %d features, want %d", i, len(x), len(evidence.FeatureNames))
		}
		for _, c := range cols {
			if math.IsNaN(x[c]) || math.IsInf(x[c], 0) {
				return nil, fmt.Errorf("row %d feature %s is %v", i, evidence.FeatureNames[c], x[c])
			}
		}
		if w := r.weight(i); !(w >= 0) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("row %d weight %v", i, w)
		}
		wsum += r.weight(i)
		if r.Y[i] {
			pos++
		}
	}
	if pos == 0 || pos == n || wsum <= 0 {
		return nil, fmt.Errorf("%d positive of %d rows: need both labels", pos, n)
	}
	return cols, nil
}

// LogisticOptions configure FitLogistic.
type LogisticOptions struct {
	// L2 is the ridge penalty on the standardised weights (default 1).
	L2 float64
	// Iterations bounds Newton's method (default 50).
	Iterations int
}

// FitLogistic fits a logistic regression of the label on the named
// features, standardised, with an L2 penalty, by Newton's method. The
// packing settings of the result are the embedded model's; set them
// after.
func FitLogistic(rows Rows, features []string, opt LogisticOptions) (*evidence.Model, error) {
	cols, err := rows.check(features)
	if err != nil {
		return nil, fmt.Errorf("logistic fit: %w", err)
	}
	if opt.L2 <= 0 {
		opt.L2 = 1
	}
	if opt.Iterations <= 0 {
		opt.Iterations = 50
	}
	d := len(cols)
	m := &evidence.Model{Version: evidence.ModelVersion, Learner: evidence.LearnerLogistic, Features: slices.Clone(features),
		Mean: make([]float64, d), Scale: make([]float64, d), Weights: make([]float64, d)}
	wsum := 0.0
	for i, x := range rows.X {
		for j, c := range cols {
			m.Mean[j] += rows.weight(i) * x[c]
		}
		wsum += rows.weight(i)
	}
	for j := range d {
		m.Mean[j] /= wsum
	}
	for i, x := range rows.X {
		for j, c := range cols {
			m.Scale[j] += rows.weight(i) * (x[c] - m.Mean[j]) * (x[c] - m.Mean[j])
		}
	}
	for j := range d {
		m.Scale[j] = math.Sqrt(m.Scale[j] / wsum)
		if m.Scale[j] < 1e-9 {
			m.Scale[j] = 1 // a constant feature: its weight stays 0 under the penalty
		}
	}
	// z rows with a leading 1 for the bias
	z := make([][]float64, len(rows.X))
	for i, x := range rows.X {
		z[i] = make([]float64, d+1)
		z[i][0] = 1
		for j, c := range cols {
			z[i][j+1] = (x[c] - m.Mean[j]) / m.Scale[j]
		}
	}
	beta := make([]float64, d+1)
	for range opt.Iterations {
		g := make([]float64, d+1)
		h := make([][]float64, d+1)
		for j := range h {
			h[j] = make([]float64, d+1)
		}
		for i, zi := range z {
			p := sigmoid(dot(beta, zi))
			y := 0.0
			if rows.Y[i] {
				y = 1
			}
			wi := rows.weight(i)
			for a := range zi {
				g[a] += wi * (y - p) * zi[a]
				for b := a; b < len(zi); b++ {
					h[a][b] += wi * p * (1 - p) * zi[a] * zi[b]
				}
			}
		}
		for a := range h {
			for b := range a {
				h[a][b] = h[b][a]
			}
			if a > 0 { // no penalty on the bias
				g[a] -= opt.L2 * beta[a]
				h[a][a] += opt.L2
			}
		}
		step, err := solve(h, g)
		if err != nil {
			return nil, fmt.Errorf("logistic fit: %w", err)
		}
		big := 0.0
		for j := range beta {
			beta[j] += step[j]
			big = max(big, math.Abs(step[j]))
		}
		if big < 1e-8 {
			break
		}
	}
	m.Bias = beta[0]
	copy(m.Weights, beta[1:])
	withDefaults(m)
	return m, m.Validate()
}

// withDefaults gives a fitted model the embedded model's packing settings.
func withDefaults(m *evidence.Model) {
	def := evidence.DefaultModel()
	m.Passages, m.CostExponent, m.Neighbors = def.Passages, def.CostExponent, def.Neighbors
	m.Hop, m.Anchors, m.Floor = def.Hop, def.Anchors, def.Floor
}

// solve solves h·x = g by Gaussian elimination with partial pivoting.
func solve(h [][]float64, g []float64) ([]float64, error) {
	n := len(g)
	a := make([][]float64, n)
	for i := range a {
		a[i] = append(slices.Clone(h[i]), g[i])
	}
	for c := range n {
		p := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[p][c]) {
				p = r
			}
		}
		if math.Abs(a[p][c]) < 1e-12 {
			return nil, errors.New("singular Hessian")
		}
		a[c], a[p] = a[p], a[c]
		for r := c + 1; r < n; r++ {
			f := a[r][c] / a[c][c]
			for k := c; k <= n; k++ {
				a[r][k] -= f * a[c][k]
			}
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := a[r][n]
		for k := r + 1; k < n; k++ {
			s -= a[r][k] * x[k]
		}
		x[r] = s / a[r][r]
	}
	return x, nil
}

func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}
