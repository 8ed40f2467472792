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
	// SearchFrom and SearchTo bound the gap indices searched: [h, n−1−t),
	// or the last gap before the tail when rounding leaves none.
	SearchFrom, SearchTo int
}

// AdaptiveK finds the cut exactly as the reference implementation does —
// sort descending, gaps g[i] = s[i] − s[i+1], argmax over g[h : len(g)−t] with
// the first index winning ties, k = i* + 1 + B capped at n — but without
// sorting: a selection finds the values bounding the searched window and a
// bucket pass finds the largest gap (the maximum-gap pigeonhole argument),
// so a call costs O(n). Scores may be in any order and must be finite.
func AdaptiveK(scores []float64, p AdaptiveKParams) (AdaptiveKResult, error) {
	if err := p.validate(); err != nil {
		return AdaptiveKResult{}, err
	}
	lo, hi, err := finiteRange(scores)
	if err != nil {
		return AdaptiveKResult{}, err
	}
	n := len(scores)
	if n < 2 {
		return AdaptiveKResult{K: n, GapIndex: -1}, nil
	}
	h, lowRank := searchWindow(n, p) // gap indices [h, lowRank): values of ranks h … lowRank
	res := AdaptiveKResult{SearchFrom: h, SearchTo: lowRank}

	zero := func(v float64) AdaptiveKResult { // every searched gap is zero: argmax picks the first
		res.GapIndex, res.Gap, res.Above, res.Below = h, 0, v, v
		res.K = min(n, h+1+p.Buffer)
		return res
	}
	if lo == hi {
		return zero(lo), nil
	}
	nb := binsFor(n)
	scale := float64(nb) / (hi - lo)
	if math.IsInf(hi-lo, 0) || math.IsInf(scale, 0) { // extreme magnitudes: the plain path
		return adaptiveKSorted(sortedDesc(scores), p), nil
	}
	// One histogram pass (bin 0 holds the highest scores) gives each bin's
	// count, minimum and maximum.
	g := gapBinsPool.Get().(*gapBins)
	defer gapBinsPool.Put(g)
	clear(g.count[:nb])
	for j := range nb {
		g.min[j], g.max[j] = math.Inf(1), math.Inf(-1)
	}
	for _, x := range scores {
		j := binOf(x, hi, scale, nb)
		g.count[j]++
		// Plain comparisons: the min and max builtins handle NaN and
		// signed zeros, which finite scores do not need, at twice the cost.
		if x < g.min[j] {
			g.min[j] = x
		}
		if x > g.max[j] {
			g.max[j] = x
		}
	}
	// The searched window is ranks h … lowRank: its values run from b up to a.
	jb, beforeB := binOfRank(g.count[:nb], lowRank)
	b := rankInBin(scores, jb, int(g.count[jb]), lowRank-beforeB, hi, scale, nb)
	ja, a := 0, hi
	if h > 0 {
		var beforeA int
		ja, beforeA = binOfRank(g.count[:nb], h)
		a = rankInBin(scores, ja, int(g.count[ja]), h-beforeA, hi, scale, nb)
	}
	if a == b {
		return zero(a), nil
	}
	// Within the window the edge bins are clipped to [b, a]; bins strictly
	// between ja and jb lie wholly inside it (bins are ordered by value).
	lowOf := func(j int) float64 {
		if j == jb {
			return b
		}
		return g.min[j]
	}
	highOf := func(j int) float64 {
		if j == ja {
			return a
		}
		return g.max[j]
	}
	// The largest gap between neighbouring non-empty bins, walking down from
	// the top; a strictly larger gap replaces the best, so the highest of
	// equal gaps wins, as argmax over the sorted gaps does.
	best, upper, lower, upperBin := -1.0, 0.0, 0.0, -1
	prev := -1
	for j := ja; j <= jb; j++ {
		if g.count[j] == 0 {
			continue
		}
		if prev >= 0 {
			if d := lowOf(prev) - highOf(j); d > best {
				best, upper, lower, upperBin = d, lowOf(prev), highOf(j), prev
			}
		}
		prev = j
	}
	// A gap as large can only hide inside a bin whose own range reaches it.
	// On similarity curves the decisive gap is far wider than a bin, so
	// usually none qualifies; the values of those that do are sorted.
	refine := false
	for j := ja; j <= jb; j++ {
		g.refine[j] = g.count[j] > 1 && highOf(j) > lowOf(j) && highOf(j)-lowOf(j) >= best
		refine = refine || g.refine[j]
	}
	if refine {
		if u, l, found := g.largestInside(scores, b, a, best, upper, hi, scale, nb); found {
			upper, lower, upperBin = u, l, -1
		}
	}
	above := 0 // i* + 1 = how many scores are >= the value above the gap
	if upperBin >= 0 {
		// upper is the minimum of its bin: everything in it and above counts.
		for j := 0; j <= upperBin; j++ {
			above += int(g.count[j])
		}
	} else {
		for _, x := range scores {
			if x >= upper {
				above++
			}
		}
	}
	res.GapIndex, res.Gap, res.Above, res.Below = above-1, upper-lower, upper, lower
	res.K = min(n, above+p.Buffer)
	return res, nil
}

