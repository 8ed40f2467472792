package evidence_test

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/evidence/evidencetrain"
	"github.com/ctxsel/ctxsel/index/indextest"
)

var kindsChat = "[2024-03-07 14:05] Omar: The customer from Rotterdam called again about the invoice.\n" +
	"[2024-03-07 14:07] Lena: I asked finance about the double charge.\n" +
	"[2024-03-07 14:09] Lena: She says the second charge will be refunded within five working days.\n"

var kindsTable = "## Error codes\n\n| Code | Meaning | What to do |\n|------|---------|------------|\n" +
	"| E4 | Outdoor unit not responding | Check the breaker |\n| E5 | Sensor fault | Call service |\n"

var kindsProse = "Rotterdam\nRotterdam is a port city in the Netherlands. Its port is the largest in Europe. The city was rebuilt after 1940."

// constantModel scores every unit σ(bias), reading the unit_row feature
// (so a selector with it as a kind's model reads rows as units).
func constantModel(bias float64) *evidence.Model {
	return &evidence.Model{Version: 3, Learner: evidence.LearnerLogistic, Features: []string{"unit_row"},
		Mean: []float64{0}, Scale: []float64{1}, Weights: []float64{0}, Bias: bias, Passages: 20, CostExponent: 1}
}

func combined(t *testing.T, kinds map[string]*evidence.Model) *evidence.Model {
	t.Helper()
	m, err := evidencetrain.Combine(evidence.DefaultModel(), kinds)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestRouteOf(t *testing.T) {
	for _, c := range []struct {
		text string
		on   evidence.Structures
		want string
	}{
		{kindsChat, evidence.DefaultUnits, evidence.KindTurns},
		{kindsTable, evidence.AllUnits, evidence.KindTable},
		{kindsTable, evidence.DefaultUnits, evidence.KindProse}, // rows off: a table is prose
		{kindsProse, evidence.AllUnits, evidence.KindProse},
		{"- one item\n- another item\n", evidence.AllUnits, evidence.KindProse},
	} {
		if got := evidence.RouteOf(evidence.SplitUnits(c.text, c.on)); got != c.want {
			t.Errorf("%q (units %v): %s, want %s", c.text[:20], c.on, got, c.want)
		}
	}
}

func TestKindsRouteUnitsToTheirModel(t *testing.T) {
	const turnsP, tableP = 0.3, 0.6
	logit := func(p float64) float64 { return math.Log(p / (1 - p)) }
	m := combined(t, map[string]*evidence.Model{evidence.KindTurns: constantModel(logit(turnsP)), evidence.KindTable: constantModel(logit(tableP))})
	if m.Units()&evidence.RowUnits == 0 {
		t.Fatal("a kind's model reads unit_row, yet rows are off by default")
	}
	ctx := context.Background()
	q := query(t, "When will the Rotterdam customer's double charge be refunded?", kindsChat, kindsProse, kindsTable)
	// without the hop: its anchors are read from prose only with kinds
	sel, err := evidence.New(evidence.Options{Budget: 300, Hop: evidence.HopOff, Embedder: indextest.HashEmbedder{}, Counter: counter(t), Model: m})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := sel.Features(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := evidence.New(evidence.Options{Budget: 300, Hop: evidence.HopOff, Embedder: indextest.HashEmbedder{}, Counter: counter(t), Model: evidence.DefaultModel(),
		Units: m.Units()})
	if err != nil {
		t.Fatal(err)
	}
	base, err := plain.Features(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != len(base) {
		t.Fatalf("%d units with kinds, %d without", len(fs), len(base))
	}
	seen := map[int]int{}
	for i, f := range fs {
		seen[f.Passage]++
		want := base[i].P // prose: the top model's, to the last bit
		switch {
		case f.Kind == evidence.Context:
			want = 0
		case f.Passage == 0:
			want = turnsP
		case f.Passage == 2:
			want = tableP
		}
		if math.Abs(f.P-want) > 1e-12 {
			t.Errorf("passage %d unit %q (%v): p %v, want %v", f.Passage, q.Texts[f.Passage][f.Span[0]:f.Span[1]], f.Kind, f.P, want)
		}
		if wantRoute := map[int]string{0: evidence.KindTurns, 2: evidence.KindTable}[f.Passage]; f.Route != wantRoute {
			t.Errorf("passage %d: route %q, want %q", f.Passage, f.Route, wantRoute)
		}
		if f.Passage == 1 && f.P != base[i].P {
			t.Errorf("prose unit %d: p %v with kinds, %v without", i, f.P, base[i].P)
		}
		if !reflect.DeepEqual(f.Features, base[i].Features) {
			t.Errorf("unit %d: features differ with kinds", i)
		}
	}
	if seen[0] == 0 || seen[1] == 0 || seen[2] == 0 {
		t.Fatalf("units per passage: %v", seen)
	}
	// the explanation names the model that scored a routed passage
	got, err := sel.SelectTexts(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	for i, idx := range got.Indices {
		if want := map[int]string{0: "scored by the turns model", 2: "scored by the table model"}[idx]; (want == "") == strings.Contains(got.Evidence[i].Why, "scored by") ||
			!strings.Contains(got.Evidence[i].Why, want) {
			t.Errorf("passage %d: %s", idx, got.Evidence[i].Why)
		}
	}
	// Prob reads the top model; ProbOf a kind's
	x := base[0].Features
	if got := m.ProbOf(x, evidence.KindTurns); math.Abs(got-turnsP) > 1e-12 {
		t.Errorf("ProbOf turns: %v", got)
	}
	if got, want := m.Prob(x), evidence.DefaultModel().Prob(x); got != want {
		t.Errorf("Prob %v, the top model's %v", got, want)
	}
}

// A query of prose only is scored and packed exactly as by the top model
// alone, the second hop included.
func TestKindsLeaveProseAlone(t *testing.T) {
	m := combined(t, map[string]*evidence.Model{evidence.KindTurns: constantModel(2), evidence.KindTable: constantModel(2)})
	// the shipped turns model's blend, which the explanation's settings name
	m.Kinds[evidence.KindTurns].Blend = evidence.DefaultModel().Kinds[evidence.KindTurns].Blend
	q := query(t, "Who is the mother of the director of the film Polish-Russian War?", hopTexts...)
	ctx := context.Background()
	for _, budget := range []int{40, 120, 400} {
		var got [2]any
		for i, model := range []*evidence.Model{evidence.DefaultModel(), m} {
			sel, err := evidence.New(evidence.Options{Budget: budget, Embedder: indextest.HashEmbedder{}, Counter: counter(t), Model: model})
			if err != nil {
				t.Fatal(err)
			}
			s, err := sel.SelectTexts(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			fs, err := sel.Features(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			got[i] = []any{s.Indices, s.Evidence, s.Explanation, fs}
		}
		if !reflect.DeepEqual(got[0], got[1]) {
			t.Errorf("budget %d: prose scored or packed otherwise with kinds:\n%v\n%v", budget, got[0], got[1])
		}
	}
}

// With the second hop, a routed passage keeps its first-pass p; the hop's
// anchors are read from prose only.
func TestKindsKeepFirstPassP(t *testing.T) {
	turns := &evidence.Model{Version: 3, Learner: evidence.LearnerLogistic, Features: []string{"bm25_z", "dense_z"},
		Mean: []float64{0, 0}, Scale: []float64{1, 1}, Weights: []float64{1, 0.5}, Bias: -1, Passages: 20, CostExponent: 1}
	m := combined(t, map[string]*evidence.Model{evidence.KindTurns: turns})
	texts := append([]string{kindsChat}, hopTexts...)
	q := query(t, "Who is the mother of the director of the film Polish-Russian War?", texts...)
	ctx := context.Background()
	p := map[string][]float64{}
	for _, hop := range []int{0, evidence.HopOff} {
		sel, err := evidence.New(evidence.Options{Budget: 300, Passages: 3, Hop: hop, Embedder: indextest.HashEmbedder{}, Counter: counter(t), Model: m})
		if err != nil {
			t.Fatal(err)
		}
		fs, err := sel.Features(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		key := "hop"
		if hop == evidence.HopOff {
			key = "none"
		}
		for _, f := range fs {
			if f.Passage == 0 {
				p[key] = append(p[key], f.P)
			}
		}
	}
	if len(p["hop"]) == 0 || !reflect.DeepEqual(p["hop"], p["none"]) {
		t.Fatalf("the chat's p with the hop %v, without %v", p["hop"], p["none"])
	}
}

// The file: version 4, a round trip that scores the same, and the models
// by kind validated (no nesting, no hop, known kinds, not before version 4).
func TestKindsModelFile(t *testing.T) {
	if _, err := evidencetrain.Combine(evidence.DefaultModel(), map[string]*evidence.Model{evidence.KindTable: hopModel()}); err == nil {
		t.Fatal("a kind's model with a second hop was combined")
	}
	table := hopModel()
	table.Hop, table.Anchors = 0, 0
	m := combined(t, map[string]*evidence.Model{evidence.KindTurns: constantModel(-1), evidence.KindTable: table})
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "{\n  \"version\": 4,") {
		t.Fatalf("the file does not open with version 4 (which readers of versions 1…3 reject): %.40s", b)
	}
	back, err := evidence.ParseModel(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, m) {
		t.Fatal("the file does not read back as the model")
	}
	x := make([]float64, len(evidence.FeatureNames))
	for i := range x {
		x[i] = float64(i%3) - 1
	}
	for _, kind := range []string{"", evidence.KindTurns, evidence.KindTable, evidence.KindProse} {
		if a, b := m.ProbOf(x, kind), back.ProbOf(x, kind); a != b || math.IsNaN(a) {
			t.Errorf("kind %q: p %v, after its file %v", kind, a, b)
		}
	}
	// removing every kind gives the top model back
	plain, err := evidencetrain.Combine(m, map[string]*evidence.Model{evidence.KindTurns: nil, evidence.KindTable: nil})
	if err != nil || plain.Kinds != nil || plain.Provenance["kinds"] != "" {
		t.Fatalf("kinds removed: %v %v", err, plain.Kinds)
	}
	for _, c := range []struct{ name, from, to string }{
		{"version 3", `"version": 4`, `"version": 3`},
		{"an unknown kind", `"turns": {`, `"prose": {`},
		{"a nested kind", `"turns": {`, `"turns": {"kinds": {"table": {}},`},
		{"no model", `"turns": {`, `"turns": null, "x": {`},
	} {
		bad := strings.Replace(string(b), c.from, c.to, 1)
		if bad == string(b) {
			t.Fatalf("%s: nothing replaced", c.name)
		}
		if _, err := evidence.ParseModel([]byte(bad)); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
	if _, err := evidence.ParseModel([]byte(strings.Replace(string(b), "\"kinds\": {", "\"kinds\": {}, \"x\": {", 1))); err == nil {
		t.Error("an empty kinds map accepted")
	}
}
