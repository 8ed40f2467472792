package evidence_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/index/indextest"
)

// bm25Model scores a sentence by its BM25 z-score alone: weight w and
// bias b on the log-odds scale, the embedded model's floor 0.002, no stop
// (the floor alone decides what a large budget sends), no gate.
func bm25Model(w, b float64) *evidence.Model {
	return &evidence.Model{Version: evidence.ModelVersion, Learner: evidence.LearnerLogistic,
		Features: []string{"bm25_z"}, Mean: []float64{0}, Scale: []float64{1}, Weights: []float64{w}, Bias: b,
		Passages: 5, CostExponent: 1, Floor: 0.002}
}

var gateTexts = []string{
	"Arlen\nThe river Wend flows through the town of Arlen. Arlen has a market on the square. The market opens on Sundays. Bakers sell bread there. The town hall is old.",
	"Harbours\nShips dock in the harbour at dawn. Fishermen mend their nets. Gulls circle the boats.",
}

// min_expected lets the floor cut where the model is confident and stops
// it where every p is small: on confident scores (their p sum past the
// gate) min_expected sends what the floor alone sends, less than no floor;
// on flat ones, where the floor drops sentences only for being on a
// smaller scale than it was chosen on, it sends what no floor sends.
func TestMinExpected(t *testing.T) {
	q := query(t, "Which river flows through the town of Arlen?", gateTexts...)
	ctx := context.Background()
	run := func(m *evidence.Model, spec string) ctxsel.Selection {
		t.Helper()
		s, err := evidence.Parse(spec, evidence.Options{Embedder: indextest.HashEmbedder{}, Counter: counter(t), Model: m})
		if err != nil {
			t.Fatal(err)
		}
		sel, err := s.SelectTexts(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		return sel
	}
	sent := func(sel ctxsel.Selection) int {
		n := 0
		for _, ev := range sel.Evidence {
			n += len(ev.Spans)
		}
		return n
	}
	probs := func(m *evidence.Model) (ps []float64, sum float64) {
		s, err := evidence.New(evidence.Options{Budget: 2000, Embedder: indextest.HashEmbedder{}, Counter: counter(t), Model: m})
		if err != nil {
			t.Fatal(err)
		}
		fs, err := s.Features(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			ps = append(ps, f.P)
			sum += f.P
		}
		return ps, sum
	}
	const gate = 0.5

	confident := bm25Model(4, -6)
	if ps, sum := probs(confident); sum < gate || slices.Min(ps) >= 0.002 {
		t.Fatalf("the confident fixture: p %v (sum %v), want a sum of at least %g and some p below the floor", ps, sum, gate)
	}
	none, floor := run(confident, "evidence:budget=2000,floor=0"), run(confident, "evidence:budget=2000")
	gated := run(confident, "evidence:budget=2000,min_expected=0.5")
	if sent(floor) >= sent(none) || sent(gated) != sent(floor) || gated.Tokens != floor.Tokens || strings.Contains(gated.Explanation.Reason, "min_expected") {
		t.Errorf("confident: no floor sent %d sentences, the floor %d, with min_expected %d (%d and %d tokens): want the floor's cut: %s",
			sent(none), sent(floor), sent(gated), floor.Tokens, gated.Tokens, gated.Explanation.Reason)
	}

	flat := bm25Model(0.3, -6.2)
	if ps, sum := probs(flat); sum >= gate || slices.Min(ps) >= 0.002 {
		t.Fatalf("the flat fixture: p %v (sum %v), want a sum under %g and some p below the floor", ps, sum, gate)
	}
	none, floor = run(flat, "evidence:budget=2000,floor=0"), run(flat, "evidence:budget=2000")
	gated = run(flat, "evidence:budget=2000,min_expected=0.5")
	if sent(floor) >= sent(none) {
		t.Errorf("flat: the floor sent %d of %d sentences: the fixture does not test the gate", sent(floor), sent(none))
	}
	if sent(gated) != sent(none) || gated.Tokens != none.Tokens || !strings.Contains(gated.Explanation.Reason, "under min_expected=0.5") ||
		strings.Contains(gated.Explanation.Reason, "(the floor)") {
		t.Errorf("flat: min_expected sent %d of %d sentences (%d of %d tokens): %s", sent(gated), sent(none), gated.Tokens, none.Tokens, gated.Explanation.Reason)
	}
	if got := gated.Explanation.Params["min_expected"]; got != gate {
		t.Errorf("params: min_expected %v", got)
	}

	// the model's min_expected is the default; min_expected=0 turns it off
	withGate := *flat
	withGate.MinExpected = gate
	if got := run(&withGate, "evidence:budget=2000"); sent(got) != sent(none) {
		t.Errorf("the model's min_expected: %d of %d sentences", sent(got), sent(none))
	}
	if got := run(&withGate, "evidence:budget=2000,min_expected=0"); sent(got) != sent(floor) || got.Explanation.Strategy != "evidence:budget=2000,min_expected=0" {
		t.Errorf("min_expected=0: %d sentences, want the floor's %d (%s)", sent(got), sent(floor), got.Explanation.Strategy)
	}
	for _, spec := range []string{"evidence:budget=5,min_expected=-1", "evidence:budget=5,min_expected=1001", "evidence:budget=5,min_expected=NaN"} {
		if _, err := evidence.Parse(spec, evidence.Options{Embedder: indextest.HashEmbedder{}}); err == nil {
			t.Errorf("%s: accepted", spec)
		}
	}
	if _, err := evidence.New(evidence.Options{Budget: 5, Embedder: indextest.HashEmbedder{}, MinExpected: -0.5}); err == nil {
		t.Error("MinExpected -0.5: accepted")
	}
}
