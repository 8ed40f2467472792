package lengthest

import (
	"bytes"
	"testing"

	"github.com/ctxsel/ctxsel/internal/plot/plottest"
)

// TestPlotGolden: the budget chart is the one saved, byte for byte.
func TestPlotGolden(t *testing.T) {
	rep := &Report{Estimate: 4000, Config: Settings{Utility: "rouge-l"}}
	for i, m := range []float64{0.21, 0.26, 0.3, 0.305, 0.31, 0.302} {
		rep.Table = append(rep.Table, Row{Budget: 1000 * (i + 1) * (i + 1), Mean: m, Std: 0.01 + 0.002*float64(i), N: 40})
	}
	rep.Best = rep.Table[4]
	rep.Table[2].Budget = 8500
	var b bytes.Buffer
	if err := WritePlot(&b, rep, "budget <curve>"); err != nil {
		t.Fatal(err)
	}
	plottest.Golden(t, "testdata/plot.svg", b.Bytes())
}
