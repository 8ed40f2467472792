package wire

import (
	"maps"
	"math"
	"slices"
	"strconv"
	"unsafe"

	"github.com/ctxsel/ctxsel"
)

// Selected is a selection ready to encode.
type Selected struct {
	Sel ctxsel.Selection
	// Score is the score of the i-th selected passage.
	Score       func(i int) float64
	TotalTokens int
	// Sorted is every score of the curve, highest first.
	Sorted []float64
}

// AppendSelected appends the members of a selection response (without the
// enclosing braces): ids, indices, scores, k, tokens, total_tokens, the
// evidence when the selector pruned passages (aligned with ids) and the
// explanation.
func AppendSelected(b []byte, res Selected, maxCurvePoints int) []byte {
	sel := res.Sel
	b = append(b, `"ids":`...)
	b = AppendStrings(b, sel.IDs)
	b = append(b, `,"indices":`...)
	b = appendInts(b, sel.Indices)
	b = append(b, `,"scores":`...)
	b = AppendArray(b, len(sel.IDs), func(b []byte, i int) []byte { return AppendFloat(b, res.Score(i)) })
	b = append(b, `,"k":`...)
	b = AppendInt(b, sel.K)
	b = append(b, `,"tokens":`...)
	b = AppendInt(b, sel.Tokens)
	b = append(b, `,"total_tokens":`...)
	b = AppendInt(b, res.TotalTokens)
	if sel.Evidence != nil {
		b = appendEvidenceList(b, sel.Evidence)
	}
	b = append(b, `,"explanation":`...)
	return AppendExplanation(b, sel.Explanation, res.Sorted, maxCurvePoints)
}

// AppendExplanation appends a selection's explanation as an object: the
// strategy, its parameters and caps, the cut, the decision, the reason,
// the caps and guards that applied, and the curve (AppendCurve).
func AppendExplanation(b []byte, e ctxsel.Explanation, sorted []float64, maxCurvePoints int) []byte {
	b = append(b, `{"strategy":`...)
	b = AppendString(b, e.Strategy)
	b = append(b, `,"params":{`...)
	for i, k := range slices.Sorted(maps.Keys(e.Params)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, k)
		b = append(b, ':')
		b = AppendFloat(b, e.Params[k])
	}
	b = append(b, `},"caps":{"min_k":`...)
	b = AppendInt(b, e.Caps.MinK)
	b = append(b, `,"max_k":`...)
	b = AppendInt(b, e.Caps.MaxK)
	b = append(b, `,"max_tokens":`...)
	b = AppendInt(b, e.Caps.MaxTokens)
	b = append(b, `},"n":`...)
	b = AppendInt(b, e.N)
	b = append(b, `,"strategy_k":`...)
	b = AppendInt(b, e.StrategyK)
	b = append(b, `,"start":`...)
	b = AppendInt(b, e.Start)
	b = append(b, `,"k":`...)
	b = AppendInt(b, e.K)
	// cut is the first rank not selected; band is the selected rank range.
	b = append(b, `,"cut":`...)
	b = AppendInt(b, e.Start+e.K)
	b = append(b, `,"band":{"start":`...)
	b = AppendInt(b, e.Start)
	b = append(b, `,"end":`...)
	b = AppendInt(b, e.Start+e.K)
	b = append(b, `},"decision":{"kind":`...)
	d := e.Decision
	b = AppendString(b, d.Kind)
	b = append(b, `,"rank":`...)
	b = AppendInt(b, d.Rank)
	b = append(b, `,"value":`...)
	b = AppendFloat(b, d.Value)
	if d.Above != nil {
		b = append(b, `,"above":`...)
		b = AppendFloat(b, *d.Above)
	}
	if d.Below != nil {
		b = append(b, `,"below":`...)
		b = AppendFloat(b, *d.Below)
	}
	if d.SearchFrom != nil {
		b = append(b, `,"search_from":`...)
		b = AppendInt(b, *d.SearchFrom)
	}
	if d.SearchTo != nil {
		b = append(b, `,"search_to":`...)
		b = AppendInt(b, *d.SearchTo)
	}
	b = append(b, `},"reason":`...)
	b = AppendString(b, e.Reason)
	b = append(b, `,"caps_applied":`...)
	b = AppendStrings(b, e.CapsApplied)
	b = append(b, `,"guards":`...)
	b = AppendStrings(b, e.Guards)
	b = append(b, `,"tokens":`...)
	b = AppendInt(b, e.Tokens)
	b = append(b, `,"total_tokens":`...)
	b = AppendInt(b, e.TotalTokens)
	b = append(b, `,"curve":`...)
	b = AppendCurve(b, sorted, e, maxCurvePoints)
	return append(b, '}')
}

