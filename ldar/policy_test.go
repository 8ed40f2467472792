package ldar

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel"
)

func TestBandRanks(t *testing.T) {
	cases := []struct {
		n          int
		qL, qU     float64
		start, end int
	}{
		{0, 0, 1, 0, 0},
		{1, 0, 0, 0, 1}, {1, 0, 1, 0, 1}, {1, 1, 1, 0, 1},
		{2, 0, 1, 0, 2}, {2, 0, 0, 1, 2}, {2, 1, 1, 0, 1}, {2, 0.5, 1, 0, 2}, // 0.5 rounds to even: 0, so low = 1
		{2, 0.51, 1, 0, 1}, {2, 0.49, 0.49, 1, 2},
		{11, 0, 1, 0, 11}, {11, 0.9, 1, 0, 2}, {11, 0.95, 1, 0, 1}, {11, 0.5, 0.7, 3, 6},
		{11, 0.7, 0.5, 3, 4}, // qU < qL is raised to qL
		{11, -1, 2, 0, 11}, {11, math.NaN(), math.NaN(), 10, 11},
		{1000, 1, 1, 0, 1}, {1000, 0.99, 1, 0, 11},
	}
	for _, c := range cases {
		s, e := BandRanks(c.n, c.qL, c.qU)
		if s != c.start || e != c.end {
			t.Errorf("BandRanks(%d, %v, %v) = [%d, %d), want [%d, %d)", c.n, c.qL, c.qU, s, e, c.start, c.end)
		}
		if c.n > 0 && (s < 0 || e > c.n || e <= s) {
			t.Errorf("BandRanks(%d, %v, %v) = [%d, %d): empty or out of range", c.n, c.qL, c.qU, s, e)
		}
	}
}

func tinyPolicy(t testing.TB) *Policy {
	t.Helper()
	m, err := NewModel(Config{Window: 8, Freqs: 2, FreqSigma: 0.1, Dim: 8, Heads: 2, Layers: 1, FFN: 8, Hidden: 8, Head: "exp", Pool: "attention"}, 3)
	if err != nil {
		t.Fatal(err)
	}
	return NewPolicy(m, map[string]string{"note": "test"})
}

func TestSafetensorsRoundTrip(t *testing.T) {
	p := tinyPolicy(t)
	path := filepath.Join(t.TempDir(), "p.safetensors")
	if err := p.Save(path); err != nil {
		t.Fatal(err)
	}
	q, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if q.Config() != p.Config() || q.Meta["note"] != "test" || q.Meta["format"] != FormatName {
		t.Fatalf("round trip lost config or metadata: %+v %v", q.Config(), q.Meta)
	}
	for i, tn := range p.model.Tensors {
		for j, v := range tn.W {
			if float32(v) != float32(q.model.Tensors[i].W[j]) {
				t.Fatalf("%s[%d] = %v, want %v", tn.Name, j, q.model.Tensors[i].W[j], v)
			}
		}
	}
	scores := []float64{0.9, 0.1, 0.5, 0.45, 0.2, 0.8}
	if a, b := p.Predict(scores, nil), q.Predict(scores, nil); a.Start != b.Start || a.End != b.End {
		t.Errorf("predictions differ after round trip: %+v vs %+v", a, b)
	}
	// The header is valid JSON padded to 8 bytes, as the format asks.
	b, _ := os.ReadFile(path)
	if hl := binary.LittleEndian.Uint64(b); hl%8 != 0 || !bytes.HasPrefix(b[8:], []byte("{")) {
		t.Errorf("header length %d or start %q", hl, b[8:9])
	}
}

