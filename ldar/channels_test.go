package ldar

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/ctxsel/ctxsel"
)

// The fused order is passages 2, 0, 1, 3; the channel ranks 1, 2, 3, 0.
// Agreement of the two tops: {2}∩{1} = 0, {2,0}∩{1,2} = 1, {2,0,1}∩{1,2,3}
// = 2, all = 4.
func TestChannelFeaturesHand(t *testing.T) {
	ch := []float64{0.1, 0.9, 0.5, 0.2}
	order := []int{2, 0, 1, 3}
	wantRank := []int{1, 3, 0, 2}
	wantAgree := []float64{0, 0.5, 2.0 / 3, 1}
	mean, std := curveStats(ch)
	for _, m := range []int{4, 2} { // m = 2: ranks past the window are counted
		nf := baseFeatures + featuresPerChannel
		x := make([]float64, m*nf)
		channelFeatures(x, nf, m, order, [][]float64{ch})
		for r := range m {
			z, lr, ag := x[r*nf+baseFeatures], x[r*nf+baseFeatures+1], x[r*nf+baseFeatures+2]
			if math.Abs(z-(ch[order[r]]-mean)/std) > 1e-12 || math.Abs(lr-math.Log1p(float64(wantRank[r]))/math.Log1p(4)) > 1e-12 || math.Abs(ag-wantAgree[r]) > 1e-12 {
				t.Errorf("m=%d rank %d: z %v, log rank %v, agreement %v (want rank %d, agreement %v)", m, r, z, lr, ag, wantRank[r], wantAgree[r])
			}
		}
	}
}

// channelSynthetic: the fused curve declines smoothly with the gold on top
// (1–4 of them) and no gap; only the channel says where the gold ends.
func channelSynthetic(n int, seed uint64) []Question {
	rng := rand.New(rand.NewPCG(seed, 7))
	qs := make([]Question, n)
	for i := range qs {
		const N = 30
		g := 1 + rng.IntN(4)
		q := Question{ID: fmt.Sprint("q", i), Scores: make([]float64, N), Tokens: make([]int, N), Gold: make([]bool, N), Channels: [][]float64{make([]float64, N)}}
		for j := range N {
			q.Tokens[j] = 100
			q.Scores[j] = 1 - 0.02*float64(j) + 0.001*rng.NormFloat64()
			q.Channels[0][j] = 0.3 + 0.05*rng.NormFloat64()
			if j < g {
				q.Gold[j] = true
				q.Channels[0][j] = 0.9 + 0.02*rng.NormFloat64()
			}
		}
		qs[i] = q
	}
	return qs
}

// TestTrainReadsChannels: on curves whose evidence boundary shows only in
// a component curve, a policy that reads the channel beats the best fixed
// k, and the same training without the channel does not get as far.
func TestTrainReadsChannels(t *testing.T) {
	train, val := channelSynthetic(256, 1), channelSynthetic(64, 2)
	rw := RecallPrice{Lambda: 0.3}
	reward := func(cfg Config) float64 {
		opt := TrainOptions{Config: cfg, Epochs: 15, Batch: 32, Samples: 8, Seed: 1, LR: 1e-2, Normalize: true, Reward: rw}
		p, _, err := Train(context.Background(), train, val, opt)
		if err != nil {
			t.Fatal(err)
		}
		va, _ := prepare(val, cfg)
		r, _ := validate(context.Background(), p.model, va, rw)
		return r[0]
	}
	withCfg := testConfig
	withCfg.Channels = 1
	with, without := reward(withCfg), reward(testConfig)
	va, _ := prepare(val, testConfig)
	bestFixed := math.Inf(-1)
	for k := 1; k <= 16; k++ {
		s := 0.0
		for _, it := range va {
			r, _ := rw.Reward(context.Background(), it.q, it.band(1-float64(k-1)/15, 1))
			s += r
		}
		bestFixed = max(bestFixed, s/float64(len(va)))
	}
	t.Logf("val reward: with channel %.3f, without %.3f, best fixed k %.3f", with, without, bestFixed)
	if with <= bestFixed+0.02 || with <= without+0.02 {
		t.Errorf("the channel policy did not use the channel: %.3f (without %.3f, best fixed k %.3f)", with, without, bestFixed)
	}
}

