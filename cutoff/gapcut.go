package cutoff

import (
	"fmt"
	"math"
	"strings"

	"github.com/ctxsel/ctxsel"
)

// The official Adaptive-k code (megagonlabs/adaptive-k-retrieval,
// retriever.py) has two cut rules besides the largest gap; both are here
// with its head/tail, ignore_below_median, retrieve_more and float32
// semantics (AdaptiveKParams). They sort the curve: O(n log n).

// MaxMovingAvgWindow bounds the moving-average window: the average costs
// O(n·window).
const MaxMovingAvgWindow = 256

// MovingAvg cuts at the largest drop of the curve's moving average: sort
// descending, average each run of window scores (m[j] = mean s[j … j+w−1],
// as a convolution with a kernel of 1/w, summed in kernel order), take the
// gaps m[j] − m[j+1] = (s[j] − s[j+w])/w, and the argmax j* over the searched
// gap indices (first wins ties) keeps j* + 1 passages plus the buffer, as the
// official moving_avg does. Head and tail fractions are taken of n − 1 and
// the tail counted back from the last of the n − w gaps, as there. A curve
// with no moving-average gap (n ≤ window) selects everything. window = 1 is
// Adaptive-k's largest gap.
//
// With Float32 the arithmetic is float32 (kernel 1/w rounded to float32, each
// product rounded before it is added): PyTorch's conv1d may associate the sum
// differently, so unlike AdaptiveK and SecondDiffSpike this path can differ
// from the official code in the last bit of an average.
func MovingAvg(scores []float64, window int, p AdaptiveKParams) (AdaptiveKResult, error) {
	if err := p.validate(); err != nil {
		return AdaptiveKResult{}, err
	}
	if window < 1 || window > MaxMovingAvgWindow {
		return AdaptiveKResult{}, fmt.Errorf("%w: moving_avg window=%d must be in [1, %d]", ctxsel.ErrInvalidInput, window, MaxMovingAvgWindow)
	}
	if err := checkScores(scores); err != nil {
		return AdaptiveKResult{}, err
	}
	if err := checkFloat32(scores, p); err != nil {
		return AdaptiveKResult{}, err
	}
	n := len(scores)
	if n <= window {
		return AdaptiveKResult{K: n, GapIndex: -1}, nil
	}
	s := ctxsel.Descending(scores)
	gaps := movingAvgGaps(s, window, p.Float32)
	from, to, clamped := gapWindow(n, len(gaps), p)
	return movingAvgCut(s, gaps, from, to, clamped, p), nil
}

func movingAvgCut(s, gaps []float64, from, to int, clamped bool, p AdaptiveKParams) AdaptiveKResult {
	best := from
	for j := from; j < to; j++ {
		if gaps[j] > gaps[best] {
			best = j
		}
	}
	return AdaptiveKResult{K: p.k(len(s), best), GapIndex: best, Gap: gaps[best], Above: s[best], Below: s[best+1],
		SearchFrom: from, SearchTo: to, Clamped: clamped}
}

// movingAvgGaps returns the n − w gaps of the moving average of s.
func movingAvgGaps(s []float64, w int, f32 bool) []float64 {
	m := len(s) - w + 1
	avg := make([]float64, m)
	if f32 {
		k := float32(1) / float32(w)
		for j := range avg {
			var acc float32
			for t := range w {
				acc += float32(float32(s[j+t]) * k) // the conversion forbids a fused multiply-add
			}
			avg[j] = float64(acc)
		}
	} else {
		k := 1 / float64(w)
		for j := range avg {
			acc := 0.0
			for t := range w {
				acc += float64(s[j+t] * k)
			}
			avg[j] = acc
		}
	}
	gaps := make([]float64, m-1)
	for j := range gaps {
		if f32 {
			gaps[j] = float64(float32(avg[j]) - float32(avg[j+1]))
		} else {
			gaps[j] = avg[j] - avg[j+1]
		}
	}
	return gaps
}

// SpikeResult is what SecondDiffSpike decided.
type SpikeResult struct {
	AdaptiveKResult
	// Spike reports that a curvature transition was found; false means the
	// largest gap decided (the fallback).
	Spike bool
	// Curvature is the second difference at the transition (> 0).
	Curvature float64
}

