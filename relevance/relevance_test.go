package relevance

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ctxsel/ctxsel"
)

// synth makes questions whose gold passages stand out in channel 1 (the
// "lexical" curve) only: the fused score is channel 0 plus noise, so the
// fused ranking barely knows where the gold is, and a model that reads the
// channels must find it there.
func synth(rng *rand.Rand, nq, n int) []Question {
	qs := make([]Question, nq)
	for q := range qs {
		s := make([]float64, n)
		d := make([]float64, n)
		l := make([]float64, n)
		tok := make([]int, n)
		gold := make([]bool, n)
		for i := range n {
			gold[i] = i < 3
			d[i] = rng.NormFloat64()
			l[i] = rng.NormFloat64()
			if gold[i] {
				l[i] += 3
			}
			s[i] = d[i] + 0.3*rng.NormFloat64() + 0.2*l[i]
			tok[i] = 50 + rng.IntN(200)
		}
		qs[q] = Question{Scores: s, Tokens: tok, Gold: gold, Channels: [][]float64{d, l}}
	}
	return qs
}

// auc is the probability that a random gold passage outranks a random
// other one by v.
func auc(v []float64, gold []bool) float64 {
	win, pairs := 0.0, 0.0
	for i := range v {
		for j := range v {
			if gold[i] && !gold[j] {
				pairs++
				switch {
				case v[i] > v[j]:
					win++
				case v[i] == v[j]:
					win += 0.5
				}
			}
		}
	}
	return win / pairs
}

func TestFitRecoversPlantedSignal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m, err := Fit(synth(rng, 200, 60), FitOptions{Channels: 2, Window: 60})
	if err != nil {
		t.Fatal(err)
	}
	// The planted signal is channel 1's z-score: its weight must be the
	// largest positive one.
	idx := map[string]int{}
	for j, f := range m.Features {
		idx[f] = j
	}
	w := m.Weights[idx["ch1_z"]]
	if w <= 0 {
		t.Fatalf("weight of ch1_z = %v, want > 0 (weights %v)", w, m.Weights)
	}
	for j, v := range m.Weights {
		if j != idx["ch1_z"] && v > w {
			t.Errorf("feature %s weighs %v, more than the planted ch1_z (%v)", m.Features[j], v, w)
		}
	}
	// On fresh questions p ranks the gold far better than the fused score.
	var pAUC, sAUC float64
	test := synth(rng, 50, 60)
	for _, q := range test {
		p, order := m.Probabilities(q.Scores, q.Tokens, q.Channels)
		full := make([]float64, len(q.Scores))
		for r, i := range order {
			full[i] = p[r]
		}
		pAUC += auc(full, q.Gold) / float64(len(test))
		sAUC += auc(q.Scores, q.Gold) / float64(len(test))
	}
	if pAUC < 0.95 || pAUC < sAUC+0.1 {
		t.Errorf("AUC of p(gold) %.3f, of the fused score %.3f: want p ≥ 0.95 and ≥ 0.1 better", pAUC, sAUC)
	}
	// The expected number of gold passages is close to the planted 3.
	p, _ := m.Probabilities(test[0].Scores, test[0].Tokens, test[0].Channels)
	if s := sum(p); math.Abs(s-3) > 1 {
		t.Errorf("Σp = %.2f, want about 3", s)
	}
}

func TestFitWithoutChannelsIgnoresThem(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	qs := synth(rng, 20, 30)
	for i := range qs {
		qs[i].Channels = nil
	}
	m, err := Fit(qs, FitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Weights) != len(curveFeatures) || m.Channels != 0 {
		t.Errorf("got %d weights, %d channels; want %d, 0", len(m.Weights), m.Channels, len(curveFeatures))
	}
	if _, err := Fit(qs, FitOptions{Channels: 2}); err == nil {
		t.Error("Fit with --channels 2 on questions without channels: want an error")
	}
	if _, err := Fit(nil, FitOptions{}); err == nil {
		t.Error("Fit on no questions: want an error")
	}
}

