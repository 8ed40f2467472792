package cutoff

import (
	"fmt"
	"math"
	"sync"

	"github.com/ctxsel/ctxsel"
)

// AdaptiveKParams are Adaptive-k's parameters (Taguchi et al., 2025, §3.3).
type AdaptiveKParams struct {
	// Head is the fraction of the top of the ranking excluded from the gap
	// search: gaps before index int((n−1)·Head) are ignored. 0 searches from
	// the best passage; the paper's HoloBench setting uses 0.05, which keeps
	// a gap inside a cluster of near-duplicates at the very top from cutting
	// too early.
	Head float64
	// Tail is the fraction of the bottom excluded: the last int((n−1)·Tail)
	// gaps are ignored, so the search covers the top 90 % by default and a
	// large gap among the least relevant passages cannot select nearly all.
	Tail float64
	// Buffer is how many passages are added after the gap (the paper's B = 5),
	// because relevant passages often sit just below it.
	Buffer int
}

// DefaultAdaptiveK is the paper's setting: search the top 90 %, buffer 5.
var DefaultAdaptiveK = AdaptiveKParams{Head: 0, Tail: 0.1, Buffer: 5}

func (p AdaptiveKParams) validate() error {
	switch {
	case !(p.Head >= 0 && p.Head < 1):
		return fmt.Errorf("%w: adaptivek head=%v must be in [0, 1)", ctxsel.ErrInvalidInput, p.Head)
	case !(p.Tail >= 0 && p.Tail < 1):
		return fmt.Errorf("%w: adaptivek tail=%v must be in [0, 1)", ctxsel.ErrInvalidInput, p.Tail)
	case !(p.Head+p.Tail < 1):
		return fmt.Errorf("%w: adaptivek head+tail=%v must be below 1, or no gap is left to search", ctxsel.ErrInvalidInput, p.Head+p.Tail)
	case p.Buffer < 0:
		return fmt.Errorf("%w: adaptivek buffer=%d must not be negative", ctxsel.ErrInvalidInput, p.Buffer)
	}
	return nil
}

// AdaptiveKResult is what Adaptive-k decided.
type AdaptiveKResult struct {
	// K is how many top-ranked passages to select: GapIndex + 1 + Buffer,
	// capped at n; n < 2 selects everything.
	K int
	// GapIndex is i*, the rank just above the largest gap (−1 when n < 2).
	GapIndex int
	// Gap is the size of that gap, Above and Below the scores either side.
	Gap, Above, Below float64
	// SearchFrom and SearchTo bound the gap indices searched: [h, n−1−t).
	SearchFrom, SearchTo int
}

// AdaptiveK finds the cut exactly as the reference implementation does —
// sort descending, gaps g[i] = s[i] − s[i+1], argmax over g[h : len(g)−t] with
// the first index winning ties, k = i* + 1 + B capped at n — but without
// sorting: a selection finds the values bounding the searched window and a
// bucket pass finds the largest gap (the maximum-gap pigeonhole argument),
// so a call costs O(n). Scores may be in any order and must be finite.
func AdaptiveK(scores []float64, p AdaptiveKParams) (AdaptiveKResult, error) {
	if err := checkScores(scores); err != nil {
		return AdaptiveKResult{}, err
	}
	if err := p.validate(); err != nil {
		return AdaptiveKResult{}, err
	}
	n := len(scores)
	if n < 2 {
		return AdaptiveKResult{K: n, GapIndex: -1}, nil
	}
	h, t := int(float64(n-1)*p.Head), int(float64(n-1)*p.Tail)
	res := AdaptiveKResult{SearchFrom: h, SearchTo: n - 1 - t}

	lo, hi := minMax(scores)
	lowRank := n - 1 - t // the window is ranks h … n−1−t
	b := rankValue(scores, lowRank, lo, hi)
	a := hi
	if h > 0 {
		a = rankValue(scores, h, lo, hi)
	}
	if a == b { // every gap in the window is zero: argmax picks the first
		res.GapIndex, res.Gap, res.Above, res.Below = h, 0, a, a
		res.K = min(n, h+1+p.Buffer)
		return res, nil
	}
	upper, lower, ok := largestGap(scores, b, a)
	if !ok { // extreme magnitudes: the plain path
		return adaptiveKSorted(sortedDesc(scores), p), nil
	}
	above := 0 // i* + 1 = how many scores are >= the value above the gap
	for _, x := range scores {
		if x >= upper {
			above++
		}
	}
	res.GapIndex, res.Gap, res.Above, res.Below = above-1, upper-lower, upper, lower
	res.K = min(n, above+p.Buffer)
	return res, nil
}

// gapBins holds one histogram of the gap search.
type gapBins struct {
	count    [histBins]int32
	min, max [histBins]float64
}

var gapBinsPool = sync.Pool{New: func() any { return new(gapBins) }}

