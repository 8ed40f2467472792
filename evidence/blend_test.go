package evidence_test

import (
	"context"
	"errors"
	"math"
	"reflect"
	"testing"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/index/indextest"
)

// The blend: a turns-routed unit's p is σ((1 − w)·logit(the turns
// model's p) + w·logit(the top model's p)), from the kind's model's
// blend or the spec's; w = 0 scores and sends exactly as without it; prose
// and tables are the top and table models' whatever w.
func TestKindsBlend(t *testing.T) {
	const turnsP, tableP = 0.3, 0.6
	logit := func(p float64) float64 { return math.Log(p / (1 - p)) }
	if evidence.DefaultModel().Calibration != nil {
		t.Fatal("the top model has a map: this test's p would need it")
	}
	kinds := func(w float64) *evidence.Model {
		turns := constantModel(logit(turnsP))
		m := combined(t, map[string]*evidence.Model{evidence.KindTurns: turns, evidence.KindTable: constantModel(logit(tableP))})
		m.Kinds[evidence.KindTurns].Blend = w
		if err := m.Validate(); err != nil {
			t.Fatal(err)
		}
		return m
	}
	ctx := context.Background()
	q := query(t, "When will the Rotterdam customer's double charge be refunded?", kindsChat, kindsProse, kindsTable)
	run := func(m *evidence.Model, blend float64) ([]evidence.SentenceFeatures, ctxsel.Selection) {
		t.Helper()
		sel, err := evidence.New(evidence.Options{Budget: 60, Hop: evidence.HopOff, Embedder: indextest.HashEmbedder{}, Counter: counter(t), Model: m, Blend: blend})
		if err != nil {
			t.Fatal(err)
		}
		fs, err := sel.Features(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		s, err := sel.SelectTexts(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return fs, s
	}
	// the top model's own p of every unit: a selector with no kinds
	prose := combined(t, map[string]*evidence.Model{evidence.KindTurns: nil, evidence.KindTable: nil})
	plain, err := evidence.New(evidence.Options{Budget: 60, Hop: evidence.HopOff, Embedder: indextest.HashEmbedder{}, Counter: counter(t), Model: prose, Units: kinds(0).Units()})
	if err != nil {
		t.Fatal(err)
	}
	top, err := plain.Features(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	base, baseSel := run(kinds(0), 0)
	for _, c := range []struct {
		name  string
		model float64 // the turns model's blend
		spec  float64 // Options.Blend
		w     float64 // the blend in use
	}{
		{"model 0.5", 0.5, 0, 0.5},
		{"spec 0.25", 0, 0.25, 0.25},
		{"spec over model", 0.75, 0.25, 0.25},
		{"spec 1", 0, 1, 1},
		{"spec off over model", 0.5, evidence.BlendOff, 0},
		{"spec off", 0, evidence.BlendOff, 0},
	} {
		fs, s := run(kinds(c.model), c.spec)
		if len(fs) != len(top) {
			t.Fatalf("%s: %d units, %d without kinds", c.name, len(fs), len(top))
		}
		moved := 0
		for i, f := range fs {
			want := top[i].P
			switch {
			case f.Kind == evidence.Context:
				want = 0
			case f.Passage == 0:
				want = 1 / (1 + math.Exp(-((1-c.w)*logit(turnsP) + c.w*logit(top[i].P))))
			case f.Passage == 2:
				want = tableP
			}
			if math.Abs(f.P-want) > 1e-12 {
				t.Errorf("%s: passage %d unit %d (%v): p %v, want %v", c.name, f.Passage, i, f.Kind, f.P, want)
			}
			if f.P != base[i].P {
				moved++
			}
		}
		if (c.w == 0) != (moved == 0) {
			t.Errorf("%s: blend %v moved %d units' p", c.name, c.w, moved)
		}
		// (the spec's name says blend=0 where it was given)
		if c.w == 0 && (!reflect.DeepEqual(s.Evidence, baseSel.Evidence) || !reflect.DeepEqual(s.Indices, baseSel.Indices) || s.Explanation.Reason != baseSel.Explanation.Reason) {
			t.Errorf("%s: blend 0 sends otherwise:\n%+v\n%+v", c.name, s, baseSel)
		}
	}
	// ProbOf reads the kind's blend too
	x := top[0].Features
	m := kinds(0.5)
	if got, want := m.ProbOf(x, evidence.KindTurns), evidence.BlendLogits(turnsP, prose.Prob(x), 0.5); math.Abs(got-want) > 1e-12 {
		t.Errorf("ProbOf turns with blend 0.5: %v, want %v", got, want)
	}
	if got := kinds(0).ProbOf(x, evidence.KindTurns); math.Abs(got-turnsP) > 1e-12 {
		t.Errorf("ProbOf turns with blend 0: %v", got)
	}
	// bounds: a kind's model's only, 0…1
	for _, w := range []float64{-0.1, 1.5, math.NaN()} {
		bad := kinds(0)
		bad.Kinds[evidence.KindTurns].Blend = w
		if bad.Validate() == nil {
			t.Errorf("a kind's blend %v accepted", w)
		}
		if _, err := evidence.New(evidence.Options{Budget: 60, Embedder: indextest.HashEmbedder{}, Blend: w}); !errors.Is(err, ctxsel.ErrInvalidInput) {
			t.Errorf("Options.Blend %v: %v", w, err)
		}
	}
	topBlend := kinds(0)
	topBlend.Blend = 0.5
	if topBlend.Validate() == nil {
		t.Error("a top model's blend accepted")
	}
	b, err := kinds(0.25).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := evidence.ParseModel(b)
	if err != nil || back.Kinds[evidence.KindTurns].Blend != 0.25 {
		t.Fatalf("the blend after its file: %v", err)
	}
}
