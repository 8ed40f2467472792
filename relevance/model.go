package relevance

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// DefaultWindow is how many top ranks of the fused curve a model reads,
// scores and may select.
const DefaultWindow = 100

// Question is one labelled curve to train on: scores, token counts, gold
// labels and optional channels (one score list per channel), all in the
// same passage order.
type Question struct {
	Scores   []float64
	Tokens   []int
	Gold     []bool
	Channels [][]float64
	// Weight scales the question's log-likelihood (0 means 1): give each
	// data set the same total weight when their sizes differ.
	Weight float64
}

// Model is a logistic regression of "this passage is gold" on the features
// of its rank: p = σ(b + Σ w_i·(x_i − mean_i)/sd_i).
type Model struct {
	Channels int       `json:"channels"`
	Window   int       `json:"window"`
	Features []string  `json:"features"`
	Mean     []float64 `json:"mean"`
	SD       []float64 `json:"sd"`
	Bias     float64   `json:"bias"`
	Weights  []float64 `json:"weights"`
	// Meta records how the model was trained (data, command).
	Meta map[string]string `json:"meta,omitempty"`
}

// FitOptions configure Fit.
type FitOptions struct {
	Channels int     // channels read (0: the curve alone; 2: a hybrid's dense and lexical)
	Window   int     // top ranks per question (0: DefaultWindow)
	L2       float64 // ridge penalty on the standardised weights (0: 1)
	Iter     int     // Newton steps (0: 30)
}

// Fit trains the model by Newton's method (iteratively reweighted least
// squares) on the top Window ranks of every question.
func Fit(qs []Question, opt FitOptions) (*Model, error) {
	if opt.Window <= 0 {
		opt.Window = DefaultWindow
	}
	if opt.L2 <= 0 {
		opt.L2 = 1
	}
	if opt.Iter <= 0 {
		opt.Iter = 30
	}
	if opt.Channels < 0 || opt.Channels > 2 {
		return nil, fmt.Errorf("relevance: %d channels: want 0, 1 or 2", opt.Channels)
	}
	var xs [][]float64
	var ys, ws []float64
	for qi, q := range qs {
		if err := q.check(opt.Channels); err != nil {
			return nil, fmt.Errorf("relevance: question %d: %w", qi, err)
		}
		order := topOrder(q.Scores, opt.Window)
		w := q.Weight
		if w == 0 {
			w = 1
		}
		for r, x := range features(q.Scores, q.Tokens, q.Channels, order, opt.Channels) {
			y := 0.0
			if q.Gold[order[r]] {
				y = 1
			}
			xs, ys, ws = append(xs, x), append(ys, y), append(ws, w)
		}
	}
	if len(xs) == 0 {
		return nil, errors.New("relevance: no training questions")
	}
	d := len(xs[0])
	m := &Model{Channels: opt.Channels, Window: opt.Window, Features: FeatureNames(opt.Channels), Mean: make([]float64, d), SD: make([]float64, d), Weights: make([]float64, d)}
	sw := 0.0
	for i, x := range xs {
		sw += ws[i]
		for j, v := range x {
			m.Mean[j] += ws[i] * v
		}
	}
	for j := range m.Mean {
		m.Mean[j] /= sw
	}
	for i, x := range xs {
		for j, v := range x {
			m.SD[j] += ws[i] * (v - m.Mean[j]) * (v - m.Mean[j])
		}
	}
	for j := range m.SD {
		m.SD[j] = math.Sqrt(m.SD[j] / sw)
		if m.SD[j] < 1e-9 {
			m.SD[j] = 1 // a constant feature: its weight stays at 0 under the ridge
		}
	}
	// Standardise once; column 0 is the intercept.
	zs := make([][]float64, len(xs))
	for i, x := range xs {
		z := make([]float64, d+1)
		z[0] = 1
		for j, v := range x {
			z[j+1] = (v - m.Mean[j]) / m.SD[j]
		}
		zs[i] = z
	}
	beta := make([]float64, d+1)
	// Normalise the weights to mean 1 so that L2 means the same at any size.
	scale := float64(len(xs)) / sw
	for it := 0; it < opt.Iter; it++ {
		g := make([]float64, d+1)
		h := make([][]float64, d+1)
		for j := range h {
			h[j] = make([]float64, d+1)
		}
		for i, z := range zs {
			p := sigmoid(dot(beta, z))
			w := ws[i] * scale
			r := w * (ys[i] - p)
			v := w * p * (1 - p)
			for a := range z {
				g[a] += r * z[a]
				for b := 0; b <= a; b++ {
					h[a][b] += v * z[a] * z[b]
				}
			}
		}
		for a := 1; a <= d; a++ {
			g[a] -= opt.L2 * beta[a]
			h[a][a] += opt.L2
		}
		h[0][0] += 1e-9
		for a := range h {
			for b := a + 1; b <= d; b++ {
				h[a][b] = h[b][a]
			}
		}
		step, err := solve(h, g)
		if err != nil {
			return nil, fmt.Errorf("relevance: Newton step %d: %w", it, err)
		}
		maxStep := 0.0
		for a := range beta {
			beta[a] += step[a]
			maxStep = max(maxStep, math.Abs(step[a]))
		}
		if maxStep < 1e-8 {
			break
		}
	}
	m.Bias = beta[0]
	copy(m.Weights, beta[1:])
	return m, nil
}

