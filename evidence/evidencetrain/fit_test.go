package evidencetrain_test

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/evidence/evidencetrain"
)

// synthetic draws n rows of every feature from N(0, 1) and labels them by
// label(x) (a probability).
func synthetic(n int, seed uint64, label func(x []float64) float64) evidencetrain.Rows {
	rng := rand.New(rand.NewPCG(seed, 4))
	var r evidencetrain.Rows
	for range n {
		x := make([]float64, len(evidence.FeatureNames))
		for j := range x {
			x[j] = rng.NormFloat64()
		}
		r.X = append(r.X, x)
		r.Y = append(r.Y, rng.Float64() < label(x))
	}
	return r
}

func col(name string) int { return slices.Index(evidence.FeatureNames, name) }

func TestFitLogisticRecoversSignal(t *testing.T) {
	bm, pos := col("bm25_z"), col("position")
	rows := synthetic(4000, 3, func(x []float64) float64 { return 1 / (1 + math.Exp(-(2*x[bm] - 1.5*x[pos] - 1))) })
	m, err := evidencetrain.FitLogistic(rows, evidence.FeatureNames, evidencetrain.LogisticOptions{L2: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if m.Weights[bm] < 1.5 || m.Weights[pos] > -1 {
		t.Fatalf("weights %v", m.Weights)
	}
	for j, w := range m.Weights {
		if j != bm && j != pos && (w > 0.3 || w < -0.3) {
			t.Errorf("feature %s got weight %.2f from noise", evidence.FeatureNames[j], w)
		}
	}
	if _, err := evidencetrain.FitLogistic(evidencetrain.Rows{X: rows.X[:3], Y: []bool{true, true, true}}, evidence.FeatureNames, evidencetrain.LogisticOptions{}); err == nil {
		t.Fatal("one-label data accepted")
	}
	if _, err := evidencetrain.FitLogistic(rows, []string{"no_such_feature"}, evidencetrain.LogisticOptions{}); err == nil {
		t.Fatal("an unknown feature accepted")
	}
}

// The trees learn what a linear model cannot: an interaction (gold when
// two features are both high) and a threshold.
func TestFitTreesLearnsAnInteraction(t *testing.T) {
	a, b := col("dense_z"), col("title_in_question")
	label := func(x []float64) float64 {
		if x[a] > 0.5 && x[b] > 0 {
			return 0.9
		}
		return 0.05
	}
	train, test := synthetic(6000, 5, label), synthetic(3000, 6, label)
	trees, err := evidencetrain.FitTrees(train, evidence.FeatureNames, evidencetrain.TreeOptions{Trees: 100})
	if err != nil {
		t.Fatal(err)
	}
	logit, err := evidencetrain.FitLogistic(train, evidence.FeatureNames, evidencetrain.LogisticOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if lt, ll := logLoss(trees, test), logLoss(logit, test); lt > 0.8*ll {
		t.Fatalf("trees' held-out log loss %.4f, logistic's %.4f: the interaction was not learned", lt, ll)
	}
	// the splits read the two features that matter
	used := map[string]int{}
	for _, tr := range trees.Forest.Trees[:20] {
		for _, f := range tr.Feature {
			if f >= 0 {
				used[trees.Features[f]]++
			}
		}
	}
	if used["dense_z"] == 0 || used["title_in_question"] == 0 {
		t.Fatalf("first trees split on %v", used)
	}
}

// Boosting is deterministic, a prefix of its trees is the model fitted
// with fewer rounds, and the model survives its file format.
func TestFitTreesIsDeterministicAndTruncates(t *testing.T) {
	x := col("coverage")
	rows := synthetic(2000, 7, func(v []float64) float64 { return 1 / (1 + math.Exp(-3*v[x]+2)) })
	opt := evidencetrain.TreeOptions{Trees: 30, Depth: 2}
	a, err := evidencetrain.FitTrees(rows, evidence.FeatureNames, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := evidencetrain.FitTrees(rows, evidence.FeatureNames, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two fits of the same rows differ")
	}
	opt.Trees = 10
	short, err := evidencetrain.FitTrees(rows, evidence.FeatureNames, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(short.Forest.Trees, a.Truncated(10).Forest.Trees) {
		t.Fatal("the first 10 trees of 30 are not the 10-round fit")
	}
	blob, err := a.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := evidence.ParseModel(blob)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows.X[:50] {
		if pa, pb := a.Prob(r), back.Prob(r); pa != pb || math.IsNaN(pa) {
			t.Fatalf("p %v before the file, %v after", pa, pb)
		}
	}
}

func logLoss(m *evidence.Model, rows evidencetrain.Rows) float64 {
	s := 0.0
	for i, x := range rows.X {
		p := min(max(m.Prob(x), 1e-9), 1-1e-9)
		if rows.Y[i] {
			s -= math.Log(p)
		} else {
			s -= math.Log(1 - p)
		}
	}
	return s / float64(len(rows.X))
}

func TestGoldSentence(t *testing.T) {
	gold := [][2]int{{10, 50}}
	for _, c := range []struct {
		s    [2]int
		want bool
	}{
		{[2]int{10, 50}, true},   // the span itself
		{[2]int{5, 60}, true},    // holds all of it
		{[2]int{10, 30}, true},   // half of a gold sentence the splitter cut, all gold
		{[2]int{40, 100}, false}, // a quarter of the span, mostly not gold
		{[2]int{50, 90}, false},  // touches it
	} {
		if got := evidencetrain.GoldSentence(gold, c.s); got != c.want {
			t.Errorf("%v: %v, want %v", c.s, got, c.want)
		}
	}
}
