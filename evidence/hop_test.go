package evidence_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/index/indextest"
)

// hopModel scores by BM25 and by the second hop's link, with a hop of 2
// passages read from the best sentence.
func hopModel() *evidence.Model {
	return &evidence.Model{Version: evidence.ModelVersion, Learner: evidence.LearnerLogistic,
		Features: []string{"bm25_z", "linked", "hop_joined"}, Mean: []float64{0, 0, 0}, Scale: []float64{1, 1, 1},
		Weights: []float64{1, 3, 1}, Bias: -2, Passages: 2, CostExponent: 1, Hop: 2, Anchors: 1}
}

// A two-hop question: the film's passage names its director, whose
// passage (ranked last, far outside the candidates) holds the answer.
var hopTexts = []string{
	"Polish-Russian War (film)\nPolish-Russian War is a 2009 Polish film directed by Xawery Żuławski. It was shot in Warsaw.",
	"Polish cinema\nPolish films won many prizes in the war years. Directors of the war era.",
	"Russian film\nRussian film directors made war films.",
	"Gdańsk\nGdańsk is a city on the Baltic coast.",
	"Xawery Żuławski\nXawery Żuławski is a Polish film director. His mother is Małgorzata Braunek.",
}

func hopSelector(t *testing.T, spec string) ctxsel.TextSelector {
	t.Helper()
	s, err := evidence.Parse(spec, evidence.Options{Embedder: indextest.HashEmbedder{}, Counter: counter(t), Model: hopModel()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSecondHopJoinsANamedPassage(t *testing.T) {
	q := query(t, "Who is the mother of the director of the film Polish-Russian War?", hopTexts...)
	ctx := context.Background()
	with, err := hopSelector(t, "evidence:budget=200").SelectTexts(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(with.Indices, 4) {
		t.Fatalf("the director's passage was not joined: %v\n%s", with.Indices, with.Explanation.Reason)
	}
	if !strings.Contains(with.Explanation.Reason, "1 the second hop added") || with.Explanation.Params["hop"] != 2 {
		t.Fatalf("explanation: %s %v", with.Explanation.Reason, with.Explanation.Params)
	}
	for i, idx := range with.Indices {
		checkPrunedUnits(t, q.Texts[idx], with.Evidence[i], hopModel().Units())
	}
	without, err := hopSelector(t, "evidence:budget=200,hop=0").SelectTexts(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(without.Indices, 4) || strings.Contains(without.Explanation.Reason, "second hop") {
		t.Fatalf("hop=0 reached passage 4: %v %s", without.Indices, without.Explanation.Reason)
	}
	// the features of the second pass mark the joined passage
	s, err := evidence.New(evidence.Options{Budget: 200, Embedder: indextest.HashEmbedder{}, Counter: counter(t), Model: hopModel()})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := s.Features(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	linked, joined := slices.Index(evidence.FeatureNames, "linked"), slices.Index(evidence.FeatureNames, "hop_joined")
	seen := false
	for _, f := range fs {
		if f.Passage == 4 {
			seen = true
			if f.Features[linked] != 1 || f.Features[joined] != 1 {
				t.Fatalf("joined passage's features: linked %v, hop_joined %v", f.Features[linked], f.Features[joined])
			}
		} else if f.Features[joined] != 0 {
			t.Fatalf("passage %d marked joined", f.Passage)
		}
	}
	if !seen {
		t.Fatal("no rows for the joined passage")
	}
	// composed, only the strategy's passages can join
	composed, err := hopSelector(t, "topk:k=2+evidence:budget=200").SelectTexts(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(composed.Indices, 4) {
		t.Fatalf("a composition reached beyond its strategy's passages: %v", composed.Indices)
	}
}

func TestFloor(t *testing.T) {
	q := query(t, "Who is the mother of the director of the film Polish-Russian War?", hopTexts...)
	ctx := context.Background()
	none, err := hopSelector(t, "evidence:budget=400,floor=0").SelectTexts(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	some, err := hopSelector(t, "evidence:budget=400,floor=0.2").SelectTexts(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if some.Tokens >= none.Tokens || !strings.Contains(some.Explanation.Reason, "p ≥ 0.2 (the floor)") {
		t.Fatalf("floor 0.2 sent %d tokens, none %d: %s", some.Tokens, none.Tokens, some.Explanation.Reason)
	}
	all, err := hopSelector(t, "evidence:budget=400,floor=0.999").SelectTexts(ctx, q)
	if err != nil || all.K == 0 || !strings.Contains(all.Explanation.Reason, "so the best were sent without it") {
		t.Fatalf("nothing above the floor: %+v %v", all, err)
	}
	for _, spec := range []string{"evidence:budget=5,floor=1", "evidence:budget=5,floor=-0.1", "evidence:budget=5,floor=x", "evidence:budget=5,floor=NaN",
		"evidence:budget=5,hop=-1", "evidence:budget=5,hop=21", "evidence:budget=5,hop=x"} {
		if _, err := evidence.Parse(spec, evidence.Options{Embedder: indextest.HashEmbedder{}}); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("%s: %v", spec, err)
		}
	}
	if s := hopSelector(t, "evidence:budget=5,hop=0,floor=0.01"); s.Name() != "evidence:budget=5,hop=0,floor=0.01" {
		t.Errorf("name %q", s.Name())
	}
}

// Version 1 files (a logistic model over the first 14 features) are still
// read, and score as their weights say.
func TestVersion1ModelIsRead(t *testing.T) {
	v1 := `{"version": 1, "features": ["bm25_z","bm25_rel","dense_z","dense","passage_z","passage_gap","passage_rank","first","position","length","header_bm25_z","neighbour_bm25_z","bridge","bridged"],
	"mean": [0,0,0,0,0,0,0,0,0,0,0,0,0,0], "scale": [1,1,1,1,1,1,1,1,1,1,1,1,1,1], "weights": [2,0,0,0,0,0,0,0,0,0,0,0,0,0], "bias": -1,
	"passages": 20, "cost_exponent": 1, "neighbors": 0}`
	m, err := evidence.ParseModel([]byte(v1))
	if err != nil {
		t.Fatal(err)
	}
	x := make([]float64, len(evidence.FeatureNames))
	x[0] = 1
	x[len(x)-1] = 7 // a feature version 1 does not read
	if p := m.Prob(x); math.Abs(p-1/(1+math.Exp(-1))) > 1e-12 {
		t.Fatalf("p %v", p)
	}
	for _, bad := range []string{
		strings.Replace(v1, `"version": 1`, `"version": 1, "hop": 2, "anchors": 1`, 1),
		strings.Replace(v1, `"version": 1`, `"version": 1, "learner": "trees"`, 1),
		strings.Replace(v1, `"version": 1`, `"version": 5`, 1),
		strings.Replace(v1, `"version": 1`, `"version": 1, "kinds": {"turns": `+v1+`}`, 1),
		strings.Replace(v1, `"version": 1`, `"version": 1, "calibration": {"method": "platt", "a": 1}`, 1),
		strings.Replace(v1, `"version": 1`, `"version": 1, "min_expected": 1`, 1),
		strings.Replace(v1, `"bm25_rel"`, `"bm25_z"`, 1),
		strings.Replace(v1, `"bm25_rel"`, `"colour"`, 1),
	} {
		if _, err := evidence.ParseModel([]byte(bad)); err == nil {
			t.Errorf("accepted %.80q", bad)
		}
	}
}

// FuzzParseModel: any bytes either fail to parse or give a model whose
// probabilities are finite, in [0, 1], and survive its own file format.
func FuzzParseModel(f *testing.F) {
	def, err := evidence.DefaultModel().Marshal()
	if err != nil {
		f.Fatal(err)
	}
	hop, err := hopModel().Marshal()
	if err != nil {
		f.Fatal(err)
	}
	trees := `{"version":2,"learner":"trees","features":["bm25_z","dense"],"passages":20,"cost_exponent":1,"neighbors":0,
	"forest":{"depth":1,"base":-2,"trees":[{"f":[0],"t":[0.5],"v":[-1,1]},{"f":[-1],"t":[0],"v":[0.25,0]}]}}`
	calibrated := strings.Replace(strings.Replace(trees, `"version":2`, `"version":3`, 1), `"neighbors":0,`,
		`"neighbors":0,"calibration":{"method":"isotonic","x":[0.01,0.5],"y":[0.02,0.7],"kinds":{"table":{"method":"platt","a":0.9,"b":-1}}},`, 1)
	sub := strings.Replace(trees, `"version":2`, `"version":4`, 1)
	kinds := strings.Replace(sub, `"neighbors":0,`, `"neighbors":0,"kinds":{"turns":`+trees+`,"table":`+calibrated+`},`, 1)
	nested := strings.Replace(sub, `"neighbors":0,`, `"neighbors":0,"kinds":{"turns":`+kinds+`},`, 1)
	blended := strings.Replace(sub, `"neighbors":0,`, `"neighbors":0,"kinds":{"turns":`+strings.Replace(trees, `"neighbors":0,`, `"neighbors":0,"blend":0.5,`, 1)+`},`, 1)
	gated := strings.Replace(trees, `"neighbors":0,`, `"neighbors":0,"floor":0.002,"stop":0.99,"min_expected":1,`, 1)
	for _, s := range []string{string(def), string(hop), trees, calibrated, kinds, nested, strings.Replace(kinds, `"turns"`, `"prose"`, 1), gated,
		strings.Replace(gated, `:1,`, `:1001,`, 1), strings.Replace(gated, `:1,`, `:-1,`, 1), strings.Replace(gated, `:1,`, `:"x",`, 1),
		strings.Replace(kinds, `"version":4`, `"version":3`, 1), blended, strings.Replace(blended, `:0.5,`, `:1.5,`, 1),
		strings.Replace(blended, `:0.5,`, `:-0.1,`, 1), strings.Replace(blended, `:0.5,`, `:1,`, 1), strings.Replace(gated, `"floor"`, `"blend":0.5,"floor"`, 1), `{}`, `{"version":2}`, `[`, `{"version":2,"learner":"trees","forest":{"depth":7}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := evidence.ParseModel(b)
		if err != nil {
			return
		}
		x := make([]float64, len(evidence.FeatureNames))
		for i := range x {
			x[i] = float64(i%5) - 2
		}
		p := m.Prob(x)
		if math.IsNaN(p) || p < 0 || p > 1 {
			t.Fatalf("p %v", p)
		}
		if m.Blend != 0 {
			t.Fatalf("a top model with blend %v passed", m.Blend)
		}
		if !(m.MinExpected >= 0 && m.MinExpected <= evidence.MaxMinExpected) || !(m.Floor >= 0 && m.Floor < 1) || !(m.Stop >= 0 && m.Stop < 1) {
			t.Fatalf("floor %v, stop %v, min_expected %v passed", m.Floor, m.Stop, m.MinExpected)
		}
		for kind, sub := range m.Kinds {
			if sub == nil || sub.Kinds != nil || sub.Hop != 0 || m.Version < 4 || !(sub.Blend >= 0 && sub.Blend <= 1) {
				t.Fatalf("kind %s: a model that nests, hops, predates version 4 or blends by %v passed", kind, sub.Blend)
			}
			if pk := m.ProbOf(x, kind); math.IsNaN(pk) || pk < 0 || pk > 1 {
				t.Fatalf("kind %s: p %v", kind, pk)
			}
		}
		again, err := m.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		back, err := evidence.ParseModel(again)
		if err != nil {
			t.Fatalf("its own file does not parse: %v\n%s", err, again)
		}
		if back.Floor != m.Floor || back.Stop != m.Stop || back.MinExpected != m.MinExpected {
			t.Fatalf("floor, stop, min_expected %v %v %v, after its file %v %v %v", m.Floor, m.Stop, m.MinExpected, back.Floor, back.Stop, back.MinExpected)
		}
		if q := back.Prob(x); q != p {
			t.Fatalf("p %v, after its file %v", p, q)
		}
		for kind := range m.Kinds {
			if a, b := m.ProbOf(x, kind), back.ProbOf(x, kind); a != b {
				t.Fatalf("kind %s: p %v, after its file %v", kind, a, b)
			}
		}
	})
}
