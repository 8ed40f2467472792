package fusion

import (
	"fmt"
	"slices"
)

// Hybrid retrieval fuses two ranked lists that cover different candidates
// (each retriever's best N), not two score lists over the same candidates
// as Fuse does.

// Lists fuses two ranked lists of keys with their scores into one
// score per key of their union (keys of a first, then b's new ones), the
// rule of Weaviate's hybrid query: each list is normalised over its own
// members by method m (z-scores; min-max, where a list without spread
// gives its members 1, as Weaviate's relativeScoreFusion does; or
// reciprocal rank), a key missing from a list takes that list's floor (its
// lowest normalised value; 0 for min-max and RRF), and the result is
// alpha·a + (1−alpha)·b. Keys within one list must be distinct.
func Lists[K comparable](m Method, alpha float64, ka []K, a []float64, kb []K, b []float64) ([]K, []float64, error) {
	if len(ka) != len(a) || len(kb) != len(b) {
		return nil, nil, fmt.Errorf("fusion: %d keys for %d scores, %d for %d", len(ka), len(a), len(kb), len(b))
	}
	if !(alpha >= 0 && alpha <= 1) {
		return nil, nil, fmt.Errorf("fusion: alpha %v outside [0, 1]", alpha)
	}
	if m != ZScore && m != MinMax && m != RRF {
		return nil, nil, fmt.Errorf("fusion: unknown method %q", m)
	}
	na, fa := normList(m, a)
	nb, fb := normList(m, b)
	keys := make([]K, 0, len(ka)+len(kb))
	pos := make(map[K]int, len(ka)+len(kb))
	var va, vb []float64
	for i, k := range ka {
		pos[k] = len(keys)
		keys = append(keys, k)
		va, vb = append(va, na[i]), append(vb, fb)
	}
	for i, k := range kb {
		if j, ok := pos[k]; ok {
			vb[j] = nb[i]
			continue
		}
		pos[k] = len(keys)
		keys = append(keys, k)
		va, vb = append(va, fa), append(vb, nb[i])
	}
	out := make([]float64, len(keys))
	for i := range out {
		out[i] = alpha*va[i] + (1-alpha)*vb[i]
	}
	return keys, out, nil
}

// normList normalises one list by method m and returns its floor: the
// value a key missing from it gets.
func normList(m Method, s []float64) (norm []float64, floor float64) {
	switch m {
	case ZScore:
		norm = Standardize(s)
		if len(norm) > 0 {
			floor = slices.Min(norm)
		}
		return norm, floor
	case MinMax:
		if len(s) > 0 && slices.Min(s) == slices.Max(s) {
			norm = make([]float64, len(s))
			for i := range norm {
				norm[i] = 1
			}
			return norm, 0
		}
		return Rescale(s), 0
	}
	return Reciprocal(s, RRFK), 0
}