func TestParseCorrupt(t *testing.T) {
	var good bytes.Buffer
	if _, err := tinyPolicy(t).WriteTo(&good); err != nil {
		t.Fatal(err)
	}
	g := good.Bytes()
	hl := binary.LittleEndian.Uint64(g)
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(g)) }
	cases := map[string][]byte{
		"empty":             nil,
		"short":             g[:5],
		"header too long":   mutate(func(b []byte) []byte { binary.LittleEndian.PutUint64(b, uint64(len(b))); return b }),
		"truncated data":    g[:len(g)-4],
		"extra data":        append(bytes.Clone(g), 0, 0, 0, 0),
		"not json":          mutate(func(b []byte) []byte { b[8] = 'x'; return b }),
		"wrong format":      mutate(func(b []byte) []byte { return bytes.Replace(b, []byte(FormatName), []byte("ctxsel-ldar-polic_"), 1) }),
		"unsupported dtype": mutate(func(b []byte) []byte { return bytes.Replace(b, []byte(`"F32"`), []byte(`"I32"`), 1) }),
		"NaN weight": mutate(func(b []byte) []byte {
			binary.LittleEndian.PutUint32(b[8+hl:], math.Float32bits(float32(math.NaN())))
			return b
		}),
		"shape mismatch": mutate(func(b []byte) []byte {
			return bytes.Replace(b, []byte(`\"window\":8`), []byte(`\"window\":9`), 1) // no tensor depends on it
		}),
	}
	for name, b := range cases {
		_, err := Parse(b)
		if name == "shape mismatch" { // the window is no tensor shape: still valid
			if err != nil {
				t.Errorf("%s: %v", name, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err = %v, want ErrFormat", name, err)
		}
	}
	// a tensor missing: rename one
	b := mutate(func(b []byte) []byte { return bytes.Replace(b, []byte(`"head.b"`), []byte(`"head.x"`), 1) })
	if _, err := Parse(b); err == nil || !strings.Contains(err.Error(), "head.b") {
		t.Errorf("missing tensor: err = %v", err)
	}
	b = mutate(func(b []byte) []byte { return bytes.Replace(b, []byte(`\"dim\":8`), []byte(`\"dim\":4`), 1) })
	if bytes.Equal(b, g) {
		t.Fatal("the config edit did not apply")
	}
	if _, err := Parse(b); err == nil || !errors.Is(err, ErrFormat) {
		t.Errorf("config/shape mismatch: err = %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

func FuzzParse(f *testing.F) {
	var good bytes.Buffer
	tinyPolicy(f).WriteTo(&good)
	f.Add(good.Bytes())
	f.Add([]byte{})
	f.Add([]byte("\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":1}        "))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := Parse(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("error not wrapping ErrFormat: %v", err)
			}
			return
		}
		pr := p.Predict([]float64{3, 1, 2}, []int{10, 20, 30})
		if pr.Start < 0 || pr.End > 3 || pr.End <= pr.Start {
			t.Fatalf("bad band %+v", pr)
		}
	})
}

func TestStrategyRegistered(t *testing.T) {
	if _, ok := ctxsel.Lookup("band"); !ok {
		t.Fatal("band not registered")
	}
	p := tinyPolicy(t)
	res, err := ctxsel.Resolver{Deps: ctxsel.DepsOf(map[string]any{DepPolicy: p})}.Resolve("band:max_k=3")
	if err != nil {
		t.Fatal(err)
	}
	st, caps := res.Strategy, res.Caps
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 3, 7, 8, 9, 100, 1000} {
		cands := make([]ctxsel.Candidate, n)
		for i := range cands {
			cands[i] = ctxsel.Candidate{ID: string(rune('a'+i%26)) + strings.Repeat("x", i/26), Score: rng.NormFloat64(), Tokens: rng.IntN(200)}
		}
		c, err := ctxsel.NewCurve(cands)
		if err != nil {
			t.Fatal(err)
		}
		cut, err := st.Cut(c)
		if err != nil {
			t.Fatal(err)
		}
		if cut.Start < 0 || cut.End > min(n, 8) || cut.End <= cut.Start || cut.Decision.Kind != "band" || cut.Reason == "" {
			t.Errorf("n=%d: cut %+v", n, cut)
		}
		sel, err := ctxsel.Select(c, st, caps, ctxsel.RankOrder)
		if err != nil || sel.K < 1 || sel.K > 3 {
			t.Errorf("n=%d: select k=%d err=%v", n, sel.K, err)
		}
	}
}

