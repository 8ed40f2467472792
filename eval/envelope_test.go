package eval

import (
	"context"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/fusion"
	"github.com/ctxsel/ctxsel/score"
)

// The hand records' budget frontier: q1's ranking costs 10, 20, 30, 40
// tokens with gold at ranks 1 and 3 (of 2 gold), q2's 10, 10, 10 with its one
// gold first. Budgets 16–19 give (10 tokens, recall 0.75), 20–29 (15, 0.75),
// 30–59 (30, 0.75), 60–99 (45, 1), 100 (65, 1).
func TestBudgetFrontierHand(t *testing.T) {
	rep, err := Run(context.Background(), handRecords(), fakeScorer{}, Options{Strategies: resolveList(t, "topk:k=1"), Counter: fakeCounter{}, Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	bf := rep.BudgetFrontier
	if first, last := bf[0], bf[len(bf)-1]; first.Budget != 16 || first.MeanTokens != 10 || first.Recall != 0.75 || last.Budget != 100 || last.MeanTokens != 65 || last.Recall != 1 {
		t.Fatalf("budget frontier ends %+v … %+v", first, last)
	}
	for _, c := range []struct{ tokens, budget, topk float64 }{
		{10, 0.75, 0.75}, {30, 0.75, 0.75 + 0.25*5/20}, {40, 0.75 + 0.25*10/15, 0.9375}, {45, 1, 1},
	} {
		b, k := interpolate(bf, c.tokens), interpolate(rep.Frontier, c.tokens)
		if math.Abs(b-c.budget) > 1e-12 || math.Abs(k-c.topk) > 1e-12 {
			t.Errorf("at %v tokens: budget %v (want %v), top-k %v (want %v)", c.tokens, b, c.budget, k, c.topk)
		}
		if e := envelope(rep.Frontier, bf, c.tokens); e != max(b, k) {
			t.Errorf("envelope at %v = %v, want %v", c.tokens, e, max(b, k))
		}
	}
}

// A budget beats top-k when passage lengths differ across questions: q1's
// passages are long, q2's short, so at the same mean tokens a budget gives
// q2 more passages. The envelope must follow the budget there.
func TestEnvelopeFollowsBudget(t *testing.T) {
	p := func(id, text string, gold bool) dataset.Passage {
		return dataset.Passage{ID: id, Text: text, Gold: gold}
	}
	recs := []dataset.Record{
		{ID: "q1", Question: "?", Passages: []dataset.Passage{p("a", "0.9 100", true), p("b", "0.8 100", false)}},
		{ID: "q2", Question: "?", Passages: []dataset.Passage{p("a", "0.9 10", false), p("b", "0.8 10", true)}},
	}
	specs, _ := ctxsel.Resolver{}.ResolveList("budget:tokens=20")
	rep, err := Run(context.Background(), recs, fakeScorer{}, Options{Strategies: specs, Counter: fakeCounter{}, Bootstrap: 50})
	if err != nil {
		t.Fatal(err)
	}
	r := rep.Results[0]
	// budget 20: q1 selects nothing (0 tokens, recall 0), q2 both (20, 1):
	// recall 0.5 at 10 mean tokens; top-k at 10 tokens: k=1 costs 55 mean
	// tokens for recall 0.5, so (10/55)·0.5.
	if r.Recall != 0.5 || r.MeanTokens != 10 || math.Abs(r.FrontierRecall-0.5*10/55) > 1e-12 {
		t.Fatalf("budget result %+v", r)
	}
	if r.EnvelopeRecall != 0.5 || r.GainVsEnvelope != 0 || r.GainVsTopK <= 0 {
		t.Fatalf("envelope %v gain %v (top-k gain %v): the envelope must include the budget frontier", r.EnvelopeRecall, r.GainVsEnvelope, r.GainVsTopK)
	}
	if !(r.GainSE >= 0) || math.IsInf(r.GainSE, 0) {
		t.Fatalf("bootstrap standard error %v", r.GainSE)
	}
}

// negScorer ranks the other way round: a second single scorer.
type negScorer struct{}

func (negScorer) Name() string { return "neg" }
func (negScorer) Score(ctx context.Context, q string, ps []string) ([]float64, error) {
	s, _ := fakeScorer{}.Score(ctx, q, ps)
	for i := range s {
		s[i] = -s[i]
	}
	return s, nil
}

func TestBaselinesAndHybridChannels(t *testing.T) {
	h := &score.Hybrid{Dense: fakeScorer{}, Lexical: negScorer{}, Method: fusion.ZScore, Alpha: 0.75}
	specs, _ := ctxsel.Resolver{}.ResolveList("topk:k=1,topk:k=2")
	rep, err := Run(context.Background(), handRecords(), h, Options{Strategies: specs, Counter: fakeCounter{}, Baselines: []score.Scorer{fakeScorer{}, negScorer{}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Baselines) != 2 || rep.Baselines[0].Scorer != "fake" || rep.Baselines[1].Scorer != "neg" {
		t.Fatalf("baselines %+v", rep.Baselines)
	}
	// alpha 0.75 on fake's z-scores against 0.25 on their negation is
	// fake's ranking: the hybrid's frontier is fake's, and its gains over the
	// best single scorer are zero at every k.
	for _, r := range rep.Results {
		if r.BestSingleRecall != r.EnvelopeRecall || r.GainVsBestSingle != r.GainVsEnvelope {
			t.Errorf("%s: best single %v, own envelope %v", r.Strategy, r.BestSingleRecall, r.EnvelopeRecall)
		}
	}
	if !strings.HasPrefix(rep.Scorer, "hybrid(fake+neg):alpha=0.75,fusion=zscore") {
		t.Errorf("scorer name %q", rep.Scorer)
	}
	curves, _, err := Curves(context.Background(), handRecords(), h, fakeCounter{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	q := curves[0]
	if len(q.Channels) != 2 {
		t.Fatalf("channels %v", q.Channels)
	}
	for i := range q.Scores {
		if q.Channels[1][i] != -q.Channels[0][i] {
			t.Fatalf("channel scores %v", q.Channels)
		}
		if want, _ := strconv.ParseFloat(strings.Fields(handRecords()[0].Passages[i].Text)[0], 64); q.Channels[0][i] != want {
			t.Fatalf("dense channel %v", q.Channels[0])
		}
	}
}

// Two runs of BM25 (and of a hybrid over it) give identical reports: no map
// order leaks into the scores.
func TestBM25Deterministic(t *testing.T) {
	recs, err := dataset.Pool(handTextRecords(), 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	specs, _ := ctxsel.Resolver{}.ResolveList("topk:k=1,adaptivek,knee")
	first := map[string]*Report{}
	for range 3 {
		h, err := score.NewHybrid(score.NewBM25(), fusion.RRF, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []score.Scorer{score.NewBM25(), h} {
			rep, err := Run(context.Background(), recs, s, Options{Strategies: specs, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			f, ok := first[rep.Scorer]
			if !ok {
				first[rep.Scorer] = rep
				continue
			}
			for i := range rep.Results {
				if !reflect.DeepEqual(rep.Results[i], f.Results[i]) {
					t.Fatalf("%s: run differs: %+v vs %+v", rep.Scorer, rep.Results[i], f.Results[i])
				}
			}
		}
	}
	if len(first) != 2 {
		t.Fatalf("compared %d scorers, want 2", len(first))
	}
}

func handTextRecords() []dataset.Record {
	p := func(id, text string, gold bool) dataset.Passage {
		return dataset.Passage{ID: id, Text: text, Gold: gold}
	}
	return []dataset.Record{
		{ID: "q1", Question: "who wrote the river song about the old mill", Passages: []dataset.Passage{
			p("a", "The river song was written by Ada Miller about the old mill.", true),
			p("b", "A mill grinds grain; the old mill stood by the river.", false),
			p("c", "Songs about rivers are common in folk music.", false),
			p("d", "Ada Miller was born in 1901 and wrote many songs.", true),
			p("e", "Unrelated text about mountains and snow.", false)}},
		{ID: "q2", Question: "when was the bridge over the bay opened", Passages: []dataset.Passage{
			p("a", "The bay bridge opened in 1936 after three years of work.", true),
			p("b", "Bridges span rivers, bays and valleys.", false),
			p("c", "The bay is home to many seabirds.", false)}},
	}
}
