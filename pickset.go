package ctxsel

import "slices"

// SelectSet turns a chosen set of candidates (input indices, any order) into
// a Selection obeying caps and order: the form a TextSelector that picks
// passages by reading them (rather than cutting the ranking) returns. The
// set is ranked by score; max_k keeps the best-ranked, max_tokens stops
// before the passage that would cross it, and min_k tops the set up with
// the best-ranked candidates outside it. ex supplies the strategy name,
// params, decision and reason; the counts are filled in here.
func SelectSet(c *Curve, set []int, caps Caps, order Order, ex Explanation) (Selection, error) {
	if c == nil || c.Len() == 0 {
		return Selection{}, invalidf("no candidates")
	}
	if err := caps.Validate(); err != nil {
		return Selection{}, err
	}
	n := c.Len()
	in := make(map[int]bool, len(set))
	for _, i := range set {
		if i < 0 || i >= n {
			return Selection{}, invalidf("set index %d out of range [0, %d)", i, n)
		}
		if in[i] {
			return Selection{}, invalidf("set index %d given twice", i)
		}
		in[i] = true
	}
	ranked := slices.Clone(set)
	slices.SortStableFunc(ranked, compareRank(c.scores))
	strategyK := len(ranked)
	var applied []string
	if caps.MinK > 0 && len(ranked) < caps.MinK {
		for _, i := range c.Top(n) {
			if len(ranked) >= caps.MinK {
				break
			}
			if !in[i] {
				ranked = append(ranked, i)
				in[i] = true
			}
		}
		slices.SortStableFunc(ranked, compareRank(c.scores))
		applied = append(applied, "min_k")
	}
	if caps.MaxK > 0 && len(ranked) > caps.MaxK {
		ranked = ranked[:caps.MaxK]
		applied = append(applied, "max_k")
	}
	tokens := 0
	for i, idx := range ranked {
		t := c.TokensOf(idx)
		if caps.MaxTokens > 0 && tokens+t > caps.MaxTokens {
			ranked = ranked[:i]
			applied = append(applied, "max_tokens")
			break
		}
		tokens += t
	}
	ordered := arrange(ranked, order)
	ex.Caps, ex.N, ex.StrategyK, ex.Start, ex.K = caps, n, strategyK, 0, len(ordered)
	ex.CapsApplied, ex.Tokens, ex.TotalTokens = applied, tokens, c.TotalTokens()
	sel := Selection{IDs: make([]string, len(ordered)), Indices: ordered, K: len(ordered), Tokens: tokens, Explanation: ex}
	for i, idx := range ordered {
		sel.IDs[i] = c.cands[idx].ID
	}
	return sel, nil
}