// SecondDiffSpike is the official 2diff_spike rule: over the searched scores
// a = s[from … to] (the values Adaptive-k's gap window spans), first
// differences d1[i] = a[i+1] − a[i], second differences d2[i] = d1[i+1] − d1[i];
// the first i where d2[i+1] > 0 while the running minimum of d2[0 … i] is
// below 0 — the drop was accelerating and now slows: the end of a cliff —
// keeps ranks up to from + i + 2, plus the buffer. When there is no such
// transition the largest gap of the same window decides.
//
// One deliberate difference from the official code: its fallback runs the
// largest gap on the already trimmed curve, trimming head and tail a second
// time and returning an index relative to the trimmed curve; here the
// fallback is Adaptive-k over the same window, in the curve's own ranks. With
// head and tail 0 the two agree.
func SecondDiffSpike(scores []float64, p AdaptiveKParams) (SpikeResult, error) {
	if err := p.validate(); err != nil {
		return SpikeResult{}, err
	}
	if err := checkScores(scores); err != nil {
		return SpikeResult{}, err
	}
	if err := checkFloat32(scores, p); err != nil {
		return SpikeResult{}, err
	}
	n := len(scores)
	if n < 2 {
		return SpikeResult{AdaptiveKResult: AdaptiveKResult{K: n, GapIndex: -1}}, nil
	}
	s := ctxsel.Descending(scores)
	from, to, clamped := searchWindow(n, p)
	a := s[from : to+1]
	d2 := make([]float64, max(0, len(a)-2))
	for i := range d2 {
		if p.Float32 {
			x0, x1, x2 := float32(a[i]), float32(a[i+1]), float32(a[i+2])
			d2[i] = float64((x2 - x1) - (x1 - x0))
		} else {
			d2[i] = (a[i+2] - a[i+1]) - (a[i+1] - a[i])
		}
	}
	runMin := math.Inf(1)
	for i := 0; i+1 < len(d2); i++ {
		runMin = min(runMin, d2[i])
		if d2[i+1] > 0 && runMin < 0 {
			t := from + i + 2
			r := AdaptiveKResult{K: p.kOf(n, t, false), GapIndex: t, Above: s[t], Below: s[t+1],
				SearchFrom: from, SearchTo: to, Clamped: clamped}
			r.Gap = s[t] - s[t+1]
			if p.Float32 {
				r.Gap = float64(float32(s[t]) - float32(s[t+1]))
				r.Above, r.Below = float64(float32(s[t])), float64(float32(s[t+1]))
			}
			return SpikeResult{AdaptiveKResult: r, Spike: true, Curvature: d2[i+1]}, nil
		}
	}
	if p.Float32 {
		return SpikeResult{AdaptiveKResult: adaptiveKSorted32(s, from, to, clamped, p)}, nil
	}
	return SpikeResult{AdaptiveKResult: adaptiveKSorted(s, from, to, clamped, p)}, nil
}

// headGuardRatio is not a tuning knob but part of the reason text: a head
// gap at least this many times the next largest is called an outlier.
const headGuardRatio = 4.0

// headGuard is the documented guard against a largest gap at rank 0, which
// would keep only the best passage (plus the buffer): one passage scoring far
// above the rest (a near-duplicate of the query, a title match, a reranker's
// saturated logit) says nothing about where the rest of the relevant
// passages end. When the largest searched gap is the one after rank 0 and a
// non-zero gap exists lower in the window, the cut moves to the largest of
// those (lower returns it) and the explanation says so. It is ctxsel's
// option (head_guard=1), off by default: the paper's Algorithm 1 takes the
// arg-max over every searched gap, rank 0 included. It fires only on a gap
// at rank 0, so head > 0 or head_n > 0 (which skip that gap) never trigger
// it.
func headGuard(r AdaptiveKResult, lower func(from int) AdaptiveKResult) (AdaptiveKResult, string) {
	if r.GapIndex != 0 || r.SearchTo < 2 {
		return r, ""
	}
	r2 := lower(1)
	if !(r2.Gap > 0) {
		return r, ""
	}
	kind := "comparable to"
	if r.Gap >= headGuardRatio*r2.Gap {
		kind = "an outlier against"
	}
	note := fmt.Sprintf("head guard (head_guard=1, ctxsel's option): the largest gap %.4g follows rank 0 (%s the next largest, %.4g after rank %d); cutting there would keep only the best passage, so the cut moved to rank %d (the default, head_guard=0, keeps the paper's cut)",
		r.Gap, kind, r2.Gap, r2.GapIndex, r2.GapIndex)
	return r2, note
}

// gapStrategy is adaptivek, moving_avg or 2diff_spike as a ctxsel.Strategy.
type gapStrategy struct {
	name   string
	p      AdaptiveKParams
	window int // moving_avg only
	guard  bool
}

func (s gapStrategy) Name() string { return s.name }

