package evidence

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
)

// FeatureNames are the model's inputs for one sentence, in order:
//
//	bm25_z            its BM25 over the candidate sentences, standardised over them
//	bm25_rel          its BM25 divided by the best sentence's (0 when none matches)
//	dense_z           its cosine similarity to the question, standardised
//	dense             its cosine similarity to the question
//	passage_z         its passage's score, standardised over the candidate passages
//	passage_gap       its passage's score less the best, in standard deviations of the whole curve
//	passage_rank      log(1 + its passage's rank in the curve)
//	first             1 for the first sentence after the header
//	position          log(1 + its index among the passage's sentences)
//	length            log(its tokens)
//	header_bm25_z     BM25 of its passage's header over the candidates' headers, standardised (0 without)
//	neighbour_bm25_z  the larger bm25_z of the sentences before and after it in its passage
//	bridge            the best match to the question (mean of bm25_z and dense_z) of a sentence
//	                  of another candidate passage that names its passage's header (a multi-hop link)
//	bridged           1 when such a sentence exists
var FeatureNames = []string{
	"bm25_z", "bm25_rel", "dense_z", "dense", "passage_z", "passage_gap", "passage_rank",
	"first", "position", "length", "header_bm25_z", "neighbour_bm25_z", "bridge", "bridged",
}

// ModelVersion is the model file format this package reads and writes.
const ModelVersion = 1

// Model is a logistic regression of "this sentence is gold evidence" on
// FeatureNames, standardised (x − Mean)/Scale, with the packing settings
// chosen on validation data beside it.
type Model struct {
	Version  int       `json:"version"`
	Features []string  `json:"features"`
	Mean     []float64 `json:"mean"`
	Scale    []float64 `json:"scale"`
	Weights  []float64 `json:"weights"`
	Bias     float64   `json:"bias"`
	// Passages is the default number of candidate passages (the best of
	// the curve); CostExponent β prices a sentence by p / tokens^β when
	// packing (0: by p alone; 1: by p per token); Neighbors 1 sends a
	// kept sentence's predecessor with it.
	Passages     int     `json:"passages"`
	CostExponent float64 `json:"cost_exponent"`
	Neighbors    int     `json:"neighbors"`
	// Provenance says how the model was made (data, splits, command).
	Provenance map[string]string `json:"provenance,omitempty"`
}

// Prob is the model's probability that a sentence with features x is gold.
func (m *Model) Prob(x []float64) float64 {
	z := m.Bias
	for i, v := range x {
		z += m.Weights[i] * (v - m.Mean[i]) / m.Scale[i]
	}
	return sigmoid(z)
}

// Validate reports a model this package cannot use.
func (m *Model) Validate() error {
	if m == nil {
		return errors.New("evidence model: nil")
	}
	if m.Version != ModelVersion {
		return fmt.Errorf("evidence model: version %d, want %d", m.Version, ModelVersion)
	}
	if !slices.Equal(m.Features, FeatureNames) {
		return fmt.Errorf("evidence model: features %v, want %v", m.Features, FeatureNames)
	}
	n := len(FeatureNames)
	if len(m.Mean) != n || len(m.Scale) != n || len(m.Weights) != n {
		return fmt.Errorf("evidence model: want %d means, scales and weights, got %d, %d, %d", n, len(m.Mean), len(m.Scale), len(m.Weights))
	}
	for i := range n {
		if !finite(m.Mean[i]) || !finite(m.Weights[i]) || !finite(m.Scale[i]) || m.Scale[i] <= 0 {
			return fmt.Errorf("evidence model: feature %s: mean %v, scale %v, weight %v", FeatureNames[i], m.Mean[i], m.Scale[i], m.Weights[i])
		}
	}
	if !finite(m.Bias) || !finite(m.CostExponent) || m.CostExponent < 0 || m.CostExponent > 2 {
		return fmt.Errorf("evidence model: bias %v, cost exponent %v (want 0…2)", m.Bias, m.CostExponent)
	}
	if m.Passages < 1 || m.Passages > maxPassages || m.Neighbors < 0 || m.Neighbors > 1 {
		return fmt.Errorf("evidence model: passages %d (want 1…%d), neighbors %d (want 0 or 1)", m.Passages, maxPassages, m.Neighbors)
	}
	return nil
}