// gapBins is the histogram of AdaptiveK's fast path.
type gapBins struct {
	count    [histBins]int32
	min, max [histBins]float64
	refine   [histBins]bool
}

var gapBinsPool = sync.Pool{New: func() any { return new(gapBins) }}

// largestInside looks for a gap inside the bins marked for refinement that
// beats best (or equals it higher up, above upper).
func (g *gapBins) largestInside(scores []float64, b, a, best, upper, hi, scale float64, nb int) (u, l float64, found bool) {
	need := 0
	for j := range nb {
		if g.refine[j] {
			need += int(g.count[j])
		}
	}
	buf := getFloats(need)
	defer putFloats(buf)
	in := (*buf)[:0]
	for _, x := range scores {
		if x >= b && x <= a && g.refine[binOf(x, hi, scale, nb)] {
			in = append(in, x)
		}
	}
	sortDesc(in)
	for i := 0; i+1 < len(in); i++ {
		if binOf(in[i], hi, scale, nb) != binOf(in[i+1], hi, scale, nb) {
			continue // not neighbours: the bins between them were not gathered
		}
		if d := in[i] - in[i+1]; d > best || (d == best && in[i] > upper) {
			best, upper, u, l, found = d, in[i], in[i], in[i+1], true
		}
	}
	return u, l, found
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
	h, to := searchWindow(n, p)
	window := gaps[h:to]
	best := 0
	for i, g := range window {
		if g > window[best] {
			best = i
		}
	}
	i := h + best
	return AdaptiveKResult{
		K: min(n, i+1+p.Buffer), GapIndex: i, Gap: gaps[i], Above: s[i], Below: s[i+1],
		SearchFrom: h, SearchTo: to,
	}
}

// searchWindow returns the gap indices [from, to) that Adaptive-k searches
// among the n−1 gaps: from = int((n−1)·Head), to = n−1−int((n−1)·Tail).
// Head + Tail < 1 leaves a gap to search in exact arithmetic, but the
// floating-point products can round up and leave none (Head 0.8999999999999999,
// Tail 0.1, n = 11 gives [9, 9)); then the last gap before the tail is
// searched, so fast and plain paths agree and k stays defined. n ≥ 2.
func searchWindow(n int, p AdaptiveKParams) (from, to int) {
	from, to = int(float64(n-1)*p.Head), n-1-int(float64(n-1)*p.Tail)
	to = max(to, 1)
	from = min(from, to-1)
	return from, to
}

// finiteRange returns the smallest and largest score in one pass, or an
// error naming the first score that is not finite.
func finiteRange(scores []float64) (lo, hi float64, err error) {
	if len(scores) == 0 {
		return 0, 0, nil
	}
	lo, hi = scores[0], scores[0]
	nan := 0.0 // x − x is 0 for finite x and NaN for NaN or ±Inf
	for _, x := range scores {
		nan += x - x
		if x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
	}
	if nan != 0 {
		return 0, 0, checkScores(scores)
	}
	return lo, hi, nil
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