// TestPolicyDep: a band built with the caller's policy runs that policy,
// one built without it the embedded default; a dependency that fails or
// has the wrong type fails the build (and the band reads nothing else).
func TestPolicyDep(t *testing.T) {
	p := tinyPolicy(t)
	def, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	cands := make([]ctxsel.Candidate, 40)
	for i := range cands {
		cands[i] = ctxsel.Candidate{ID: fmt.Sprint(i), Score: 1 / float64(i+1), Tokens: 10 + i}
	}
	c, err := ctxsel.NewCurve(cands)
	if err != nil {
		t.Fatal(err)
	}
	cutOf := func(s ctxsel.Strategy) ctxsel.Cut {
		t.Helper()
		cut, err := s.Cut(c)
		if err != nil {
			t.Fatal(err)
		}
		return cut
	}
	want, wantDef := cutOf(p.Strategy()), cutOf(def.Strategy())
	if want.Reason == wantDef.Reason {
		t.Fatalf("the tiny and the default policy cut alike (%s): the test cannot tell them apart", want.Reason)
	}
	withP := ctxsel.DepsOf(map[string]any{DepPolicy: p})
	st, _, err := ctxsel.NewWith(ctxsel.Spec{Name: "band"}, withP)
	if err != nil {
		t.Fatal(err)
	}
	if got := cutOf(st); got.Reason != want.Reason {
		t.Errorf("with the policy: %s, want %s", got.Reason, want.Reason)
	}
	for name, deps := range map[string]ctxsel.Deps{"nil": nil, "without it": ctxsel.DepsOf(nil)} {
		st, _, err := ctxsel.NewWith(ctxsel.Spec{Name: "band"}, deps)
		if err != nil {
			t.Fatal(err)
		}
		if got := cutOf(st); got.Reason != wantDef.Reason {
			t.Errorf("deps %s: %s, want the default's %s", name, got.Reason, wantDef.Reason)
		}
	}
	failing := func(string) (any, error) { return nil, errors.New("no such file") }
	if _, err := (ctxsel.Resolver{Deps: failing}).Resolve("band"); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("a failing dependency: err = %v", err)
	}
	if _, err := (ctxsel.Resolver{Deps: ctxsel.DepsOf(map[string]any{DepPolicy: "p.safetensors"})}).Resolve("band"); err == nil {
		t.Error("a policy of the wrong type was accepted")
	}
}

func TestDefaultPolicy(t *testing.T) {
	p, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	if p.Meta["scorer"] == "" {
		t.Errorf("default policy has no scorer in its metadata: %v", p.Meta)
	}
	if len(defaultPolicyFile) > 1<<20 {
		t.Errorf("default policy is %d bytes, want < 1 MiB", len(defaultPolicyFile))
	}
	st, _, err := ctxsel.Parse("band")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := ctxsel.NewScoreCurve([]float64{0.9, 0.85, 0.3, 0.29, 0.28, 0.27})
	if cut, err := st.Cut(c); err != nil || cut.End <= cut.Start {
		t.Errorf("cut %+v err %v", cut, err)
	}
}

// labelReward is a Reward written against the interface only (as an
// LLM-judged reward would be): 1 when every gold passage is in the band.
type allGold struct{ calls int }