// ParseModel reads a model file (JSON) and validates it.
func ParseModel(b []byte) (*Model, error) {
	var m Model
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("evidence model: %w", err)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// Marshal writes the model as indented JSON.
func (m *Model) Marshal() ([]byte, error) { return json.MarshalIndent(m, "", "  ") }

//go:embed model.json
var defaultModelJSON []byte

var defaultModel = sync.OnceValues(func() (*Model, error) { return ParseModel(defaultModelJSON) })

// DefaultModel is the embedded model (model.json), fitted and tuned as
// docs/evidence.md describes.
func DefaultModel() *Model {
	m, err := defaultModel()
	if err != nil {
		panic("evidence: the embedded model is broken: " + err.Error()) // a build defect, caught by tests
	}
	return m
}

// FitOptions configure Fit.
type FitOptions struct {
	// L2 is the ridge penalty on the standardised weights (default 1).
	L2 float64
	// Iterations bounds Newton's method (default 50).
	Iterations int
}

// Fit fits the logistic regression on rows xs (FeatureNames order) with
// labels ys and row weights ws (nil: all 1), by Newton's method on the
// standardised features with an L2 penalty. The packing settings of the
// result are DefaultModel's; set them after.
func Fit(xs [][]float64, ys []bool, ws []float64, opt FitOptions) (*Model, error) {
	n, d := len(xs), len(FeatureNames)
	if n == 0 || len(ys) != n || (ws != nil && len(ws) != n) {
		return nil, fmt.Errorf("evidence fit: %d rows, %d labels, %d weights", n, len(ys), len(ws))
	}
	if opt.L2 <= 0 {
		opt.L2 = 1
	}
	if opt.Iterations <= 0 {
		opt.Iterations = 50
	}
	pos := 0
	m := &Model{Version: ModelVersion, Features: slices.Clone(FeatureNames), Mean: make([]float64, d), Scale: make([]float64, d), Weights: make([]float64, d)}
	wsum := 0.0
	w := func(i int) float64 {
		if ws == nil {
			return 1
		}
		return ws[i]
	}
	for i, x := range xs {
		if len(x) != d {
			return nil, fmt.Errorf("evidence fit: row %d has %d features, want %d", i, len(x), d)
		}
		for j, v := range x {
			if !finite(v) {
				return nil, fmt.Errorf("evidence fit: row %d feature %s is %v", i, FeatureNames[j], v)
			}
			m.Mean[j] += w(i) * v
		}
		wsum += w(i)
		if ys[i] {
			pos++
		}
	}
	if pos == 0 || pos == n || wsum <= 0 {
		return nil, fmt.Errorf("evidence fit: %d positive of %d rows: need both labels", pos, n)
	}
	for j := range d {
		m.Mean[j] /= wsum
	}
	for i, x := range xs {
		for j, v := range x {
			m.Scale[j] += w(i) * (v - m.Mean[j]) * (v - m.Mean[j])
		}
	}
	for j := range d {
		m.Scale[j] = math.Sqrt(m.Scale[j] / wsum)
		if m.Scale[j] < 1e-9 {
			m.Scale[j] = 1 // a constant feature: its weight stays 0 under the penalty
		}
	}
	// z rows with a leading 1 for the bias
	z := make([][]float64, n)
	for i, x := range xs {
		z[i] = make([]float64, d+1)
		z[i][0] = 1
		for j, v := range x {
			z[i][j+1] = (v - m.Mean[j]) / m.Scale[j]
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
			if ys[i] {
				y = 1
			}
			wi := w(i)
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
			return nil, fmt.Errorf("evidence fit: %w", err)
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
	def := DefaultModel()
	m.Passages, m.CostExponent, m.Neighbors = def.Passages, def.CostExponent, def.Neighbors
	return m, nil
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

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
