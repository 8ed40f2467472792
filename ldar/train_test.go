package ldar

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"
)

var testConfig = Config{Window: 16, Freqs: 4, FreqSigma: 0.05, Dim: 16, Heads: 2, Layers: 1, FFN: 16, Hidden: 16, Head: "exp", Pool: "attention"}

// synthetic makes n questions of 30 passages of 100 tokens: 1–4 gold
// passages scoring high, a clear gap, then noise. The best band holds the
// gold exactly, so the best policy reads the gap; any fixed k loses.
func synthetic(n int, seed uint64) []Question {
	rng := rand.New(rand.NewPCG(seed, 99))
	qs := make([]Question, n)
	for i := range qs {
		const N = 30
		g := 1 + rng.IntN(4)
		q := Question{ID: fmt.Sprint("q", i), Scores: make([]float64, N), Tokens: make([]int, N), Gold: make([]bool, N)}
		for j := range N {
			q.Tokens[j] = 100
			if j < g {
				q.Gold[j] = true
				q.Scores[j] = 0.8 + 0.03*rng.NormFloat64()
			} else {
				q.Scores[j] = 0.3 + 0.05*rng.NormFloat64()
			}
		}
		rng.Shuffle(N, func(a, b int) {
			q.Scores[a], q.Scores[b] = q.Scores[b], q.Scores[a]
			q.Gold[a], q.Gold[b] = q.Gold[b], q.Gold[a]
		})
		qs[i] = q
	}
	return qs
}

// TestTrainImproves runs a short training (seconds) on synthetic curves
// whose gold sits before a clear gap and checks that the policy learns to
// cut at the gap: its validation reward beats the initial policy's and the
// best fixed k's.
func TestTrainImproves(t *testing.T) {
	train, val := synthetic(256, 1), synthetic(64, 2)
	rw := RecallPrice{Lambda: 0.3}
	opt := TrainOptions{Config: testConfig, Epochs: 20, Batch: 32, Samples: 8, Seed: 1, LR: 1e-2, Normalize: true, Reward: rw}
	init, _ := NewModel(testConfig, opt.Seed)
	va, _ := prepare(val, testConfig)
	r0, err := validate(context.Background(), init, va, rw)
	if err != nil {
		t.Fatal(err)
	}
	p, hist, err := Train(context.Background(), train, val, opt)
	if err != nil {
		t.Fatal(err)
	}
	r1, _ := validate(context.Background(), p.model, va, rw)
	bestFixed := math.Inf(-1)
	for k := 1; k <= 16; k++ {
		s := 0.0
		for _, it := range va {
			s, _ = s+func() float64 { r, _ := rw.Reward(context.Background(), it.q, it.band(1-float64(k-1)/15, 1)); return r }(), 0
		}
		bestFixed = max(bestFixed, s/float64(len(va)))
	}
	t.Logf("val reward: init %.3f, trained %.3f (recall %.3f, k %.2f), best fixed k %.3f; epochs %d", r0[0], r1[0], r1[1], r1[3], bestFixed, len(hist))
	if len(hist) != opt.Epochs {
		t.Errorf("history has %d epochs", len(hist))
	}
	if r1[0] < r0[0]+0.05 || r1[0] <= bestFixed {
		t.Errorf("training did not learn the gap: val reward %.3f (init %.3f, best fixed k %.3f)", r1[0], r0[0], bestFixed)
	}
}

// TestResume checks that a run interrupted after some epochs and resumed
// from its checkpoint ends where an uninterrupted run ends.
func TestResume(t *testing.T) {
	qs := synthetic(64, 3)
	dir := t.TempDir()
	opt := TrainOptions{Config: testConfig, Epochs: 3, Batch: 16, Samples: 4, Seed: 7, Reward: RecallPrice{Lambda: 0.3}, Workers: 2}
	full, _, err := Train(context.Background(), qs, qs[:16], opt)
	if err != nil {
		t.Fatal(err)
	}
	o1 := opt
	o1.Epochs = 3
	o1.Checkpoint = filepath.Join(dir, "ck")
	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	o1.Log = func(EpochStats) {
		if n++; n == 2 {
			cancel() // stop after the second epoch's checkpoint
		}
	}
	if _, _, err := Train(ctx, qs, qs[:16], o1); err == nil {
		t.Fatal("cancelled run returned no error")
	}
	o1.Log, o1.Resume = nil, true
	resumed, hist, err := Train(context.Background(), qs, qs[:16], o1)
	if err != nil {
		t.Fatal(err)
	}
	if len(hist) != 3 {
		t.Fatalf("resumed history has %d epochs, want 3", len(hist))
	}
	for i, tn := range full.model.Tensors {
		for j, v := range tn.W {
			if resumed.model.Tensors[i].W[j] != v {
				t.Fatalf("%s[%d]: resumed %v, uninterrupted %v", tn.Name, j, resumed.model.Tensors[i].W[j], v)
			}
		}
	}
	// Other options refuse the checkpoint.
	o1.Seed = 8
	if _, _, err := Train(context.Background(), qs, qs[:16], o1); err == nil {
		t.Error("resume with another seed succeeded")
	}
}

func TestTrainOptionsErrors(t *testing.T) {
	qs := synthetic(4, 1)
	for _, o := range []TrainOptions{
		{},
		{Reward: RecallPrice{}, Baseline: "x"},
		{Reward: RecallPrice{}, Samples: 1},
		{Reward: RecallPrice{}, Config: Config{Dim: 3, Heads: 2}},
	} {
		if _, _, err := Train(context.Background(), qs, nil, o); err == nil {
			t.Errorf("options %+v: no error", o)
		}
	}
	bad := []Question{{ID: "x", Scores: []float64{1}, Tokens: []int{1, 2}, Gold: []bool{true}}}
	if _, _, err := Train(context.Background(), bad, nil, TrainOptions{Reward: RecallPrice{}}); err == nil {
		t.Error("malformed question: no error")
	}
	// The paper's setting: one sample, EMA baseline.
	if _, _, err := Train(context.Background(), qs, nil, TrainOptions{Reward: RecallPrice{}, Samples: 1, Baseline: "ema", Epochs: 1, Config: testConfig}); err != nil {
		t.Error(err)
	}
}