// AppendCurve appends the curve summary: n, min, max, mean and the sorted
// scores for plotting. Past MaxCurvePoints the scores are sampled evenly,
// always keeping the ranks either side of the cut, the band and the
// decision, and "ranks" says which rank each point is.
func AppendCurve(b []byte, sorted []float64, e ctxsel.Explanation, maxCurvePoints int) []byte {
	n := len(sorted)
	b = append(b, `{"n":`...)
	b = AppendInt(b, n)
	if n > 0 {
		sum := 0.0
		for _, x := range sorted {
			sum += x
		}
		mean := sum / float64(n)
		if math.IsInf(sum, 0) { // scores near ±MaxFloat64
			mean = 0
			for _, x := range sorted {
				mean += x / float64(n)
			}
		}
		b = append(b, `,"min":`...)
		b = AppendFloat(b, sorted[n-1])
		b = append(b, `,"max":`...)
		b = AppendFloat(b, sorted[0])
		b = append(b, `,"mean":`...)
		b = AppendFloat(b, mean)
	}
	var ranks []int
	if n > maxCurvePoints {
		end := e.Start + e.K
		ranks = sampleRanks(n, maxCurvePoints, []int{0, n - 1, e.Start - 1, e.Start, end - 1, end, e.Decision.Rank, e.Decision.Rank + 1})
	}
	b = append(b, `,"sampled":`...)
	b = strconv.AppendBool(b, ranks != nil)
	b = append(b, `,"scores":`...)
	if ranks == nil {
		b = AppendArray(b, n, func(b []byte, i int) []byte { return AppendFloat(b, sorted[i]) })
		return append(b, '}')
	}
	b = AppendArray(b, len(ranks), func(b []byte, i int) []byte { return AppendFloat(b, sorted[ranks[i]]) })
	b = append(b, `,"ranks":`...)
	b = appendInts(b, ranks)
	return append(b, '}')
}

// sampleRanks picks at most maxPoints ranks of n: the keep ranks (those in
// range) and evenly spaced ones, sorted and distinct.
func sampleRanks(n, maxPoints int, keep []int) []int {
	m := maxPoints - len(keep)
	out := make([]int, 0, maxPoints)
	for i := range m {
		out = append(out, int(math.Round(float64(i)*float64(n-1)/float64(m-1))))
	}
	for _, k := range keep {
		if k >= 0 && k < n {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// SortDescending sorts finite numbers highest first. It sorts them as
// integers whose order is theirs, reversed (sign bit flipped for positives,
// every bit for negatives, then complemented): an integer sort skips the NaN
// handling of a float sort, and the profile of /v1/select under 64 clients
// had the float sort at a tenth of the server's CPU. The keys live in the
// numbers' own memory, so nothing is allocated.
func SortDescending(x []float64) {
	keys := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(x))), len(x))
	for i, f := range x {
		b := math.Float64bits(f)
		if b>>63 != 0 {
			b = ^b
		} else {
			b |= 1 << 63
		}
		keys[i] = ^b
	}
	slices.Sort(keys)
	for i, k := range keys {
		b := ^k
		if b>>63 != 0 {
			b &^= 1 << 63
		} else {
			b = ^b
		}
		x[i] = math.Float64frombits(b)
	}
}
