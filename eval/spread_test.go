package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/dataset"
)

// spreadRecords are ten questions whose best passage takes 10, 20, …, 100
// tokens and whose second takes 60; the second is gold on the odd ones.
func spreadRecords() []dataset.Record {
	var recs []dataset.Record
	for i := 1; i <= 10; i++ {
		recs = append(recs, dataset.Record{ID: fmt.Sprintf("q%d", i), Question: "?", Passages: []dataset.Passage{
			{ID: "a", Text: fmt.Sprintf("0.9 %d", 10*i), Gold: true},
			{ID: "b", Text: "0.5 60", Gold: i%2 == 1},
			{ID: "c", Text: "0.1 500"},
		}})
	}
	return recs
}

// The spread of tokens per question is read off the sorted tokens by
// nearest rank, and the share under half the budget counts the questions
// that sent less than half the strategy's budget parameter.
func TestTokenSpread(t *testing.T) {
	specs, err := ctxsel.Resolver{}.ResolveList("topk:k=1,budget:tokens=200")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), spreadRecords(), fakeScorer{}, Options{Strategies: specs, Counter: fakeCounter{}, Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	// topk:k=1 sends 10 … 100 tokens; budget:tokens=200 the best two, 70 … 160
	top, bud := rep.Results[0].Spread, rep.Results[1].Spread
	if top == nil || bud == nil {
		t.Fatalf("no spread: %+v %+v", top, bud)
	}
	if top.P10 != 10 || top.P50 != 50 || top.P90 != 90 || top.Max != 100 || top.Budgeted != 0 || top.UnderHalf != nil {
		t.Errorf("topk:k=1 spread %+v", *top)
	}
	if bud.P10 != 70 || bud.P50 != 110 || bud.P90 != 150 || bud.Max != 160 || bud.Budgeted != 10 || bud.UnderHalf == nil || *bud.UnderHalf != 0.3 {
		t.Errorf("budget:tokens=200 spread %+v (under half %v)", *bud, bud.UnderHalf)
	}

	var out bytes.Buffer
	if err := WriteTable(&out, rep); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"median tokens", "< ½ budget", "30 %"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the wide table lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if err := WriteCompactTable(&out, rep, ""); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "median tokens") {
		t.Errorf("the compact table shows the spread:\n%s", out.String())
	}
}

// The report's JSON only gains keys: every key a result had before the
// spread (and, when asked, the paired difference) is still there.
func TestTokenSpreadJSONAddsOnly(t *testing.T) {
	specs, err := ctxsel.Resolver{}.ResolveList("topk:k=1,topk:k=2")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), spreadRecords(), fakeScorer{}, Options{Strategies: specs, Counter: fakeCounter{}, Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, rep); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Results []map[string]json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range got.Results[0] {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"all_gold", "diff_k", "envelope_recall", "frontier_recall", "gain_vs_envelope", "gain_vs_envelope_se", "gain_vs_topk",
		"mean_k", "mean_tokens", "mean_true_k", "n", "precision", "recall", "reduction_pct", "strategy", "token_fraction", "tokens_per_question"}
	if !slices.Equal(keys, want) {
		t.Errorf("result keys %v, want %v", keys, want)
	}
	var spread bytes.Buffer
	if err := json.Compact(&spread, got.Results[0]["tokens_per_question"]); err != nil {
		t.Fatal(err)
	}
	if spread.String() != `{"p10":10,"p50":50,"p90":90,"max":100}` {
		t.Errorf("tokens_per_question %s", spread.String())
	}
}

// Versus is the mean paired difference from the named row, with the
// standard error of that mean; the named row has none, and a name that
// is no row fails before anything is scored.
func TestVersus(t *testing.T) {
	specs, err := ctxsel.Resolver{}.ResolveList("topk:k=1,topk:k=2")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), spreadRecords(), fakeScorer{}, Options{Strategies: specs, Counter: fakeCounter{}, Bootstrap: -1, Versus: "topk:k=1"})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Results[0].Versus != nil {
		t.Errorf("the named row compares with itself: %+v", rep.Results[0].Versus)
	}
	v := rep.Results[1].Versus
	if v == nil || v.Strategy != "topk:k=1" || v.Recall == nil || v.EvidenceRecall != nil {
		t.Fatalf("versus %+v", v)
	}
	// recall gains 0.5 on the five odd questions (two gold), 0 on the even:
	// mean 0.25, sample variance 0.625/9, its mean's s.e. √(0.625/90)
	if math.Abs(*v.Recall-0.25) > 1e-12 || math.Abs(*v.RecallSE-math.Sqrt(0.625/90)) > 1e-12 {
		t.Errorf("recall diff %v ± %v", *v.Recall, *v.RecallSE)
	}
	if v.Tokens != 60 || v.TokensSE != 0 {
		t.Errorf("tokens diff %v ± %v", v.Tokens, v.TokensSE)
	}
	var out bytes.Buffer
	if err := WriteCompactTable(&out, rep, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "against topk:k=1") || !strings.Contains(out.String(), "+0.250 ± 0.083") {
		t.Errorf("the table lacks the paired difference:\n%s", out.String())
	}

	if _, err := Run(context.Background(), spreadRecords(), fakeScorer{}, Options{Strategies: specs, Counter: fakeCounter{}, Versus: "topk:k=3"}); err == nil {
		t.Error("no error for a versus that is no row")
	}
}

// With sentence labels, Versus also compares evidence and touched
// recall: a selector that sends 5 bytes of each gold sentence keeps and
// touches none of what top-1's whole passage keeps.
func TestVersusEvidence(t *testing.T) {
	specs, err := ctxsel.Resolver{}.ResolveList("topk:k=1")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), evidenceRecords(), fakeScorer{}, Options{Counter: fakeCounter{}, Bootstrap: -1, Versus: "topk:k=1",
		Strategies: append(specs, TextSelectors(cutSentence5{lastSentence{cut: 5}})...)})
	if err != nil {
		t.Fatal(err)
	}
	v := rep.Results[1].Versus
	if v == nil || v.EvidenceRecall == nil || v.TouchedRecall == nil {
		t.Fatalf("versus %+v", v)
	}
	// top-1 keeps 1/2 and 1/1; the cut keeps nothing: −0.5, −1
	if *v.EvidenceRecall != -0.75 || math.Abs(*v.EvidenceRecallSE-0.25) > 1e-12 || *v.TouchedRecall != -0.75 {
		t.Errorf("evidence diff %v ± %v, touched %v", *v.EvidenceRecall, *v.EvidenceRecallSE, *v.TouchedRecall)
	}
	if v.Tokens != -80 {
		t.Errorf("tokens diff %v", v.Tokens)
	}
}