// largestGap finds the largest difference between consecutive distinct
// values among the scores in [b, a] (b < a), the highest one winning ties, as
// argmax over the sorted gaps does. It returns the values either side.
//
// A histogram over [b, a] gives every gap between neighbouring non-empty
// bins in one pass. A larger (or equal, higher) gap can only hide inside a
// bin whose own range reaches the best gap found; on similarity curves the
// decisive gap is far wider than a bin, so usually no bin qualifies. The
// values of the bins that do are gathered and sorted to finish exactly.
func largestGap(scores []float64, b, a float64) (upper, lower float64, ok bool) {
	span := a - b
	nb := binsFor(len(scores))
	scale := float64(nb) / span
	if math.IsInf(span, 0) || math.IsInf(scale, 0) {
		return 0, 0, false
	}
	g := gapBinsPool.Get().(*gapBins)
	defer gapBinsPool.Put(g)
	clear(g.count[:nb])
	for _, x := range scores {
		if x < b || x > a {
			continue
		}
		j := binOf(x, a, scale, nb)
		if g.count[j] == 0 {
			g.min[j], g.max[j] = x, x
		} else {
			g.min[j], g.max[j] = min(g.min[j], x), max(g.max[j], x)
		}
		g.count[j]++
	}
	best := -1.0
	prevMin, havePrev := 0.0, false
	for j := range nb { // bin 0 holds the highest values
		if g.count[j] == 0 {
			continue
		}
		if havePrev {
			if d := prevMin - g.max[j]; d > best {
				best, upper, lower = d, prevMin, g.max[j]
			}
		}
		prevMin, havePrev = g.min[j], true
	}
	// Bins whose range could hold a gap of at least best.
	var refine [histBins]bool
	need := 0
	for j := range nb {
		if g.count[j] > 1 && g.max[j]-g.min[j] >= best {
			refine[j] = true
			need += int(g.count[j])
		}
	}
	if need == 0 {
		return upper, lower, true
	}
	buf := getFloats(need)
	defer putFloats(buf)
	in := (*buf)[:0]
	for _, x := range scores {
		if x >= b && x <= a && refine[binOf(x, a, scale, nb)] {
			in = append(in, x)
		}
	}
	sortDesc(in)
	for i := 0; i+1 < len(in); i++ {
		if binOf(in[i], a, scale, nb) != binOf(in[i+1], a, scale, nb) {
			continue // not neighbours: the bins between them were not gathered
		}
		if d := in[i] - in[i+1]; d > best || (d == best && in[i] > upper) {
			best, upper, lower = d, in[i], in[i+1]
		}
	}
	return upper, lower, true
}

// AdaptiveKReference is the plain sort-then-scan implementation that the fast
// path must agree with exactly; it is kept for tests and benchmarks.
func AdaptiveKReference(scores []float64, p AdaptiveKParams) (AdaptiveKResult, error) {
	if err := checkScores(scores); err != nil {
		return AdaptiveKResult{}, err
	}
	if err := p.validate(); err != nil {
		return AdaptiveKResult{}, err
	}
	return adaptiveKSorted(sortedDesc(scores), p), nil
}

func adaptiveKSorted(s []float64, p AdaptiveKParams) AdaptiveKResult {
	n := len(s)
	if n < 2 {
		return AdaptiveKResult{K: n, GapIndex: -1}
	}
	gaps := make([]float64, n-1)
	for i := range gaps {
		gaps[i] = s[i] - s[i+1]
	}
	h, t := int(float64(n-1)*p.Head), int(float64(n-1)*p.Tail)
	window := gaps[h : len(gaps)-t]
	best := 0
	for i, g := range window {
		if g > window[best] {
			best = i
		}
	}
	i := h + best
	return AdaptiveKResult{
		K: min(n, i+1+p.Buffer), GapIndex: i, Gap: gaps[i], Above: s[i], Below: s[i+1],
		SearchFrom: h, SearchTo: n - 1 - t,
	}
}

func checkScores(scores []float64) error {
	for i, s := range scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return fmt.Errorf("%w: score %d is %v, not a finite number", ctxsel.ErrInvalidInput, i, s)
		}
	}
	return nil
}

type adaptiveK struct{ p AdaptiveKParams }

func (s adaptiveK) Name() string { return "adaptivek" }
func (s adaptiveK) Params() map[string]float64 {
	return map[string]float64{"head": s.p.Head, "tail": s.p.Tail, "buffer": float64(s.p.Buffer)}
}

func (s adaptiveK) Cut(c *ctxsel.Curve) (ctxsel.Cut, error) {
	r, err := AdaptiveK(c.Scores(), s.p)
	if err != nil {
		return ctxsel.Cut{}, err
	}
	if r.GapIndex < 0 {
		return ctxsel.Cut{End: r.K, Decision: ctxsel.Decision{Kind: "all", Rank: r.K - 1},
			Reason: "fewer than two candidates: nothing to cut"}, nil
	}
	from, to := r.SearchFrom, r.SearchTo
	return ctxsel.Cut{
		End: r.K,
		Decision: ctxsel.Decision{Kind: "gap", Rank: r.GapIndex, Value: r.Gap,
			Above: &r.Above, Below: &r.Below, SearchFrom: &from, SearchTo: &to},
		Reason: fmt.Sprintf("largest gap %.4g between ranks %d and %d (scores %.4g → %.4g), searched gap indices [%d, %d); kept %d + buffer %d",
			r.Gap, r.GapIndex, r.GapIndex+1, r.Above, r.Below, from, to, r.GapIndex+1, s.p.Buffer),
	}, nil
}
