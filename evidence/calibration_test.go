package evidence_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/evidence"
	"github.com/ctxsel/ctxsel/index/indextest"
)

func TestCalibrationApply(t *testing.T) {
	// knots (0.2, 1/3) and (0.4, 1): flat outside, linear between
	iso := &evidence.Calibration{Method: evidence.CalibrationIsotonic, X: []float64{0.2, 0.4}, Y: []float64{1.0 / 3, 1}}
	// Platt a = 2, b = 0: σ(2·logit p) = p² / (p² + (1−p)²); at p = 0.25:
	// 0.0625 / (0.0625 + 0.5625) = 0.1
	platt := &evidence.Calibration{Method: evidence.CalibrationPlatt, A: 2}
	for _, c := range []struct {
		m       *evidence.Calibration
		p, want float64
	}{
		{iso, 0.05, 1.0 / 3}, {iso, 0.2, 1.0 / 3}, {iso, 0.3, 2.0 / 3}, {iso, 0.4, 1}, {iso, 0.9, 1}, {iso, -1, 1.0 / 3},
		{platt, 0.25, 0.1}, {platt, 0.5, 0.5}, {platt, 0, 0}, {platt, 1, 1},
	} {
		if err := c.m.Validate(); err != nil {
			t.Fatal(err)
		}
		if got := c.m.Apply(c.p); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s(%v) = %v, want %v", c.m.Method, c.p, got, c.want)
		}
	}
}

