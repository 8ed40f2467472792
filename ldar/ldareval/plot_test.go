package ldareval

import (
	"bytes"
	"testing"

	"github.com/ctxsel/ctxsel/internal/plot/plottest"
	"github.com/ctxsel/ctxsel/ldar"
)

// TestPlotsGolden: the learning curve and the bands are the charts saved,
// byte for byte.
func TestPlotsGolden(t *testing.T) {
	var hist []ldar.EpochStats
	for ep := 1; ep <= 23; ep++ {
		hist = append(hist, ldar.EpochStats{Epoch: ep, TrainReward: 0.1 + 0.01*float64(ep), ValReward: 0.15 + 0.008*float64(ep%7)})
	}
	var b bytes.Buffer
	if err := PlotLearning(&b, hist, "learning <curve>"); err != nil {
		t.Fatal(err)
	}
	plottest.Golden(t, "testdata/learning.svg", b.Bytes())

	m, err := ldar.NewModel(ldar.Config{Window: 8, Freqs: 2, FreqSigma: 0.1, Dim: 8, Heads: 2, Layers: 1, FFN: 8, Hidden: 8, Head: "exp", Pool: "attention"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	p := ldar.NewPolicy(m, nil)
	var qs []ldar.Question
	for i := range 5 {
		q := ldar.Question{ID: "question-with-a-long-id-" + string(rune('a'+i))}
		for r := range 40 {
			q.Scores = append(q.Scores, 1/float64(r+2+i))
			q.Tokens = append(q.Tokens, 100)
			q.Gold = append(q.Gold, r == i || r == 2*i+3)
		}
		qs = append(qs, q)
	}
	b.Reset()
	if err := PlotBands(&b, p, qs, 4, "bands"); err != nil {
		t.Fatal(err)
	}
	plottest.Golden(t, "testdata/bands.svg", b.Bytes())
}
