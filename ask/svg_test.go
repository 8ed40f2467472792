package ask

import (
	"bytes"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/internal/plot/plottest"
)

// TestCurveSVGGolden: the curve chart is the one saved, byte for byte.
func TestCurveSVGGolden(t *testing.T) {
	from, to := 1, 6
	a := Answer{Question: "Which <volcano> erupts most often on Sicily, and how often does it erupt in a typical year?",
		Scores: []float64{0.91, 0.88, 0.74, 0.72, 0.55, 0.41, 0.40, 0.38, 0.2, 0.19, 0.185, 0.1},
		Selection: ctxsel.Selection{K: 3, Tokens: 420, Explanation: ctxsel.Explanation{Strategy: "adaptivek:head=0.05", Start: 0, K: 3,
			CapsApplied: []string{"max_k"},
			Decision:    ctxsel.Decision{Kind: "gap", Rank: 3, Value: 0.17, SearchFrom: &from, SearchTo: &to}}}}
	var b bytes.Buffer
	if err := WriteCurveSVG(&b, a); err != nil {
		t.Fatal(err)
	}
	plottest.Golden(t, "testdata/curve.svg", b.Bytes())
	a.Selection.Explanation.Decision = ctxsel.Decision{Kind: "knee", Rank: 9}
	a.Selection.Explanation.Start, a.Selection.Explanation.K, a.Selection.K = 0, 0, 0
	b.Reset()
	if err := WriteCurveSVG(&b, a); err != nil {
		t.Fatal(err)
	}
	plottest.Golden(t, "testdata/curve-empty.svg", b.Bytes())
}
