package ctxsel_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/ctxsel/ctxsel"
	_ "github.com/ctxsel/ctxsel/cutoff"
)

func similarityScores(n int) []float64 {
	r := rand.New(rand.NewPCG(7, uint64(n)))
	s := make([]float64, n)
	for i := range s {
		s[i] = 0.15 + 0.06*r.NormFloat64()
	}
	for i := 0; i < 5 && i < n; i++ {
		s[r.IntN(n)] = 0.55 + 0.1*r.Float64()
	}
	return s
}

// BenchmarkSelect times a whole selection on a validated curve: the
// strategy, resolving the selected ranks to passages, and the explanation.
// Building the curve (which validates ids) is excluded, and the curve's
// cached ranking is dropped every call.
func BenchmarkSelect(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		c, err := ctxsel.NewScoreCurve(similarityScores(n))
		if err != nil {
			b.Fatal(err)
		}
		for _, spec := range []string{"adaptivek", "knee", "topk:k=10"} {
			st, caps, err := ctxsel.Parse(spec)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("n=%d/%s", n, spec), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					ctxsel.ForgetRanking(c)
					if _, err := ctxsel.Select(c, st, caps, ctxsel.RankOrder); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
