package eval

import (
	"bytes"
	"testing"

	"github.com/ctxsel/ctxsel/internal/plot/plottest"
)

// TestPlotGolden: the frontier chart is the one saved, byte for byte.
func TestPlotGolden(t *testing.T) {
	rep := &Report{}
	for k := 1; k <= 60; k++ {
		rep.Frontier = append(rep.Frontier, FrontierPoint{K: k, Recall: 1 - 1/float64(k+1), MeanTokens: 130 * float64(k)})
	}
	rep.Results = []Result{{Strategy: "topk:k=5", Recall: 0.83, MeanTokens: 650},
		{Strategy: "adaptivek:head=0.05", Recall: 0.9, MeanTokens: 980, GainVsTopK: 0.031},
		{Strategy: "knee<x>", Recall: 0.7, MeanTokens: 300, GainVsTopK: -0.012}}
	var b bytes.Buffer
	if err := WritePlot(&b, rep, "frontier & points"); err != nil {
		t.Fatal(err)
	}
	plottest.Golden(t, "testdata/plot.svg", b.Bytes())
}