func (s gapStrategy) Params() map[string]float64 {
	b := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	m := map[string]float64{
		"head": s.p.Head, "tail": s.p.Tail, "buffer": float64(s.p.Buffer),
		"head_n": float64(s.p.HeadN), "tail_n": float64(s.p.TailN), "ignore_below_median": b(s.p.BelowMedian),
		"factor": s.p.Factor, "float32": b(s.p.Float32), "head_guard": b(s.guard),
	}
	if s.name == "moving_avg" {
		m["window"] = float64(s.window)
	}
	return m
}

func (s gapStrategy) Cut(c *ctxsel.Curve) (ctxsel.Cut, error) {
	scores := c.Scores()
	var (
		r     AdaptiveKResult
		spike *SpikeResult
		err   error
	)
	var lower func(from int) AdaptiveKResult // the same search from a lower gap index
	switch s.name {
	case "moving_avg":
		r, err = MovingAvg(scores, s.window, s.p)
		if err == nil && r.GapIndex >= 0 {
			lower = func(from int) AdaptiveKResult { // only called when the gap follows rank 0
				srt := c.Sorted()
				return movingAvgCut(srt, movingAvgGaps(srt, s.window, s.p.Float32), from, r.SearchTo, r.Clamped, s.p)
			}
		}
	case "2diff_spike":
		var sr SpikeResult
		sr, err = SecondDiffSpike(scores, s.p)
		r, spike = sr.AdaptiveKResult, &sr
	default:
		r, err = AdaptiveK(scores, s.p)
	}
	if err != nil {
		return ctxsel.Cut{}, err
	}
	if r.GapIndex < 0 {
		return ctxsel.Cut{End: r.K, Decision: ctxsel.Decision{Kind: "all", Rank: r.K - 1},
			Reason: fmt.Sprintf("too few candidates (%d) for a %s cut: kept all", r.K, s.name)}, nil
	}
	if lower == nil && (spike == nil || !spike.Spike) {
		lower = func(from int) AdaptiveKResult {
			if s.p.Float32 {
				return adaptiveKSorted32(c.Sorted(), from, r.SearchTo, r.Clamped, s.p)
			}
			lo, hi := minMax(scores)
			return gapSearch(scores, lo, hi, from, r.SearchTo, r.Clamped, s.p)
		}
	}
	var guards, notes []string
	if lower != nil {
		if r2, note := headGuard(r, lower); note != "" {
			if s.guard {
				r = r2
				guards, notes = append(guards, "head_guard"), append(notes, note)
			} else { // detected, not acted on: still never silent
				guards = append(guards, "head_gap")
				notes = append(notes, fmt.Sprintf("the largest gap follows rank 0, so the paper's cut keeps only the best passage before the buffer; ctxsel's head_guard=1 would cut after rank %d", r2.GapIndex))
			}
		}
	}
	if r.Clamped {
		guards = append(guards, "window_clamped")
		notes = append(notes, fmt.Sprintf("head and tail left no gap among %d candidates: searched gap indices [%d, %d) instead", c.Len(), r.SearchFrom, r.SearchTo))
	}
	from, to := r.SearchFrom, r.SearchTo
	above, below := r.Above, r.Below
	d := ctxsel.Decision{Kind: "gap", Rank: r.GapIndex, Value: r.Gap, Above: &above, Below: &below, SearchFrom: &from, SearchTo: &to}
	var reason string
	switch {
	case spike != nil && spike.Spike:
		d.Kind, d.Value = "spike", spike.Curvature
		reason = fmt.Sprintf("the drop stops accelerating after rank %d (second difference %.4g; scores %.4g → %.4g), searched ranks %d … %d",
			r.GapIndex, spike.Curvature, r.Above, r.Below, from, to)
	case s.name == "moving_avg":
		reason = fmt.Sprintf("largest drop %.4g of the %d-score moving average between windows starting at ranks %d and %d, searched [%d, %d)",
			r.Gap, s.window, r.GapIndex, r.GapIndex+1, from, to)
	default:
		reason = fmt.Sprintf("largest gap %.4g between ranks %d and %d (scores %.4g → %.4g), searched gap indices [%d, %d)",
			r.Gap, r.GapIndex, r.GapIndex+1, r.Above, r.Below, from, to)
		if spike != nil {
			reason = "no curvature spike; " + reason
		}
	}
	reason += fmt.Sprintf("; kept %d", r.GapIndex+1)
	if s.p.Factor > 0 {
		reason += fmt.Sprintf(" scaled by factor %g", s.p.Factor)
	}
	reason += fmt.Sprintf(" + buffer %d", s.p.Buffer)
	if len(notes) > 0 {
		reason += "; " + strings.Join(notes, "; ")
	}
	return ctxsel.Cut{End: r.K, Decision: d, Reason: reason, Guards: guards}, nil
}
