package ctxsel

import (
	"fmt"
	"slices"
)

// FitWindow cuts a selection to a reader's context window: it keeps the
// best-scoring selected passages that fit in budget tokens, counting each
// passage as its tokens plus perPassage (the prompt's formatting around it),
// stops before the first passage that would cross the budget, and returns
// the kept passages in the given order. A pruned passage (Selection.Evidence)
// counts the tokens of its pruned text. The explanation's Reason says what
// was dropped. A selection that already fits is returned unchanged except
// for its order. Pure: no I/O.
func FitWindow(c *Curve, sel Selection, budget, perPassage int, order Order) (Selection, error) {
	if c == nil || c.Len() == 0 {
		return Selection{}, invalidf("no candidates")
	}
	if budget <= 0 || perPassage < 0 {
		return Selection{}, invalidf("window budget %d must be positive (per-passage overhead %d)", budget, perPassage)
	}
	rank := make([]int, c.Len())
	for r, idx := range c.Top(c.Len()) {
		rank[idx] = r
	}
	ranked := slices.Clone(sel.Indices)
	for _, idx := range ranked {
		if idx < 0 || idx >= c.Len() {
			return Selection{}, invalidf("selection index %d out of range [0, %d)", idx, c.Len())
		}
	}
	slices.SortFunc(ranked, func(a, b int) int { return rank[a] - rank[b] })
	// a pruned passage costs what is sent of it
	evidence := map[int]Evidence{}
	if sel.Evidence != nil {
		if len(sel.Evidence) != len(sel.Indices) {
			return Selection{}, invalidf("selection has %d evidence entries for %d passages", len(sel.Evidence), len(sel.Indices))
		}
		for i, idx := range sel.Indices {
			evidence[idx] = sel.Evidence[i]
		}
	}
	cost := func(idx int) int {
		if e, ok := evidence[idx]; ok {
			return e.Tokens
		}
		return c.TokensOf(idx)
	}
	kept, used, tokens := 0, 0, 0
	for _, idx := range ranked {
		t := cost(idx)
		if used+t+perPassage > budget {
			break
		}
		used += t + perPassage
		tokens += t
		kept++
	}
	out := sel
	out.Indices = arrange(ranked[:kept], order)
	out.IDs = make([]string, len(out.Indices))
	for i, idx := range out.Indices {
		out.IDs[i] = c.cands[idx].ID
	}
	if sel.Evidence != nil {
		out.Evidence = make([]Evidence, len(out.Indices))
		for i, idx := range out.Indices {
			out.Evidence[i] = evidence[idx]
		}
	}
	out.K, out.Tokens = kept, tokens
	out.Explanation.Tokens = tokens
	if dropped := len(ranked) - kept; dropped > 0 {
		out.Explanation.Reason += fmt.Sprintf("; reader window (%d tokens for passages): kept the best %d passages (%d tokens), dropped %d lower-scoring ones (%d tokens)",
			budget, kept, tokens, dropped, sel.Tokens-tokens)
		out.Explanation.CapsApplied = append(slices.Clone(sel.Explanation.CapsApplied), "window")
	}
	return out, nil
}
