// Package fusion combines two or more score lists over the same candidates
// into one curve: z-score fusion, Weaviate's relative-score (min-max)
// fusion, and reciprocal rank fusion. Pure functions; no I/O.
package fusion

import (
	"fmt"
	"math"
	"slices"

	"github.com/ctxsel/ctxsel"
)

// Method names a fusion rule as it appears in specs (fusion=zscore).
type Method string

const (
	// ZScore standardises each list (mean 0, population std 1) and takes the
	// alpha-weighted sum. It keeps the shape of each curve, which is what the
	// cut strategies read.
	ZScore Method = "zscore"
	// MinMax scales each list to [0, 1] and takes the alpha-weighted sum:
	// Weaviate's relativeScoreFusion.
	MinMax Method = "minmax"
	// RRF sums 1/(K + rank) over the lists (rank from 1, ties by index);
	// alpha weights the first list as in the others.
	RRF Method = "rrf"
)

// RRFK is reciprocal rank fusion's usual constant.
const RRFK = 60

// ParseMethod accepts zscore, minmax (alias relative) and rrf.
func ParseMethod(s string) (Method, error) {
	switch s {
	case "zscore", "z":
		return ZScore, nil
	case "minmax", "relative":
		return MinMax, nil
	case "rrf":
		return RRF, nil
	}
	return "", fmt.Errorf("unknown fusion %q (want zscore, minmax or rrf)", s)
}

// Fuse returns alpha·f(a) + (1−alpha)·f(b) where f is the method's
// normalisation; alpha = 1 is a alone, 0 is b alone. a and b score the same
// candidates in the same order. A list with no spread contributes zeros.
func Fuse(m Method, alpha float64, a, b []float64) ([]float64, error) {
	if len(a) != len(b) {
		return nil, fmt.Errorf("fusion: %d scores against %d", len(a), len(b))
	}
	if !(alpha >= 0 && alpha <= 1) {
		return nil, fmt.Errorf("fusion: alpha %v outside [0, 1]", alpha)
	}
	var na, nb []float64
	switch m {
	case ZScore:
		na, nb = Standardize(a), Standardize(b)
	case MinMax:
		na, nb = Rescale(a), Rescale(b)
	case RRF:
		na, nb = Reciprocal(a, RRFK), Reciprocal(b, RRFK)
	default:
		return nil, fmt.Errorf("fusion: unknown method %q", m)
	}
	out := make([]float64, len(a))
	for i := range out {
		out[i] = alpha*na[i] + (1-alpha)*nb[i]
	}
	return out, nil
}

// Standardize maps s to z-scores (population std); all-equal input gives zeros.
func Standardize(s []float64) []float64 {
	out := make([]float64, len(s))
	if len(s) == 0 {
		return out
	}
	var mean float64
	for _, v := range s {
		mean += v
	}
	mean /= float64(len(s))
	var ss float64
	for _, v := range s {
		ss += (v - mean) * (v - mean)
	}
	std := math.Sqrt(ss / float64(len(s)))
	if std == 0 || math.IsNaN(std) || math.IsInf(std, 0) {
		return out
	}
	for i, v := range s {
		out[i] = (v - mean) / std
	}
	return out
}

// Rescale maps s linearly onto [0, 1]; all-equal input gives zeros.
func Rescale(s []float64) []float64 {
	out := make([]float64, len(s))
	if len(s) == 0 {
		return out
	}
	lo, hi := slices.Min(s), slices.Max(s)
	if hi == lo {
		return out
	}
	for i, v := range s {
		out[i] = (v - lo) / (hi - lo)
	}
	return out
}

// Reciprocal gives each item 1/(k + rank), rank 1 for the best score, ties
// broken by the lower index (ctxsel.Ranking).
func Reciprocal(s []float64, k float64) []float64 {
	idx := ctxsel.Ranking(s)
	out := make([]float64, len(s))
	for r, i := range idx {
		out[i] = 1 / (k + float64(r+1))
	}
	return out
}
