package ldar

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ctxsel/ctxsel"
)

func benchCurve(b *testing.B, n int) *ctxsel.Curve {
	rng := rand.New(rand.NewPCG(1, uint64(n)))
	cands := make([]ctxsel.Candidate, n)
	for i := range cands {
		cands[i] = ctxsel.Candidate{ID: fmt.Sprint(i), Score: rng.NormFloat64(), Tokens: 50 + rng.IntN(200)}
	}
	for i := range 3 {
		cands[i].Score += 4
	}
	c, err := ctxsel.NewCurve(cands)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkBandCut is the shipped policy's inference as a strategy on a
// curve of N = 1,000 (top-65 selection, curve statistics, features, one
// forward pass), on one goroutine. Target: ≤ 2 ms per query.
func BenchmarkBandCut(b *testing.B) {
	p, err := Default()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{20, 1000, 10000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			st := p.Strategy()
			c := benchCurve(b, n)
			scores := c.Scores()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				// a fresh curve each time, so the top-k cache does not help
				c, _ := ctxsel.NewScoreCurve(scores)
				if _, err := st.Cut(c); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTrainStep is one policy-gradient step (forward, 8 sampled bands
// per question, backward, Adam) on a batch of 32 questions with N = 1,000
// passages, one worker: the shipped configuration against the paper's
// network size (d = 256, 2 layers, 4 heads, FFN 256) on the same 64-rank
// window, and the paper's network on whole curves of N = 256 (the paper's
// 128k setting; whole curves of N = 1,000 are ≈ 10× slower again).
func BenchmarkTrainStep(b *testing.B) {
	paperW64 := PaperConfig
	paperW64.Window = 64
	for _, c := range []struct {
		name string
		cfg  Config
		n, B int
	}{
		{"default", DefaultConfig, 1000, 32},
		{"paper-size-window64", paperW64, 1000, 32},
		{"paper-size-whole-curve-N256", PaperConfig, 256, 32},
	} {
		b.Run(c.name, func(b *testing.B) {
			qs := synthetic(c.B, 1)
			rng := rand.New(rand.NewPCG(2, 3))
			for i := range qs { // stretch to N passages
				for len(qs[i].Scores) < c.n {
					qs[i].Scores = append(qs[i].Scores, 0.3+0.05*rng.NormFloat64())
					qs[i].Tokens = append(qs[i].Tokens, 100)
					qs[i].Gold = append(qs[i].Gold, false)
				}
			}
			opt := TrainOptions{Config: c.cfg, Epochs: 1, Batch: c.B, Samples: 8, Seed: 1, Reward: RecallPrice{Lambda: 0.3}}
			b.ResetTimer()
			for range b.N {
				if _, _, err := Train(context.Background(), qs, nil, opt); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/step")
		})
	}
}