func TestBandNeedsChannels(t *testing.T) {
	cfg := testConfig
	cfg.Channels = 2
	m, err := NewModel(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	randomize(m, 2)
	s := NewPolicy(m, nil).Strategy()
	cands := make([]ctxsel.Candidate, 40)
	for i := range cands {
		cands[i] = ctxsel.Candidate{ID: fmt.Sprint(i), Score: 1 / float64(i+1), Tokens: 50}
	}
	tokens := make([]int, len(cands))
	for i := range tokens {
		tokens[i] = 50
	}
	plain, _ := ctxsel.NewCurve(cands)
	if _, err := s.Cut(plain); !errors.Is(err, ctxsel.ErrInvalidInput) {
		t.Fatalf("cut without channels: %v", err)
	}
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 1))
		for i := range cands {
			cands[i].Channels = []float64{rng.Float64(), rng.NormFloat64()}
		}
		c, err := ctxsel.NewCurve(cands)
		if err != nil {
			t.Fatal(err)
		}
		cut, err := s.Cut(c)
		if err != nil {
			t.Fatal(err)
		}
		if cut.Start < 0 || cut.End <= cut.Start || cut.End > cfg.Window {
			t.Fatalf("cut %+v", cut)
		}
		pr, err := NewPolicy(m, nil).PredictChannels(c.Scores(), tokens, [][]float64{c.Channel(0), c.Channel(1)})
		if err != nil {
			t.Fatal(err)
		}
		if pr.Start != cut.Start || pr.End != cut.End {
			t.Fatalf("band cut %d–%d, PredictChannels %d–%d", cut.Start, cut.End, pr.Start, pr.End)
		}
	}
	// the same fused curve with other channel values must not always give
	// the same prediction: the policy reads them
	var qls []float64
	for seed := range uint64(4) {
		rng := rand.New(rand.NewPCG(seed, 2))
		scores, ch0, ch1 := make([]float64, 40), make([]float64, 40), make([]float64, 40)
		for i := range scores {
			scores[i], ch0[i], ch1[i] = 1/float64(i+1), rng.Float64(), rng.NormFloat64()
		}
		pr, err := NewPolicy(m, nil).PredictChannels(scores, nil, [][]float64{ch0, ch1})
		if err != nil {
			t.Fatal(err)
		}
		qls = append(qls, pr.QL)
	}
	if qls[0] == qls[1] && qls[1] == qls[2] && qls[2] == qls[3] {
		t.Errorf("prediction ignores the channels: qL %v", qls)
	}
	if _, err := NewPolicy(m, nil).PredictChannels([]float64{1, 2}, nil, [][]float64{{1, 2}}); err == nil {
		t.Error("one channel for a two-channel policy: no error")
	}
}

// FuzzChannelBand drives a two-channel band policy with arbitrary fused
// and channel scores (huge, tied, negative): never a panic, always a
// non-empty band inside the window, the same cut twice.
func FuzzChannelBand(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, []byte{9, 9, 9, 1}, []byte{0})
	f.Add(make([]byte, 64), []byte{}, []byte{255, 0, 255})
	cfg := testConfig
	cfg.Channels = 2
	m, err := NewModel(cfg, 5)
	if err != nil {
		f.Fatal(err)
	}
	s := NewPolicy(m, nil).Strategy()
	f.Fuzz(func(t *testing.T, fused, ch0, ch1 []byte) {
		n := len(fused)
		if n == 0 || n > 3000 {
			return
		}
		val := func(b []byte, i int) float64 {
			if len(b) == 0 {
				return 0
			}
			return float64(int8(b[i%len(b)])) * math.Pow(10, float64(b[(i+1)%len(b)]%40)-20)
		}
		cands := make([]ctxsel.Candidate, n)
		for i := range cands {
			cands[i] = ctxsel.Candidate{ID: fmt.Sprint(i), Score: float64(int8(fused[i])), Tokens: int(fused[i]), Channels: []float64{val(ch0, i), val(ch1, i)}}
		}
		c, err := ctxsel.NewCurve(cands)
		if err != nil {
			t.Fatal(err)
		}
		a, err := s.Cut(c)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := s.Cut(c)
		if a.Start < 0 || a.End <= a.Start || a.End > min(n, cfg.Window) || a.Start != b.Start || a.End != b.End {
			t.Fatalf("cut %d–%d then %d–%d on %d candidates", a.Start, a.End, b.Start, b.End, n)
		}
	})
}
