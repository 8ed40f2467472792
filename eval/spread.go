package eval

import (
	"math"
	"slices"

	"github.com/ctxsel/ctxsel"
)

// TokenSpread is how a strategy's tokens sent spread over the questions:
// a mean hides whether a budget is filled on every question or spent on
// the few that need it. Percentiles are nearest-rank over the questions.
type TokenSpread struct {
	P10 int `json:"p10"`
	P50 int `json:"p50"`
	P90 int `json:"p90"`
	Max int `json:"max"`
	// Budgeted is how many questions' selections name a token budget (a
	// budget or tokens parameter, or a max_tokens cap: the least of
	// them); UnderHalf is the share of those that sent less than half of
	// it. Both are absent for a strategy without a budget (top-k).
	Budgeted  int      `json:"budgeted,omitempty"`
	UnderHalf *float64 `json:"under_half_budget,omitempty"`
}

// tokenSpread is strategy idx's TokenSpread over the questions; nil for
// none.
func tokenSpread(qs []questionStats, idx int) *TokenSpread {
	if len(qs) == 0 {
		return nil
	}
	toks := make([]int, len(qs))
	under := 0
	var sp TokenSpread
	for i := range qs {
		s := &qs[i].perStrategy[idx]
		toks[i] = s.tokens
		if b := selectionBudget(s.sel); b > 0 {
			sp.Budgeted++
			if 2*s.tokens < b {
				under++
			}
		}
	}
	slices.Sort(toks)
	rank := func(p float64) int { return toks[max(0, int(math.Ceil(p*float64(len(toks))))-1)] }
	sp.P10, sp.P50, sp.P90, sp.Max = rank(0.1), rank(0.5), rank(0.9), toks[len(toks)-1]
	if sp.Budgeted > 0 {
		share := float64(under) / float64(sp.Budgeted)
		sp.UnderHalf = &share
	}
	return &sp
}

// selectionBudget is the token budget a selection was made within: the
// least of its strategy's budget or tokens parameter (evidence:budget=N,
// budget:tokens=N) and its max_tokens cap; 0 when it names none.
func selectionBudget(sel ctxsel.Selection) int {
	b := 0
	least := func(v int) {
		if v > 0 && (b == 0 || v < b) {
			b = v
		}
	}
	for _, name := range []string{"budget", "tokens"} {
		if v, ok := sel.Explanation.Params[name]; ok && v >= 1 && v <= math.MaxInt32 {
			least(int(v))
		}
	}
	least(sel.Explanation.Caps.MaxTokens)
	return b
}
