package lengthest

import (
	"math"
	"slices"
)

// Row is one budget's result: the mean score of the summarizer's summaries
// against the silver references and its standard deviation over the
// sampled runs, from N examples.
type Row struct {
	Budget int     `json:"budget"`
	Mean   float64 `json:"mean"`
	Std    float64 `json:"std"`
	N      int     `json:"n"`
	// Runs are the per-sample means over examples (mean and std are over
	// these); MeanTokens is the mean number of document tokens shown.
	Runs       []float64 `json:"runs,omitempty"`
	MeanTokens float64   `json:"mean_tokens"`
}

// OneStd applies the one-standard-deviation rule: the best row has the
// highest mean (on a tie, the smallest budget); the estimate is the
// smallest budget whose mean is at least best mean − best std. Budgets are
// compared as numbers, whatever order the rows come in. ok is false when no
// row has a finite mean.
func OneStd(rows []Row) (estimate int, best Row, ok bool) {
	rs := slices.Clone(rows)
	slices.SortStableFunc(rs, func(a, b Row) int { return a.Budget - b.Budget })
	bi := -1
	for i, r := range rs {
		if math.IsNaN(r.Mean) || math.IsInf(r.Mean, 0) {
			continue
		}
		if bi < 0 || r.Mean > rs[bi].Mean {
			bi = i
		}
	}
	if bi < 0 {
		return 0, Row{}, false
	}
	best = rs[bi]
	std := best.Std
	if math.IsNaN(std) || std < 0 {
		std = 0
	}
	floor := best.Mean - std
	for _, r := range rs[:bi+1] {
		if r.Mean >= floor {
			return r.Budget, best, true
		}
	}
	return best.Budget, best, true
}

// meanStd returns the mean and population standard deviation of xs.
func meanStd(xs []float64) (mean, std float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		std += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(std / float64(len(xs)))
}
