package lengthest

import (
	"math"
	"math/rand/v2"
	"slices"
)

// SampleSize is how many of n examples a fraction selects: round(frac·n),
// at least one (for n > 0), at most n.
func SampleSize(n int, frac float64) int {
	if n <= 0 {
		return 0
	}
	k := int(math.Round(frac * float64(n)))
	return min(max(k, 1), n)
}

// Sample picks SampleSize(n, frac) distinct indices of n examples uniformly
// without replacement, reproducibly for a seed, and returns them in
// increasing order.
func Sample(n int, frac float64, seed uint64) []int {
	k := SampleSize(n, frac)
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	out := r.Perm(n)[:k]
	slices.Sort(out)
	return out
}
