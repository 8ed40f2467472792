package wire

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
		SortDescending(x)
		if !slices.Equal(x, want) {
			t.Fatalf("trial %d: got %v, want %v", trial, x, want)
		}
	}
}

// BenchmarkSortScores: the 1,000 scores of a /v1/select curve sorted for the
// explanation, against the float sort it replaced (run in the same process).
func BenchmarkSortScores(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 11))
	scores := make([]float64, 1000)
	for i := range scores {
		// A retriever's curve: a few strong passages, a slowly decaying
		// noisy tail, in no order.
		scores[i] = math.Round((0.35+0.3*math.Exp(-float64(i)/40)+0.02*rng.NormFloat64())*1e6) / 1e6
	}
	rng.Shuffle(len(scores), func(i, j int) { scores[i], scores[j] = scores[j], scores[i] })
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
			SortDescending(buf)
		}
	})
}

func TestSampleRanks(t *testing.T) {
	got := sampleRanks(1000, 20, []int{0, 999, 6, 7, 500, 501, -1, 1000})
	if len(got) > 20 || !slices.IsSorted(got) || got[0] != 0 || got[len(got)-1] != 999 {
		t.Fatalf("%v", got)
	}
	for _, k := range []int{6, 7, 500, 501} {
		if !slices.Contains(got, k) {
			t.Fatalf("%d missing from %v", k, got)
		}
	}
}
