package evidencetrain_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/evidence/evidencetrain"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestFitIsotonicByHand(t *testing.T) {
	// Sorted by p: 0.1 gold, 0.2 not, 0.3 not, 0.4 gold. PAV: blocks
	// {0.1: 1}, {0.2: 0} violate (1 ≥ 0) and merge to {0.1, 0.2: 1/2};
	// {0.3: 0} violates that (1/2 ≥ 0): {0.1, 0.2, 0.3: 1/3}, mean p 0.2;
	// {0.4: 1} does not (1/3 < 1). Knots (0.2, 1/3) and (0.4, 1). The
	// input order does not matter.
	c, err := evidencetrain.FitIsotonic([]float64{0.4, 0.1, 0.3, 0.2}, []bool{true, true, false, false})
	if err != nil {
		t.Fatal(err)
	}
	if c.Method != evidence.CalibrationIsotonic || len(c.X) != 2 || !near(c.X[0], 0.2) || !near(c.X[1], 0.4) || !near(c.Y[0], 1.0/3) || !near(c.Y[1], 1) {
		t.Fatalf("knots %v %v", c.X, c.Y)
	}
	// between the knots: 1/3 + (0.3 − 0.2)/(0.4 − 0.2) · (1 − 1/3) = 2/3
	if got := c.Apply(0.3); !near(got, 2.0/3) {
		t.Fatalf("Apply(0.3) = %v", got)
	}
}

func TestFitIsotonicTies(t *testing.T) {
	for _, c := range []struct {
		name string
		p    []float64
		gold []bool
		x, y []float64
	}{
		// equal p are one block: 0.5 → 1/3 (one gold of three), 0.9 → 1
		{"tie block", []float64{0.5, 0.9, 0.5, 0.5}, []bool{true, true, false, false}, []float64{0.5, 0.9}, []float64{1.0 / 3, 1}},
		// only ties: one knot at their rate
		{"all tied", []float64{0.5, 0.5}, []bool{true, false}, []float64{0.5}, []float64{0.5}},
		// a tie block {0.2, 0.2: 1} then {0.6: 0} violates: one block,
		// mean p (0.2 + 0.2 + 0.6)/3 = 1/3, rate 2/3
		{"tie merged", []float64{0.2, 0.6, 0.2}, []bool{true, false, true}, []float64{1.0 / 3}, []float64{2.0 / 3}},
		// equal rates merge too, so knots strictly increase
		{"equal rates", []float64{0.1, 0.2, 0.3}, []bool{false, false, true}, []float64{0.15, 0.3}, []float64{0, 1}},
	} {
		m, err := evidencetrain.FitIsotonic(c.p, c.gold)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.X) != len(c.x) {
			t.Fatalf("%s: knots %v %v, want %v %v", c.name, m.X, m.Y, c.x, c.y)
		}
		for i := range c.x {
			if !near(m.X[i], c.x[i]) || !near(m.Y[i], c.y[i]) {
				t.Fatalf("%s: knots %v %v, want %v %v", c.name, m.X, m.Y, c.x, c.y)
			}
		}
	}
	if _, err := evidencetrain.FitIsotonic([]float64{0.5, math.NaN()}, []bool{true, false}); err == nil {
		t.Fatal("NaN accepted")
	}
	if _, err := evidencetrain.FitIsotonic(nil, nil); err == nil {
		t.Fatal("no data accepted")
	}
}

// overconfident draws probabilities the labels do not bear out: the true
// rate of gold is p² (a model that says 0.5 is right a quarter of the
// time).
func overconfident(n int, seed uint64) ([]float64, []bool) {
	r := rand.New(rand.NewPCG(seed, 1))
	p, gold := make([]float64, n), make([]bool, n)
	for i := range p {
		p[i] = r.Float64()
		gold[i] = r.Float64() < p[i]*p[i]
	}
	return p, gold
}

func TestCalibrationMapsAreMonotoneAndHelpOnNewData(t *testing.T) {
	p, gold := overconfident(20000, 1)
	q, qGold := overconfident(20000, 2)
	_, before := evidencetrain.Reliability(q, qGold, 10)
	for _, fit := range []func([]float64, []bool) (*evidence.Calibration, error){evidencetrain.FitIsotonic, evidencetrain.FitPlatt} {
		c, err := fit(p, gold)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		grid := make([]float64, 1001)
		for i := range grid {
			grid[i] = c.Apply(float64(i) / 1000)
		}
		if !slices.IsSorted(grid) || grid[0] < 0 || grid[1000] > 1 {
			t.Fatalf("%s: not monotone within [0, 1]", c.Method)
		}
		cq := make([]float64, len(q))
		for i, v := range q {
			cq[i] = c.Apply(v)
		}
		_, after := evidencetrain.Reliability(cq, qGold, 10)
		// the error is about 1/6 (the mean of p − p²) before, the bins'
		// noise after; Platt's logistic form cannot fit p² exactly
		if before < 0.1 || after > before/2 {
			t.Errorf("%s: ECE on new data %.4f before, %.4f after", c.Method, before, after)
		}
	}
}

func TestFitPlattRecoversItsWeights(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 1))
	var p []float64
	var gold []bool
	for range 40000 {
		z := 8*r.Float64() - 4
		p = append(p, 1/(1+math.Exp(-z)))
		gold = append(gold, r.Float64() < 1/(1+math.Exp(-(2*z-1))))
	}
	c, err := evidencetrain.FitPlatt(p, gold)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(c.A-2) > 0.15 || math.Abs(c.B+1) > 0.15 {
		t.Fatalf("a %v b %v, want 2 and −1", c.A, c.B)
	}
}

func TestReliabilityByHand(t *testing.T) {
	// two bins of two: mean p 0.15 with half gold, mean p 0.85 all gold;
	// ECE = ½ · |0.15 − 0.5| + ½ · |0.85 − 1| = 0.175 + 0.075 = 0.25
	bins, ece := evidencetrain.Reliability([]float64{0.9, 0.1, 0.8, 0.2}, []bool{true, false, true, true}, 2)
	if len(bins) != 2 || !near(ece, 0.25) || !near(bins[0].MeanP, 0.15) || !near(bins[0].Gold, 0.5) || bins[1].N != 2 || !near(bins[1].Lo, 0.8) {
		t.Fatalf("bins %+v ece %v", bins, ece)
	}
	if b := evidencetrain.Brier([]float64{1, 0.5}, []bool{true, false}); !near(b, 0.125) {
		t.Fatalf("Brier %v", b)
	}
}
