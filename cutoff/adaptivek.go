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
	// because relevant passages often sit just below it: the official code's
	// retrieve_more given as an integer.
	Buffer int
	// HeadN and TailN, when positive, exclude that many gaps at the top or
	// bottom instead of the fractions Head and Tail: the official code's
	// ignore_extreme and ignore_extreme_tail given as integers.
	HeadN, TailN int
	// BelowMedian excludes the bottom half of the gaps (int((n−1)·0.5)),
	// replacing Tail and TailN, as the official ignore_below_median does.
	BelowMedian bool
	// Factor, when positive, scales the gap index before the buffer:
	// k = int(i*·Factor) + 1 + Buffer, the official retrieve_more given as a
	// float (it is used there with no buffer). 0 leaves i* as it is.
	Factor float64
	// Float32 computes on the scores rounded to float32 with float32 gaps, as
	// the official code does on faiss/torch float32 similarities, so its cut
	// is reproduced bit for bit (ties that float32 rounding creates included).
	// It takes the plain sorted path.
	Float32 bool
}

// DefaultAdaptiveK is the paper's setting: search the top 90 %, buffer 5.
var DefaultAdaptiveK = AdaptiveKParams{Head: 0, Tail: 0.1, Buffer: 5}

func (p AdaptiveKParams) validate() error {
	switch {
	case !(p.Head >= 0 && p.Head < 1):
		return fmt.Errorf("%w: adaptivek head=%v must be in [0, 1)", ctxsel.ErrInvalidInput, p.Head)
	case !(p.Tail >= 0 && p.Tail < 1):
		return fmt.Errorf("%w: adaptivek tail=%v must be in [0, 1)", ctxsel.ErrInvalidInput, p.Tail)
	case p.HeadN == 0 && p.TailN == 0 && !p.BelowMedian && !(p.Head+p.Tail < 1):
		return fmt.Errorf("%w: adaptivek head+tail=%v must be below 1, or no gap is left to search", ctxsel.ErrInvalidInput, p.Head+p.Tail)
	case p.Buffer < 0:
		return fmt.Errorf("%w: adaptivek buffer=%d must not be negative", ctxsel.ErrInvalidInput, p.Buffer)
	case p.HeadN < 0 || p.TailN < 0:
		return fmt.Errorf("%w: adaptivek head_n=%d and tail_n=%d must not be negative", ctxsel.ErrInvalidInput, p.HeadN, p.TailN)
	case !(p.Factor >= 0 && p.Factor <= maxFactor):
		return fmt.Errorf("%w: adaptivek factor=%v must be in [0, %d]", ctxsel.ErrInvalidInput, p.Factor, maxFactor)
	case p.BelowMedian && p.HeadN == 0 && !(p.Head < 0.5):
		return fmt.Errorf("%w: adaptivek head=%v with ignore_below_median must be below 0.5, or no gap is left to search", ctxsel.ErrInvalidInput, p.Head)
	}
	return nil
}

// maxFactor bounds Factor so that int(i*·Factor) cannot overflow.
const maxFactor = 1 << 20

// k is how many passages a cut after gap index i keeps: i scaled by Factor
// (truncated, as Python's int() does), plus one, plus Buffer, capped at n.
func (p AdaptiveKParams) k(n, i int) int { return p.kOf(n, i, true) }

// kOf is k; tensor says whether the official code holds i as a torch
// tensor (its largest-gap paths: the factor product is then float32 under
// Float32) or as a Python int (2diff_spike's spike: always float64).
func (p AdaptiveKParams) kOf(n, i int, tensor bool) int {
	if p.Factor > 0 {
		if p.Float32 && tensor {
			i = int(float32(float32(i) * float32(p.Factor)))
		} else {
			i = int(float64(i) * p.Factor)
		}
	}
	return min(n, i+1+min(p.Buffer, n))
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
	// Clamped reports that the requested head and tail left no gap (counts
	// larger than the curve, or rounding), so the window was clamped.
	Clamped bool
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
	if err := checkFloat32(scores, p); err != nil {
		return AdaptiveKResult{}, err
	}
	n := len(scores)
	if n < 2 {
		return AdaptiveKResult{K: n, GapIndex: -1}, nil
	}
	from, to, clamped := searchWindow(n, p)
	return gapSearch(scores, lo, hi, from, to, clamped, p), nil
}