func curveOf(t *testing.T, q Question) *ctxsel.Curve {
	t.Helper()
	cands := make([]ctxsel.Candidate, len(q.Scores))
	for i := range cands {
		cands[i] = ctxsel.Candidate{ID: string(rune('A'+i%26)) + string(rune('a'+i/26)), Score: q.Scores[i], Tokens: q.Tokens[i]}
		for _, ch := range q.Channels {
			cands[i].Channels = append(cands[i].Channels, ch[i])
		}
	}
	c, err := ctxsel.NewCurve(cands)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestStrategyPricesTokens(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m, err := Fit(synth(rng, 100, 40), FitOptions{Channels: 2, Window: 40})
	if err != nil {
		t.Fatal(err)
	}
	c := curveOf(t, synth(rng, 1, 40)[0])
	k := func(lambda float64) int {
		sel, err := ctxsel.Select(c, m.Strategy(lambda), ctxsel.Caps{}, ctxsel.RankOrder)
		if err != nil {
			t.Fatal(err)
		}
		return sel.Explanation.K
	}
	if got := k(0); got != 40 {
		t.Errorf("lambda 0: k = %d, want the whole window (40)", got)
	}
	if got := k(1000); got != 1 {
		t.Errorf("lambda 1000: k = %d, want 1", got)
	}
	prev := 41
	for _, l := range []float64{0, 0.01, 0.1, 0.5, 1, 5} {
		got := k(l)
		if got > prev {
			t.Errorf("lambda %v: k = %d, more than %d at a lower price", l, got, prev)
		}
		prev = got
	}
}

func TestStrategyNeedsChannels(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m, err := Fit(synth(rng, 10, 20), FitOptions{Channels: 2})
	if err != nil {
		t.Fatal(err)
	}
	q := synth(rng, 1, 20)[0]
	q.Channels = nil
	_, err = ctxsel.Select(curveOf(t, q), m.Strategy(0.5), ctxsel.Caps{}, ctxsel.RankOrder)
	if !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Errorf("candidates without channels: err %v, want ErrInvalidInput", err)
	}
}

func TestRegisteredStrategyNeedsModel(t *testing.T) {
	Register()
	Register() // idempotent
	SetDefault(nil)
	sp, err := ctxsel.ParseSpec("relevance:lambda=0.2")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := ctxsel.New(sp); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Errorf("no model: err %v, want ErrInvalidInput", err)
	}
	rng := rand.New(rand.NewPCG(9, 10))
	m, err := Fit(synth(rng, 10, 20), FitOptions{Channels: 2})
	if err != nil {
		t.Fatal(err)
	}
	SetDefault(m)
	defer SetDefault(nil)
	s, _, err := ctxsel.New(sp)
	if err != nil {
		t.Fatal(err)
	}
	if s.Params()["lambda"] != 0.2 {
		t.Errorf("params %v, want lambda 0.2", s.Params())
	}
}

func TestRescoreRanksByProbability(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	m, err := Fit(synth(rng, 100, 50), FitOptions{Channels: 2, Window: 10})
	if err != nil {
		t.Fatal(err)
	}
	q := synth(rng, 1, 50)[0]
	s := m.Rescore(q.Scores, q.Tokens, q.Channels)
	p, order := m.Probabilities(q.Scores, q.Tokens, q.Channels)
	for r, i := range order {
		if s[i] != 1+p[r] {
			t.Fatalf("rank %d: rescored %v, want 1 + p = %v", r, s[i], 1+p[r])
		}
	}
	in := map[int]bool{}
	for _, i := range order {
		in[i] = true
	}
	for i, v := range s {
		if !in[i] && (v > 0 || v <= -1) {
			t.Errorf("passage %d outside the window scored %v, want in (−1, 0]", i, v)
		}
	}
}

func TestParseRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	m, err := Fit(synth(rng, 10, 20), FitOptions{Channels: 2})
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	q := synth(rng, 1, 20)[0]
	p1, _ := m.Probabilities(q.Scores, q.Tokens, q.Channels)
	p2, _ := got.Probabilities(q.Scores, q.Tokens, q.Channels)
	for r := range p1 {
		if p1[r] != p2[r] {
			t.Fatalf("rank %d: %v after a round trip, %v before", r, p2[r], p1[r])
		}
	}
	for _, bad := range []string{`{`, `{"channels":2,"window":100}`, `{"channels":9,"window":1}`, `{"channels":0,"window":0}`} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%s): want an error", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	rng := rand.New(rand.NewPCG(15, 16))
	m, err := Fit(synth(rng, 5, 10), FitOptions{})
	if err != nil {
		f.Fatal(err)
	}
	b, _ := m.Marshal()
	f.Add(b)
	f.Add([]byte(`{"channels":0,"window":1,"mean":[],"sd":[],"weights":[]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			return
		}
		q := synth(rand.New(rand.NewPCG(1, 1)), 1, 5)[0]
		p, _ := m.Probabilities(q.Scores, q.Tokens, q.Channels)
		for _, v := range p {
			if math.IsNaN(v) || v < 0 || v > 1 {
				t.Fatalf("p = %v", v)
			}
		}
	})
}