func (q Question) check(channels int) error {
	n := len(q.Scores)
	if n == 0 {
		return errors.New("no scores")
	}
	if len(q.Tokens) != n || len(q.Gold) != n {
		return fmt.Errorf("%d scores, %d token counts, %d gold labels", n, len(q.Tokens), len(q.Gold))
	}
	if len(q.Channels) < channels {
		return fmt.Errorf("%d score channels, the model reads %d", len(q.Channels), channels)
	}
	for j := range channels {
		if len(q.Channels[j]) != n {
			return fmt.Errorf("channel %d has %d scores, want %d", j, len(q.Channels[j]), n)
		}
	}
	return nil
}

// Probabilities returns p(gold) for the top min(n, Window) ranks of a curve
// (scores, tokens and channels in input order), with the ranks' input
// indices.
func (m *Model) Probabilities(scores []float64, tokens []int, chans [][]float64) (p []float64, order []int) {
	order = topOrder(scores, m.Window)
	return m.predict(scores, tokens, chans, order), order
}

// Validate checks a model read from a file.
func (m *Model) Validate() error {
	d := len(FeatureNames(m.Channels))
	switch {
	case m.Channels < 0 || m.Channels > 2:
		return fmt.Errorf("channels %d: want 0, 1 or 2", m.Channels)
	case m.Window < 1:
		return fmt.Errorf("window %d: want ≥ 1", m.Window)
	case len(m.Mean) != d || len(m.SD) != d || len(m.Weights) != d:
		return fmt.Errorf("want %d features, have %d means, %d deviations, %d weights", d, len(m.Mean), len(m.SD), len(m.Weights))
	}
	for j := range d {
		if !finite(m.Mean[j]) || !finite(m.Weights[j]) || !finite(m.SD[j]) || m.SD[j] <= 0 {
			return fmt.Errorf("feature %d: mean %v, sd %v, weight %v", j, m.Mean[j], m.SD[j], m.Weights[j])
		}
	}
	if !finite(m.Bias) {
		return fmt.Errorf("bias %v", m.Bias)
	}
	return nil
}

// Parse reads a model written by Marshal.
func Parse(b []byte) (*Model, error) {
	var m Model
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("relevance model: %w", err)
	}
	if err := m.Validate(); err != nil {
		return nil, fmt.Errorf("relevance model: %w", err)
	}
	m.Features = FeatureNames(m.Channels)
	return &m, nil
}

// Marshal encodes the model as indented JSON.
func (m *Model) Marshal() ([]byte, error) { return json.MarshalIndent(m, "", "  ") }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

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

// solve solves the symmetric positive definite system h·x = g by Cholesky.
func solve(h [][]float64, g []float64) ([]float64, error) {
	n := len(g)
	l := make([][]float64, n)
	for i := range l {
		l[i] = make([]float64, n)
	}
	for i := range n {
		for j := 0; j <= i; j++ {
			s := h[i][j]
			for k := range j {
				s -= l[i][k] * l[j][k]
			}
			if i == j {
				if s <= 0 {
					return nil, errors.New("Hessian not positive definite")
				}
				l[i][i] = math.Sqrt(s)
			} else {
				l[i][j] = s / l[j][j]
			}
		}
	}
	y := make([]float64, n)
	for i := range n {
		s := g[i]
		for k := range i {
			s -= l[i][k] * y[k]
		}
		y[i] = s / l[i][i]
	}
	x := make([]float64, n)
	for i := n - 1; i >= 0; i-- {
		s := y[i]
		for k := i + 1; k < n; k++ {
			s -= l[k][i] * x[k]
		}
		x[i] = s / l[i][i]
	}
	return x, nil
}

// topOrder returns the input indices of the top min(n, window) scores, best
// first, ties in input order.
func topOrder(scores []float64, window int) []int {
	r := ranks(scores)
	m := min(len(scores), window)
	order := make([]int, m)
	for i, k := range r {
		if k < m {
			order[k] = i
		}
	}
	return order
}

// Rescore returns a new curve that ranks the top Window passages of the
// given one by p(gold) (scores 1 + p) and keeps the rest in their order
// below them (scores in (−1, 0]): the model as a re-ranker rather than a
// cut. scores, tokens and chans are in input order.
func (m *Model) Rescore(scores []float64, tokens []int, chans [][]float64) []float64 {
	n := len(scores)
	r := ranks(scores)
	out := make([]float64, n)
	for i, k := range r {
		out[i] = -float64(k) / float64(n)
	}
	order := topOrder(scores, m.Window)
	for k, p := range m.predict(scores, tokens, chans, order) {
		out[order[k]] = 1 + p
	}
	return out
}