// gapSearch finds the largest gap among gap indices [h, lowRank) of finite
// scores whose extremes are lo and hi; n >= 2.
func gapSearch(scores []float64, lo, hi float64, h, lowRank int, clamped bool, p AdaptiveKParams) AdaptiveKResult {
	n := len(scores)
	if p.Float32 {
		return adaptiveKSorted32(ctxsel.Descending(scores), h, lowRank, clamped, p)
	}
	res := AdaptiveKResult{SearchFrom: h, SearchTo: lowRank, Clamped: clamped}
	zero := func(v float64) AdaptiveKResult { // every searched gap is zero: argmax picks the first
		res.GapIndex, res.Gap, res.Above, res.Below = h, 0, v, v
		res.K = p.k(n, h)
		return res
	}
	if lo == hi {
		return zero(lo)
	}
	nb := binsFor(n)
	scale := float64(nb) / (hi - lo)
	if math.IsInf(hi-lo, 0) || math.IsInf(scale, 0) { // extreme magnitudes: the plain path
		return adaptiveKSorted(ctxsel.Descending(scores), h, lowRank, clamped, p)
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
		return zero(a)
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
	res.K = p.k(n, above-1)
	return res
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
	if err := checkFloat32(scores, p); err != nil {
		return AdaptiveKResult{}, err
	}
	n := len(scores)
	if n < 2 {
		return AdaptiveKResult{K: n, GapIndex: -1}, nil
	}
	from, to, clamped := searchWindow(n, p)
	if p.Float32 {
		return adaptiveKSorted32(ctxsel.Descending(scores), from, to, clamped, p), nil
	}
	return adaptiveKSorted(ctxsel.Descending(scores), from, to, clamped, p), nil
}

// adaptiveKSorted is the plain scan over descending scores s (len >= 2):
// gaps g[i] = s[i] − s[i+1], argmax over g[from:to], the first index winning
// ties.
func adaptiveKSorted(s []float64, from, to int, clamped bool, p AdaptiveKParams) AdaptiveKResult {
	best := from
	for i := from; i < to; i++ {
		if s[i]-s[i+1] > s[best]-s[best+1] {
			best = i
		}
	}
	return AdaptiveKResult{
		K: p.k(len(s), best), GapIndex: best, Gap: s[best] - s[best+1], Above: s[best], Below: s[best+1],
		SearchFrom: from, SearchTo: to, Clamped: clamped,
	}
}

// adaptiveKSorted32 is adaptiveKSorted in float32, the official code's
// arithmetic: faiss returns float32 similarities and torch.diff subtracts in
// float32. float32 rounding is monotone, so s stays descending; it may merge
// near-equal scores and gaps into ties, which the first index wins as torch's
// argmin does. (The official code takes argmin of s[i+1] − s[i]; negation is
// exact, so that is the argmax of s[i] − s[i+1] taken here.)
func adaptiveKSorted32(s []float64, from, to int, clamped bool, p AdaptiveKParams) AdaptiveKResult {
	gap := func(i int) float32 { return float32(s[i]) - float32(s[i+1]) }
	best := from
	for i := from; i < to; i++ {
		if gap(i) > gap(best) {
			best = i
		}
	}
	return AdaptiveKResult{
		K: p.k(len(s), best), GapIndex: best, Gap: float64(gap(best)),
		Above: float64(float32(s[best])), Below: float64(float32(s[best+1])),
		SearchFrom: from, SearchTo: to, Clamped: clamped,
	}
}

// searchWindow returns the gap indices [from, to) searched among the n−1
// gaps: from = int((n−1)·Head) or HeadN, to = n−1 − (int((n−1)·Tail), TailN,
// or int((n−1)·0.5) with BelowMedian). When that leaves no gap (counts larger
// than the curve, or floating-point products rounding up: Head
// 0.8999999999999999, Tail 0.1, n = 11 gives [9, 9)), the last gap before the
// tail is searched — or the first gap when the tail swallows everything — and
// clamped reports it, so the fast and plain paths agree and k stays defined.
// The official code would index an empty tensor there. n >= 2.
func searchWindow(n int, p AdaptiveKParams) (from, to int, clamped bool) {
	return gapWindow(n, n-1, p)
}

// gapWindow is searchWindow over m gaps whose head and tail fractions are
// taken of n−1, as the official moving_avg does (m = n − window there).
func gapWindow(n, m int, p AdaptiveKParams) (from, to int, clamped bool) {
	from = int(float64(n-1) * p.Head)
	if p.HeadN > 0 {
		from = p.HeadN
	}
	tail := int(float64(n-1) * p.Tail)
	switch {
	case p.BelowMedian:
		tail = int(float64(n-1) * 0.5)
	case p.TailN > 0:
		tail = p.TailN
	}
	to = m - min(tail, m+1)
	if to < 1 {
		to, clamped = 1, true
	}
	if from > to-1 {
		from, clamped = to-1, true
	}
	return from, to, clamped
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

// maxFloat32Score bounds scores under Float32: far beyond any similarity or
// logit, and small enough that float32 sums and differences stay finite.
const maxFloat32Score = 1e30

// checkFloat32 rejects scores that float32 arithmetic would overflow.
func checkFloat32(scores []float64, p AdaptiveKParams) error {
	if !p.Float32 {
		return nil
	}
	for i, s := range scores {
		if math.Abs(s) > maxFloat32Score {
			return fmt.Errorf("%w: score %d is %v, too large for float32=1 (at most %g in magnitude)", ctxsel.ErrInvalidInput, i, s, maxFloat32Score)
		}
	}
	return nil
}

func checkScores(scores []float64) error {
	for i, s := range scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return fmt.Errorf("%w: score %d is %v, not a finite number", ctxsel.ErrInvalidInput, i, s)
		}
	}
	return nil
}
