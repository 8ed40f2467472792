package cutoff

import (
	"fmt"

	"github.com/ctxsel/ctxsel"
)

// topK keeps the k best passages: the fixed baseline every paper compares to.
type topK struct{ k int }

func (s topK) Name() string               { return "topk" }
func (s topK) Params() map[string]float64 { return map[string]float64{"k": float64(s.k)} }

func (s topK) Cut(c *ctxsel.Curve) (ctxsel.Cut, error) {
	k := min(s.k, c.Len())
	return ctxsel.Cut{End: k, Decision: ctxsel.Decision{Kind: "fixed", Rank: k - 1, Value: float64(s.k)},
		Reason: fmt.Sprintf("fixed top-%d: kept %d of %d", s.k, k, c.Len())}, nil
}

// full keeps everything: the long-context baseline.
type full struct{}

func (full) Name() string               { return "full" }
func (full) Params() map[string]float64 { return map[string]float64{} }
func (full) Cut(c *ctxsel.Curve) (ctxsel.Cut, error) {
	return ctxsel.Cut{End: c.Len(), Decision: ctxsel.Decision{Kind: "all", Rank: c.Len() - 1},
		Reason: fmt.Sprintf("full context: kept all %d", c.Len())}, nil
}

// budget adds passages in rank order and stops before the first one that
// would push the total past the budget (the reference semantics: a later,
// shorter passage is not used to fill the remainder).
type budget struct{ tokens int }

func (s budget) Name() string               { return "budget" }
func (s budget) Params() map[string]float64 { return map[string]float64{"tokens": float64(s.tokens)} }

func (s budget) Cut(c *ctxsel.Curve) (ctxsel.Cut, error) {
	k, used := BudgetK(c, s.tokens)
	reason := fmt.Sprintf("token budget %d: kept %d passages, %d tokens", s.tokens, k, used)
	if k < c.Len() {
		next := c.TokensOf(c.Top(k + 1)[k])
		reason += fmt.Sprintf("; the next passage (%d tokens) would cross it", next)
	}
	return ctxsel.Cut{End: k, Decision: ctxsel.Decision{Kind: "budget", Rank: k - 1, Value: float64(s.tokens)}, Reason: reason}, nil
}

// BudgetK returns how many top-ranked passages fit in a token budget under
// the stop-before-crossing rule, and their token total.
func BudgetK(c *ctxsel.Curve, tokens int) (k, used int) {
	n := c.Len()
	for m := min(n, 32); ; m = min(n, 2*m) {
		top := c.Top(m)
		for ; k < m; k++ {
			t := c.TokensOf(top[k])
			if used+t > tokens {
				return k, used
			}
			used += t
		}
		if m == n {
			return k, used
		}
	}
}

// TopK is fixed top-k as a value, for callers that compose strategies (the
// steps of Self-Route). k < 1 keeps one passage.
func TopK(k int) ctxsel.Strategy { return topK{k: max(1, k)} }