func TestRewardInterface(t *testing.T) {
	q := Question{ID: "q", Scores: []float64{3, 2, 1, 0}, Tokens: []int{100, 200, 300, 400}, Gold: []bool{true, false, true, false}}
	b := Band{Start: 0, End: 3, Indices: []int{0, 1, 2}, Tokens: 600, Total: 1000}
	ctx := context.Background()
	if r, _ := (RecallPrice{Lambda: 0.5}).Reward(ctx, q, b); math.Abs(r-(1-0.3)) > 1e-12 {
		t.Errorf("RecallPrice = %v", r)
	}
	b2 := Band{Start: 0, End: 1, Indices: []int{0}, Tokens: 100}
	if r, _ := (RecallPrice{Lambda: 1}).Reward(ctx, q, b2); math.Abs(r-(0.5-0.1)) > 1e-12 {
		t.Errorf("RecallPrice = %v", r)
	}
	if r, _ := (Picker{Gamma: 1, Margin: 1}).Reward(ctx, q, b); math.Abs(r-(1-1.0/3)) > 1e-12 {
		t.Errorf("Picker = %v", r)
	}
	if r, _ := (Picker{Gamma: 1, Margin: 0}).Reward(ctx, q, b); r != 0 {
		t.Errorf("Picker over the margin = %v", r)
	}
	if _, err := (RecallPrice{}).Reward(ctx, Question{ID: "x", Gold: []bool{false}}, b2); err == nil {
		t.Error("no gold: want an error")
	}
	// A judge-style reward through RewardFunc trains like any other, and
	// its errors stop training.
	calls := 0
	judge := RewardFunc(func(_ context.Context, q Question, b Band) (float64, error) {
		calls++
		for i, g := range q.Gold {
			if g && !contains(b.Indices, i) {
				return 0, nil
			}
		}
		return 1, nil
	})
	qs := synthetic(8, 1)
	opt := TrainOptions{Config: testConfig, Epochs: 1, Batch: 4, Samples: 2, Seed: 1, Reward: judge}
	if _, _, err := Train(ctx, qs, nil, opt); err != nil {
		t.Fatal(err)
	}
	if calls != 8*2 {
		t.Errorf("reward called %d times, want 16", calls)
	}
	opt.Reward = RewardFunc(func(context.Context, Question, Band) (float64, error) { return 0, errors.New("judge down") })
	if _, _, err := Train(ctx, qs, nil, opt); err == nil || !strings.Contains(err.Error(), "judge down") {
		t.Errorf("err = %v", err)
	}
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestBandExtremeScores: scores near ±1.7e308 (finite) standardise like the
// same curve at an ordinary scale: the band is the same, its quantiles
// finite, where they were NaN (the band then kept only the last passage).
func TestBandExtremeScores(t *testing.T) {
	base := []float64{1.9, 1.7, 1.0, 0.4, 0.3, 0.2, 0.1, -0.5, -1.2, -1.9}
	cut := func(scale float64) ctxsel.Cut {
		cands := make([]ctxsel.Candidate, len(base))
		for i, s := range base {
			cands[i] = ctxsel.Candidate{ID: fmt.Sprint(i), Score: s * scale, Tokens: 50}
		}
		c, err := ctxsel.NewCurve(cands)
		if err != nil {
			t.Fatal(err)
		}
		st, _, err := ctxsel.Parse("band")
		if err != nil {
			t.Fatal(err)
		}
		cut, err := st.Cut(c)
		if err != nil {
			t.Fatal(err)
		}
		return cut
	}
	want := cut(1)
	for _, scale := range []float64{math.Ldexp(1, 1023), -math.Ldexp(1, 1023), math.MaxFloat64 / 1.9, 1e-300} {
		got := cut(scale)
		if strings.Contains(got.Reason, "NaN") || math.IsNaN(got.Decision.Value) {
			t.Fatalf("scale %g: %s", scale, got.Reason)
		}
		if scale > 1 && (got.Start != want.Start || got.End != want.End) {
			t.Errorf("scale %g: band [%d, %d), at scale 1 [%d, %d)\n%s\n%s", scale, got.Start, got.End, want.Start, want.End, got.Reason, want.Reason)
		}
	}
	if mean, std := curveStats([]float64{math.MaxFloat64, -math.MaxFloat64, math.MaxFloat64}); math.IsInf(mean, 0) || math.IsInf(std, 0) || std <= 0 {
		t.Fatalf("curveStats at the float64 limit: mean %g, σ %g", mean, std)
	}
	for _, s := range [][]float64{{0.9, 0.1, 0.5}, {31.5, 2, 17, 0}} { // unchanged where nothing overflows
		mean, std := curveStats(s)
		var m, v float64
		for _, x := range s {
			m += x
		}
		m /= float64(len(s))
		for _, x := range s {
			v += (x - m) * (x - m)
		}
		if mean != m || std != math.Sqrt(v/float64(len(s))) {
			t.Errorf("curveStats(%v) = %v, %v; want %v, %v", s, mean, std, m, math.Sqrt(v/float64(len(s))))
		}
	}
}
