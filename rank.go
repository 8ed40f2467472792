package ctxsel

import (
	"cmp"
	"slices"
)

// before reports whether input position a ranks before b: higher score first,
// then lower input position. It is a strict total order, so partial and full
// sorts agree exactly.
func before(scores []float64, a, b int) bool {
	if scores[a] != scores[b] {
		return scores[a] > scores[b]
	}
	return a < b
}

func compareRank(scores []float64) func(a, b int) int {
	return func(a, b int) int {
		if scores[a] != scores[b] {
			return cmp.Compare(scores[b], scores[a])
		}
		return cmp.Compare(a, b)
	}
}

// topIndices returns the input indices of the m best-ranked scores in rank
// order: a selection (expected O(n)) followed by a sort of the m winners.
func topIndices(scores []float64, m int) []int {
	n := len(scores)
	if m > 0 && m <= 256 && m < n/4 {
		return topIndicesHeap(scores, m)
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	if m < n && m > 0 {
		selectTop(scores, idx, m)
	}
	top := idx[:m]
	slices.SortFunc(top, compareRank(scores))
	return slices.Clip(top)
}

// selectTop partially orders idx so that its first m entries are the m
// best-ranked ones (in no particular order): quickselect with a
// median-of-three pivot and an insertion sort for short ranges.
func selectTop(scores []float64, idx []int, m int) {
	lo, hi := 0, len(idx)-1
	for hi-lo > 16 {
		mid := lo + (hi-lo)/2
		// median of three into idx[mid]
		if before(scores, idx[mid], idx[lo]) {
			idx[mid], idx[lo] = idx[lo], idx[mid]
		}
		if before(scores, idx[hi], idx[mid]) {
			idx[hi], idx[mid] = idx[mid], idx[hi]
			if before(scores, idx[mid], idx[lo]) {
				idx[mid], idx[lo] = idx[lo], idx[mid]
			}
		}
		pivot := idx[mid]
		i, j := lo, hi
		for i <= j {
			for before(scores, idx[i], pivot) {
				i++
			}
			for before(scores, pivot, idx[j]) {
				j--
			}
			if i <= j {
				idx[i], idx[j] = idx[j], idx[i]
				i++
				j--
			}
		}
		// [lo, j] rank before-or-equal pivot, [i, hi] after-or-equal.
		switch {
		case m-1 <= j:
			hi = j
		case m-1 >= i:
			lo = i
		default:
			return
		}
	}
	slices.SortFunc(idx[lo:hi+1], compareRank(scores))
}

// topIndicesHeap keeps the m best in a bounded heap whose root is the worst
// kept: one pass in which almost every score is rejected by one comparison.
func topIndicesHeap(scores []float64, m int) []int {
	h := make([]int, 0, m)
	// worse(a, b): a ranks after b, so the root is the worst kept.
	worse := func(a, b int) bool { return before(scores, b, a) }
	siftDown := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			w := l
			if r := l + 1; r < len(h) && worse(h[r], h[l]) {
				w = r
			}
			if !worse(h[w], h[i]) {
				return
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	for i := range scores {
		if len(h) < m {
			h = append(h, i)
			for j := len(h) - 1; j > 0; {
				p := (j - 1) / 2
				if !worse(h[j], h[p]) {
					break
				}
				h[j], h[p] = h[p], h[j]
				j = p
			}
			continue
		}
		if before(scores, i, h[0]) {
			h[0] = i
			siftDown(0)
		}
	}
	slices.SortFunc(h, compareRank(scores))
	return h
}

// Ranking returns the indices of scores best first: higher score first,
// equal scores in input order — the order of a Curve's ranks. It is the
// one ranking rule of the module (fusion's reciprocal ranks, the band
// policy's features, BM25 candidate lists all use it), so a tie ranks the
// same everywhere.
func Ranking(scores []float64) []int { return topIndices(scores, len(scores)) }

// Descending returns a copy of scores sorted highest first (a curve's
// values by rank, without the indices).
func Descending(scores []float64) []float64 {
	s := slices.Clone(scores)
	slices.Sort(s)
	slices.Reverse(s)
	return s
}
