package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/cutoff"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/score"
)

// fakeScorer and fakeCounter read "score tokens" from each passage text, so
// every figure below can be worked out by hand.
type fakeScorer struct{}

func (fakeScorer) Name() string { return "fake" }
func (fakeScorer) Score(_ context.Context, _ string, ps []string) ([]float64, error) {
	out := make([]float64, len(ps))
	for i, p := range ps {
		out[i], _ = strconv.ParseFloat(strings.Fields(p)[0], 64)
	}
	return out, nil
}

type fakeCounter struct{}

func (fakeCounter) Encoding() string { return "fake" }
func (fakeCounter) Count(s string) int {
	n, _ := strconv.Atoi(strings.Fields(s)[1])
	return n
}

func handRecords() []dataset.Record {
	p := func(id, text string, gold bool) dataset.Passage {
		return dataset.Passage{ID: id, Text: text, Gold: gold}
	}
	return []dataset.Record{
		{ID: "q1", Question: "?", Passages: []dataset.Passage{p("a", "0.9 10", true), p("b", "0.8 20", false), p("c", "0.5 30", true), p("d", "0.1 40", false)}},
		{ID: "q2", Question: "?", Passages: []dataset.Passage{p("a", "0.7 10", true), p("b", "0.6 10", false), p("c", "0.2 10", false)}},
		{ID: "q3", Question: "?", Passages: []dataset.Passage{p("a", "0.7 10", false)}},
	}
}

func TestRunHandComputed(t *testing.T) {
	specs, err := ctxsel.Resolver{}.ResolveList("topk:k=1,budget:tokens=25,threshold:min=0.45,topk:k=3")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), handRecords(), fakeScorer{}, Options{Strategies: specs, Counter: fakeCounter{}, Workers: 2, Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Questions != 2 || rep.Skipped != 1 || rep.MeanPassages != 3.5 || rep.MeanContextTokens != 65 {
		t.Fatalf("report header %+v", rep)
	}
	wantFrontier := []FrontierPoint{{K: 1, Recall: 0.75, MeanTokens: 10}, {K: 2, Recall: 0.75, MeanTokens: 25}, {K: 3, Recall: 1, MeanTokens: 45}, {K: 4, Recall: 1, MeanTokens: 65}}
	if fmt.Sprint(rep.Frontier) != fmt.Sprint(wantFrontier) {
		t.Fatalf("frontier %v, want %v", rep.Frontier, wantFrontier)
	}
	want := []Result{
		{Strategy: "topk:k=1", N: 2, Recall: 0.75, Precision: 1, AllGold: 0.5, MeanK: 1, MeanTokens: 10,
			TokenFraction: (0.1 + 1.0/3) / 2, MeanTrueK: 2, DiffK: 1, FrontierRecall: 0.75},
		{Strategy: "budget:tokens=25", N: 2, Recall: 0.75, Precision: 0.75, AllGold: 0.5, MeanK: 1.5, MeanTokens: 15,
			TokenFraction: (0.1 + 20.0/30) / 2, MeanTrueK: 2, DiffK: 1.5, FrontierRecall: 0.75},
		{Strategy: "threshold:min=0.45", N: 2, Recall: 1, Precision: (2.0/3 + 0.5) / 2, AllGold: 1, MeanK: 2.5, MeanTokens: 40,
			TokenFraction: (0.6 + 20.0/30) / 2, MeanTrueK: 2, DiffK: 0.5, FrontierRecall: 0.9375, GainVsTopK: 0.0625},
		{Strategy: "topk:k=3", N: 2, Recall: 1, Precision: (2.0/3 + 1.0/3) / 2, AllGold: 1, MeanK: 3, MeanTokens: 45,
			TokenFraction: (0.6 + 1) / 2, MeanTrueK: 2, DiffK: 1, FrontierRecall: 1},
	}
	for i, w := range want {
		w.ReductionPct = 100 * (1 - w.TokenFraction)
		// On these two questions the budget frontier never rises above
		// top-k's (worked out in TestBudgetFrontierHand), so the envelope is
		// top-k's.
		w.EnvelopeRecall, w.GainVsEnvelope = w.FrontierRecall, w.GainVsTopK
		g := rep.Results[i]
		w.Spread = g.Spread // TestTokenSpread checks the spread
		gv, wv := fmt.Sprintf("%+.9v", g), fmt.Sprintf("%+.9v", w)
		if gv != wv {
			t.Errorf("result %d:\n got %s\nwant %s", i, gv, wv)
		}
	}
	var table, js, svg bytes.Buffer
	if err := WriteTable(&table, rep); err != nil || !strings.Contains(table.String(), "threshold:min=0.45") {
		t.Fatalf("table: %v\n%s", err, table.String())
	}
	if err := WriteJSON(&js, rep); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Results []map[string]any `json:"results"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Results) != 4 {
		t.Fatalf("json: %v %s", err, js.String())
	}
	for _, key := range []string{"strategy", "recall", "precision", "mean_k", "mean_tokens", "token_fraction", "gain_vs_topk", "n"} {
		if _, ok := back.Results[2][key]; !ok {
			t.Errorf("json result lacks %q", key)
		}
	}
	if err := WritePlot(&svg, rep, "hand <test>"); err != nil || !strings.HasPrefix(svg.String(), "<svg") || !strings.Contains(svg.String(), "hand &lt;test&gt;") {
		t.Fatalf("plot: %v", err)
	}
}

func TestInterpolate(t *testing.T) {
	pts := []FrontierPoint{{K: 1, Recall: 0.5, MeanTokens: 10}, {K: 2, Recall: 0.5, MeanTokens: 10}, {K: 3, Recall: 0.9, MeanTokens: 30}}
	cases := map[float64]float64{0: 0, 5: 0.25, 10: 0.5, 20: 0.7, 30: 0.9, 1e9: 0.9}
	for tok, want := range cases {
		if got := interpolate(pts, tok); math.Abs(got-want) > 1e-12 {
			t.Errorf("interpolate(%v) = %v, want %v", tok, got, want)
		}
	}
}

func TestRunErrors(t *testing.T) {
	specs, _ := ctxsel.Resolver{}.ResolveList("topk:k=1")
	if _, err := Run(context.Background(), handRecords()[2:], fakeScorer{}, Options{Strategies: specs, Counter: fakeCounter{}}); err == nil {
		t.Fatal("no error when every record lacks gold")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, handRecords(), score.NewBM25(), Options{Strategies: specs}); err == nil {
		t.Fatal("no error on a cancelled context")
	}
}

func TestCurves(t *testing.T) {
	curves, skipped, err := Curves(context.Background(), handRecords(), fakeScorer{}, fakeCounter{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if skipped != 1 || len(curves) != 2 {
		t.Fatalf("%d curves, %d skipped", len(curves), skipped)
	}
	c := curves[0]
	if c.RecordID != "q1" || fmt.Sprint(c.Scores) != "[0.9 0.8 0.5 0.1]" || fmt.Sprint(c.Tokens) != "[10 20 30 40]" || fmt.Sprint(c.Gold) != "[true false true false]" {
		t.Fatalf("curve %+v", c)
	}
}
