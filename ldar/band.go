package ldar

import "math"

// BandRanks maps a quantile band to ranks, following the official LDAR code:
// with the n scores sorted ascending and positions numbered 1…n,
//
//	low  = round((n−1)·qL) + 1
//	high = round((n−1)·qU) + 1
//
// selects positions low…high inclusive, where round is round-half-to-even
// (Python's round and torch.round). ctxsel ranks are descending (rank 0 is
// the best score, ascending position n), so the band is ranks
// [n−high, n−low+1): qU = 1 always includes rank 0, and qL = 1 − k/(n−1)
// (about) selects the top k. qL and qU are clamped to [0, 1] and qU to at
// least qL, so the band is never empty when n ≥ 1.
func BandRanks(n int, qL, qU float64) (start, end int) {
	if n <= 0 {
		return 0, 0
	}
	qL = clamp01(qL)
	qU = max(clamp01(qU), qL)
	low := int(math.RoundToEven(float64(n-1)*qL)) + 1
	high := int(math.RoundToEven(float64(n-1)*qU)) + 1
	return n - high, n - low + 1
}

func clamp01(x float64) float64 {
	if !(x > 0) { // NaN too
		return 0
	}
	return min(x, 1)
}
