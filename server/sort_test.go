package server

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestSortDescending(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	special := []float64{0, 1, -1, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 0.5, 0.5, -2.5e-300}
	for trial := range 200 {
		x := make([]float64, r.IntN(300))
		for i := range x {
			switch r.IntN(3) {
			case 0:
				x[i] = special[r.IntN(len(special))]
			case 1:
				x[i] = r.NormFloat64()
			default:
				x[i] = float64(r.IntN(5)) / 4
			}
		}
		want := slices.Clone(x)
		slices.Sort(want)
		slices.Reverse(want)
		sortDescending(x)
		if !slices.Equal(x, want) {
			t.Fatalf("trial %d: got %v, want %v", trial, x, want)
		}
	}
}

// BenchmarkSortScores: the 1,000 scores of a /v1/select curve sorted for the
// explanation, against the float sort it replaced (run in the same process).
func BenchmarkSortScores(b *testing.B) {
	scores := make([]float64, 1000)
	for i, c := range benchCandidates(len(scores)) {
		scores[i] = c.Score
	}
	buf := make([]float64, len(scores))
	b.Run("float-sort", func(b *testing.B) {
		for b.Loop() {
			copy(buf, scores)
			slices.Sort(buf)
			slices.Reverse(buf)
		}
	})
	b.Run("key-sort", func(b *testing.B) {
		for b.Loop() {
			copy(buf, scores)
			sortDescending(buf)
		}
	})
}
