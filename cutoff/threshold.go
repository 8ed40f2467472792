package cutoff

import (
	"fmt"
	"math"

	"github.com/ctxsel/ctxsel"
)

// threshold keeps every passage scoring at least min.
type threshold struct{ min float64 }

func (s threshold) Name() string               { return "threshold" }
func (s threshold) Params() map[string]float64 { return map[string]float64{"min": s.min} }

func (s threshold) Cut(c *ctxsel.Curve) (ctxsel.Cut, error) {
	k := 0
	for _, x := range c.Scores() {
		if x >= s.min {
			k++
		}
	}
	return ctxsel.Cut{End: k, Decision: ctxsel.Decision{Kind: "threshold", Rank: k - 1, Value: s.min},
		Reason: fmt.Sprintf("%d of %d passages score at least %.4g", k, c.Len(), s.min)}, nil
}

// topP turns scores into a softmax distribution at a temperature and keeps
// the smallest top set whose probability mass reaches p, but at least minK.
type topP struct {
	p, temperature float64
	minK           int
}

func (s topP) Name() string { return "topp" }
func (s topP) Params() map[string]float64 {
	return map[string]float64{"p": s.p, "keep_min": float64(s.minK), "temperature": s.temperature}
}

// TopPK returns how many top-ranked passages reach softmax mass p (at least
// minK) and the mass they hold.
func TopPK(c *ctxsel.Curve, p, temperature float64, minK int) (k int, mass float64) {
	scores := c.Scores()
	n := len(scores)
	hi := scores[0]
	for _, x := range scores {
		hi = max(hi, x)
	}
	z := 0.0
	for _, x := range scores {
		z += math.Exp((x - hi) / temperature)
	}
	for m := min(n, 32); ; m = min(n, 2*m) {
		top := c.Top(m)
		for ; k < m; k++ {
			if mass >= p && k >= minK {
				return k, mass
			}
			mass += math.Exp((scores[top[k]]-hi)/temperature) / z
		}
		if m == n {
			return n, mass
		}
	}
}

func (s topP) Cut(c *ctxsel.Curve) (ctxsel.Cut, error) {
	k, mass := TopPK(c, s.p, s.temperature, s.minK)
	return ctxsel.Cut{End: k, Decision: ctxsel.Decision{Kind: "mass", Rank: k - 1, Value: mass},
		Reason: fmt.Sprintf("softmax at temperature %.3g: the top %d hold %.3f of the mass (target %.3f, at least %d)", s.temperature, k, mass, s.p, s.minK)}, nil
}
