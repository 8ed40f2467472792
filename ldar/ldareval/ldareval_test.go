package ldareval

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/ldar"
	"github.com/ctxsel/ctxsel/score"
)

func records(n int) []dataset.Record {
	recs := make([]dataset.Record, n)
	for i := range recs {
		recs[i] = dataset.Record{ID: fmt.Sprint("r", i), Question: fmt.Sprintf("what is topic %d", i), Passages: []dataset.Passage{
			{ID: "g", Text: fmt.Sprintf("topic %d is the answer", i), Gold: true},
			{ID: "x", Text: fmt.Sprintf("unrelated filler %d", i)},
		}}
	}
	return recs
}

func TestQuestionsReportPlots(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.jsonl")
	var b bytes.Buffer
	for _, r := range records(12) {
		fmt.Fprintf(&b, `{"id":%q,"question":%q,"answers":["x"],"passages":[{"id":"g","text":%q,"gold":true},{"id":"x","text":%q,"gold":false}]}`+"\n",
			r.ID, r.Question, r.Passages[0].Text, r.Passages[1].Text)
	}
	if err := writeFileBytes(path, b.Bytes()); err != nil {
		t.Fatal(err)
	}
	spec := CurveSpec{Path: path, Pool: 10, PoolSeed: 1, Scorer: "bm25", Encoding: "cl100k_base"}
	ctx := context.Background()
	qs, err := Questions(ctx, spec, score.NewBM25(), nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 12 || len(qs[0].Scores) != 10 {
		t.Fatalf("%d questions of %d passages", len(qs), len(qs[0].Scores))
	}
	again, err := Questions(ctx, spec, nil, nil, dir) // from the cache: no scorer needed
	if err != nil || len(again) != 12 || again[3].Scores[2] != qs[3].Scores[2] {
		t.Fatalf("cache: %v", err)
	}
	m, _ := ldar.NewModel(ldar.Config{Window: 8, Freqs: 2, FreqSigma: 0.1, Dim: 8, Heads: 2, Layers: 1, FFN: 8, Hidden: 8, Head: "exp", Pool: "attention"}, 1)
	p := ldar.NewPolicy(m, nil)
	recs, _ := dataset.LoadFile(path)
	pooled, _ := dataset.Pool(recs, 10, 1)
	rep, err := Report(ctx, pooled, score.NewBM25(), nil, p, nil)
	if err != nil {
		t.Fatal(err)
	}
	if last := rep.Results[len(rep.Results)-1]; last.Strategy != "band" || last.N != 12 {
		t.Errorf("last result %+v", last)
	}
	var svg bytes.Buffer
	if err := PlotBands(&svg, p, qs, 4, "t"); err != nil || !strings.Contains(svg.String(), "</svg>") {
		t.Errorf("PlotBands: %v", err)
	}
	svg.Reset()
	hist := []ldar.EpochStats{{Epoch: 1, TrainReward: 0.1, ValReward: 0.2}, {Epoch: 2, TrainReward: 0.3, ValReward: 0.25}}
	if err := PlotLearning(&svg, hist, "t"); err != nil || !strings.Contains(svg.String(), "polyline") {
		t.Errorf("PlotLearning: %v", err)
	}
}

func writeFileBytes(path string, b []byte) error { return os.WriteFile(path, b, 0o644) }
