package cutoff

import (
	"fmt"

	"github.com/ctxsel/ctxsel"
)

// KneeResult is what the knee strategy decided.
type KneeResult struct {
	// K is how many top-ranked passages to keep (n when no knee is found).
	K int
	// Found reports whether the cutoff-th local maximum exists.
	Found bool
	// Height is the normalised curve's distance above the diagonal at the
	// knee: how sharply the curve bends there.
	Height float64
}

// Knee cuts where the similarity curve bends, the autocut idea Weaviate uses:
// sort descending, map rank to x = i/(n−1) and score to
// y = (s₀ − sᵢ)/(s₀ − s_last), both in [0, 1], take d = y − x, and cut before
// the cutoff-th local maximum of d (a point above both neighbours; the last
// point is compared with the two before it). Such a maximum is the first
// passage after a drop steeper than the curve's average, so the passages
// before it are kept. Fewer than three scores, all-equal scores, or no such
// maximum select everything.
//
// Only the top of the curve is sorted, growing by doubling until the knee is
// found, so a call usually costs O(n).
func Knee(scores []float64, cutoff int) (KneeResult, error) {
	if cutoff < 1 {
		return KneeResult{}, fmt.Errorf("%w: knee cutoff=%d must be at least 1", ctxsel.ErrInvalidInput, cutoff)
	}
	lo, hi, err := finiteRange(scores)
	if err != nil {
		return KneeResult{}, err
	}
	n := len(scores)
	all := KneeResult{K: n}
	if n < 3 {
		return all, nil
	}
	if hi == lo {
		return all, nil
	}
	buf := getFloats(n)
	defer putFloats(buf)
	copy(*buf, scores)
	p := prefix{buf: *buf}
	span, last := hi-lo, float64(n-1)
	d := func(i int) float64 { return (hi-p.buf[i])/span - float64(i)/last }
	p.extend(max(64, n/64)) // on long noisy curves the knee sits a few hundred ranks down
	found := 0
	for i := 1; i < n; i++ {
		if i+1 >= p.sorted && p.sorted < n {
			p.extend(2 * p.sorted)
		}
		var peak bool
		if i == n-1 {
			peak = d(i) > d(i-1) && d(i) > d(i-2)
		} else {
			peak = d(i) > d(i-1) && d(i) > d(i+1)
		}
		if peak {
			found++
			if found >= cutoff {
				return KneeResult{K: i, Found: true, Height: d(i)}, nil
			}
		}
	}
	return all, nil
}

// KneeReference is the plain sort-then-scan form of Knee, for tests and
// benchmarks.
func KneeReference(scores []float64, cutoff int) (KneeResult, error) {
	if err := checkScores(scores); err != nil {
		return KneeResult{}, err
	}
	if cutoff < 1 {
		return KneeResult{}, fmt.Errorf("%w: knee cutoff=%d must be at least 1", ctxsel.ErrInvalidInput, cutoff)
	}
	s := ctxsel.Descending(scores)
	n := len(s)
	if n < 3 || s[0] == s[n-1] {
		return KneeResult{K: n}, nil
	}
	d := make([]float64, n)
	for i := range s {
		d[i] = (s[0]-s[i])/(s[0]-s[n-1]) - float64(i)/float64(n-1)
	}
	found := 0
	for i := 1; i < n; i++ {
		last := i == n-1
		if (last && d[i] > d[i-1] && d[i] > d[i-2]) || (!last && d[i] > d[i-1] && d[i] > d[i+1]) {
			if found++; found >= cutoff {
				return KneeResult{K: i, Found: true, Height: d[i]}, nil
			}
		}
	}
	return KneeResult{K: n}, nil
}

type knee struct {
	cutoff int
	guard  bool
}

func (s knee) Name() string { return "knee" }
func (s knee) Params() map[string]float64 {
	g := 0.0
	if s.guard {
		g = 1
	}
	return map[string]float64{"cutoff": float64(s.cutoff), "head_guard": g}
}

func (s knee) Cut(c *ctxsel.Curve) (ctxsel.Cut, error) {
	r, err := Knee(c.Scores(), s.cutoff)
	if err != nil {
		return ctxsel.Cut{}, err
	}
	if !r.Found {
		return ctxsel.Cut{End: r.K, Decision: ctxsel.Decision{Kind: "all", Rank: r.K - 1},
			Reason: fmt.Sprintf("no knee number %d on the curve (fewer than 3 passages, all scores equal, or a curve without bends): kept all %d", s.cutoff, r.K)}, nil
	}
	// The head guard: a knee after rank 0 keeps only the best passage. One
	// outlying top score squeezes the rest of the normalised curve into a
	// sliver, so that knee says only that the best passage stands apart; the
	// next knee is where the rest of the curve bends.
	var guards []string
	note := ""
	if r.K == 1 {
		if r2, err := Knee(c.Scores(), s.cutoff+1); err == nil && r2.Found {
			if s.guard {
				note = fmt.Sprintf("; head guard: knee %d fell after rank 0 (height %.3g), which would keep only the best passage, so knee %d was used (head_guard=0 keeps the first)", s.cutoff, r.Height, s.cutoff+1)
				r, guards = r2, []string{"head_guard"}
			} else {
				note = fmt.Sprintf("; the knee falls after rank 0, so only the best passage is kept; head_guard=1 would use knee %d (keeping %d)", s.cutoff+1, r2.K)
				guards = []string{"head_gap"}
			}
		}
	}
	top := c.Top(r.K + 1)
	above, below := c.Scores()[top[r.K-1]], c.Scores()[top[r.K]]
	return ctxsel.Cut{
		End:      r.K,
		Decision: ctxsel.Decision{Kind: "knee", Rank: r.K - 1, Value: r.Height, Above: &above, Below: &below},
		Reason: fmt.Sprintf("knee %d of the normalised curve after rank %d (scores %.4g → %.4g, height %.3g above the diagonal): kept %d",
			s.cutoff, r.K-1, above, below, r.Height, r.K) + note,
		Guards: guards,
	}, nil
}