func TestCalibrationValidate(t *testing.T) {
	many := &evidence.Calibration{Method: evidence.CalibrationIsotonic}
	for i := range 1001 {
		many.X, many.Y = append(many.X, float64(i)/1001), append(many.Y, 0.5)
	}
	for name, c := range map[string]*evidence.Calibration{
		"falling":       {Method: evidence.CalibrationIsotonic, X: []float64{0.1, 0.2}, Y: []float64{0.5, 0.4}},
		"x repeated":    {Method: evidence.CalibrationIsotonic, X: []float64{0.1, 0.1}, Y: []float64{0.4, 0.5}},
		"above 1":       {Method: evidence.CalibrationIsotonic, X: []float64{0.1, 0.2}, Y: []float64{0.4, 1.5}},
		"x below 0":     {Method: evidence.CalibrationIsotonic, X: []float64{-0.1, 0.2}, Y: []float64{0.4, 0.5}},
		"NaN":           {Method: evidence.CalibrationIsotonic, X: []float64{0.1, 0.2}, Y: []float64{0.4, math.NaN()}},
		"no knots":      {Method: evidence.CalibrationIsotonic},
		"lengths":       {Method: evidence.CalibrationIsotonic, X: []float64{0.1, 0.2}, Y: []float64{0.4}},
		"isotonic a":    {Method: evidence.CalibrationIsotonic, X: []float64{0.1}, Y: []float64{0.4}, A: 1},
		"platt falling": {Method: evidence.CalibrationPlatt, A: -1},
		"platt inf":     {Method: evidence.CalibrationPlatt, A: 1, B: math.Inf(1)},
		"platt knots":   {Method: evidence.CalibrationPlatt, A: 1, X: []float64{0.1}, Y: []float64{0.1}},
		"method":        {Method: "beta", A: 1},
		"too many":      many,
	} {
		if err := c.Validate(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// A model without a map (every file before version 3) reads and scores as
// it did: its file round-trips byte for byte, and a map that is the
// identity selects exactly what no map does.
func TestModelWithoutCalibrationScoresAsBefore(t *testing.T) {
	def := evidence.DefaultModel()
	if def.Calibration != nil {
		t.Fatal("the embedded model holds a map")
	}
	b, err := def.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte("calibration")) {
		t.Fatal("a model without a map writes one")
	}
	parsed, err := evidence.ParseModel(b)
	if err != nil || !reflect.DeepEqual(parsed, def) {
		t.Fatalf("round trip: %v", err)
	}
	ident := *def
	ident.Version, ident.Calibration = evidence.ModelVersion, &evidence.Calibration{Method: evidence.CalibrationPlatt, A: 1}
	shift := *def
	shift.Version, shift.Calibration = evidence.ModelVersion, &evidence.Calibration{Method: evidence.CalibrationPlatt, A: 1, B: 2}
	q := query(t, "In which city was Ada Lovelace born?", passages...)
	sel := func(m *evidence.Model) []evidence.SentenceFeatures {
		s, err := evidence.New(evidence.Options{Budget: 60, Embedder: indextest.HashEmbedder{}, Counter: counter(t), Model: m})
		if err != nil {
			t.Fatal(err)
		}
		fs, err := s.Features(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		return fs
	}
	base, same, shifted := sel(def), sel(&ident), sel(&shift)
	if len(base) == 0 || len(base) != len(same) || len(base) != len(shifted) {
		t.Fatalf("%d, %d, %d sentences", len(base), len(same), len(shifted))
	}
	for i := range base {
		if math.Abs(base[i].P-same[i].P) > 1e-12 {
			t.Errorf("sentence %d: p %v without a map, %v with the identity", i, base[i].P, same[i].P)
		}
		if want := shift.Calibration.Apply(base[i].P); math.Abs(shifted[i].P-want) > 1e-12 || shifted[i].P <= base[i].P {
			t.Errorf("sentence %d: p %v through σ(logit p + 2) is %v, want %v", i, base[i].P, shifted[i].P, want)
		}
	}
}

func TestCalibrationNeedsVersion3(t *testing.T) {
	top := *evidence.DefaultModel() // its prose model, a version 2 file
	top.Version, top.Kinds = 2, nil
	def, err := top.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	withMap := strings.Replace(string(def), `"stop": `, `"calibration": {"method": "isotonic", "x": [0.01, 0.5], "y": [0.1, 0.9]}, "stop": `, 1)
	if !strings.Contains(withMap, "calibration") {
		t.Fatal("no stop field to anchor the map")
	}
	if _, err := evidence.ParseModel([]byte(withMap)); err == nil || !strings.Contains(err.Error(), "version 2") {
		t.Fatalf("a version 2 file with a map: %v", err)
	}
	v3 := strings.Replace(withMap, `"version": 2`, `"version": 3`, 1)
	m, err := evidence.ParseModel([]byte(v3))
	if err != nil {
		t.Fatal(err)
	}
	again, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := evidence.ParseModel(again)
	if err != nil || !reflect.DeepEqual(back.Calibration, m.Calibration) {
		t.Fatalf("round trip: %v", err)
	}
	bad := strings.Replace(v3, `"y": [0.1, 0.9]`, `"y": [0.9, 0.1]`, 1)
	if _, err := evidence.ParseModel([]byte(bad)); err == nil {
		t.Fatal("a falling map accepted")
	}
}

// FuzzCalibration: any map either fails Validate or maps [0, 1] into
// [0, 1], finite and never falling.
func FuzzCalibration(f *testing.F) {
	for _, s := range []string{
		`{"method":"isotonic","x":[0.2,0.4],"y":[0.3,1]}`, `{"method":"platt","a":2,"b":-1}`, `{"method":"isotonic","x":[0.5],"y":[0.5]}`,
		`{"method":"platt","a":0}`, `{"method":"isotonic","x":[0.4,0.2],"y":[0.3,1]}`, `{}`, `[`,
		`{"method":"isotonic","x":[1e-300,5e-324,1],"y":[0,0,1]}`, `{"method":"platt","a":100,"b":100}`,
		`{"method":"platt","a":1,"kinds":{"turns":{"method":"isotonic","x":[0.1,0.3],"y":[0.2,0.25]},"table":{"method":"platt","a":0.5}}}`,
		`{"method":"platt","a":1,"kinds":{"turns":null}}`, `{"method":"platt","a":1,"kinds":{"turns":{"method":"platt","a":1,"kinds":{}}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var c evidence.Calibration
		if json.Unmarshal(b, &c) != nil || c.Validate() != nil {
			return
		}
		for _, kind := range []string{"", evidence.KindTurns, evidence.KindTable, evidence.KindProse} {
			prev := -1.0
			for i := 0; i <= 1000; i++ {
				p := c.ApplyKind(float64(i)/1000, kind)
				if math.IsNaN(p) || p < 0 || p > 1 || p < prev {
					t.Fatalf("%s: kind %q: Apply(%v) = %v after %v", b, kind, float64(i)/1000, p, prev)
				}
				prev = p
			}
		}
		for _, x := range c.X {
			if p := c.Apply(x); math.IsNaN(p) || p < 0 || p > 1 {
				t.Fatalf("%s: Apply(%v) = %v", b, x, p)
			}
		}
	})
}

func TestTextKind(t *testing.T) {
	for text, want := range map[string]string{
		"Ross Geller: She 's not here yet .\nMonica Geller: I 'm sure everything 's fine .\nRoss Geller: I do n't know .\n#NOTE#: ( Joey makes a sound )": evidence.KindTurns,
		"[10:02] Ann: hi\n[10:03] Bob: hello\n[10:04] Ann: the report is late":                                                                            evidence.KindTurns,
		"|  | 2019 | 2018 |\n|---|---|---|\n| Sales | 1,452.4 | 1,146.2 |\n\nSales by contract type: fixed-price.":                                        evidence.KindTable,
		"Scott Derrickson\nScott Derrickson (born July 16, 1966) is an American director. Note: he lives in Los Angeles.":                                 evidence.KindProse,
		// two speakers' lines among many of prose are not a conversation
		"A: one\nB: two\nC: three\nplain line\nplain line\nplain line": evidence.KindProse,
		"": evidence.KindProse,
	} {
		if got := evidence.TextKind(text); got != want {
			t.Errorf("%.40q: %s, want %s", text, got, want)
		}
	}
	// a map by kind reads its kind's map, else the global one
	c := &evidence.Calibration{Method: evidence.CalibrationPlatt, A: 1, Kinds: map[string]*evidence.Calibration{
		evidence.KindTurns: {Method: evidence.CalibrationPlatt, A: 1, B: 1},
	}}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if got := c.ApplyKind(0.5, evidence.KindProse); !near(got, 0.5) {
		t.Errorf("prose: %v", got)
	}
	if got := c.ApplyKind(0.5, evidence.KindTurns); !near(got, 1/(1+math.Exp(-1))) {
		t.Errorf("turns: %v", got)
	}
	c.Kinds["verse"] = c.Kinds[evidence.KindTurns]
	if err := c.Validate(); err == nil {
		t.Error("an unknown kind accepted")
	}
	delete(c.Kinds, "verse")
	c.Kinds[evidence.KindTable] = &evidence.Calibration{Method: evidence.CalibrationPlatt, A: 1, Kinds: map[string]*evidence.Calibration{}}
	c.Kinds[evidence.KindTable].Kinds[evidence.KindProse] = c.Kinds[evidence.KindTurns]
	if err := c.Validate(); err == nil {
		t.Error("a nested map accepted")
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
