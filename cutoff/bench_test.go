package cutoff

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// similarityCurve mimics cosine scores of a long context: a handful of
// relevant passages above a noisy bulk.
func similarityCurve(n int) []float64 {
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

// The reference rows are the plain sort-then-scan implementations; the ratio
// between the rows of one run is the figure to report.
func BenchmarkAdaptiveK(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		s := similarityCurve(n)
		b.Run(fmt.Sprintf("n=%d/fast", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := AdaptiveK(s, DefaultAdaptiveK); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("n=%d/sort-then-scan", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := AdaptiveKReference(s, DefaultAdaptiveK); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkKnee(b *testing.B) {
	for _, n := range []int{1000, 100_000} {
		s := similarityCurve(n)
		b.Run(fmt.Sprintf("n=%d/fast", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Knee(s, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("n=%d/sort-then-scan", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := KneeReference(s, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
