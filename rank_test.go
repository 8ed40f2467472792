package ctxsel_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/ctxsel/ctxsel"
)

// Ranking is a stable sort by score descending (ties in input order), and
// Descending the scores in that order; both leave their input alone.
func TestRankingAndDescending(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 200 {
		n := r.IntN(600)
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(r.IntN(1 + trial%20))
		}
		in := slices.Clone(s)
		want := make([]int, n)
		for i := range want {
			want[i] = i
		}
		slices.SortStableFunc(want, func(a, b int) int {
			switch {
			case s[a] > s[b]:
				return -1
			case s[a] < s[b]:
				return 1
			}
			return 0
		})
		got := ctxsel.Ranking(s)
		if !slices.Equal(got, want) || got == nil {
			t.Fatalf("trial %d: Ranking = %v, want %v", trial, got, want)
		}
		d := ctxsel.Descending(s)
		for i, idx := range want {
			if d[i] != s[idx] {
				t.Fatalf("trial %d: Descending = %v", trial, d)
			}
		}
		if !slices.Equal(s, in) {
			t.Fatal("input modified")
		}
	}
}
