package ctxsel

import (
	"context"
	"fmt"
	"slices"
)

// Compose is a text selector that first cuts the curve with a strategy
// (and its caps), then lets then select among the passages it kept, as
// Resolve builds "topk:k=30+picker": the strategy bounds what a costly
// selector reads. then sees the kept passages as a curve of their own, in
// input order, with the query's question, headers, caps and order, and
// the whole curve as the query's Pool (PoolIndex maps them); the result is
// over the whole curve (indices, N and total tokens), and its reason says
// what the strategy kept first. name is the composition's spec. When then
// is a MeteredSelector, so is the composition.
func Compose(first Strategy, caps Caps, then TextSelector, name string) TextSelector {
	c := &composed{first: first, caps: caps, then: then, name: name}
	if m, ok := then.(MeteredSelector); ok {
		return composedMetered{c, m}
	}
	return c
}

type composed struct {
	first Strategy
	caps  Caps
	then  TextSelector
	name  string
}

func (c *composed) Name() string   { return c.name }
func (c *composed) String() string { return c.name }

func (c *composed) SelectTexts(ctx context.Context, q TextQuery) (Selection, error) {
	sub, kept, note, err := c.cut(ctx, q)
	if err != nil {
		return Selection{}, err
	}
	sel, err := c.then.SelectTexts(ctx, sub)
	if err != nil {
		return Selection{}, err
	}
	return lift(q.Curve, sel, kept, note)
}

// cut applies the strategy and returns the query over the kept passages,
// their indices in q.Curve (ascending) and a note on what was kept.
func (c *composed) cut(ctx context.Context, q TextQuery) (TextQuery, []int, string, error) {
	if err := ctx.Err(); err != nil {
		return TextQuery{}, nil, "", fmt.Errorf("select %s: %w", c.name, err)
	}
	if err := q.Validate(); err != nil {
		return TextQuery{}, nil, "", err
	}
	stage, err := Select(q.Curve, c.first, c.caps, RankOrder)
	if err != nil {
		return TextQuery{}, nil, "", fmt.Errorf("select %s: %w", c.name, err)
	}
	if stage.K == 0 {
		return TextQuery{}, nil, "", invalidf("select %s: %s kept no passage for %s to read (%s)", c.name, c.first.Name(), c.then.Name(), stage.Explanation.Reason)
	}
	kept := slices.Sorted(slices.Values(stage.Indices))
	cands := make([]Candidate, len(kept))
	for i, idx := range kept {
		cands[i] = q.Curve.cands[idx]
	}
	texts, headers, above := pickOf(q.Texts, kept), pickOf(q.Headers, kept), pickOf(q.Above, kept)
	curve, err := NewCurve(cands)
	if err != nil {
		return TextQuery{}, nil, "", err
	}
	note := fmt.Sprintf("%s kept %d of %d passages (%d tokens): %s; then %s: ", c.first.Name(), stage.K, q.Curve.Len(), stage.Tokens, stage.Explanation.Reason, c.then.Name())
	// The pool is the outermost curve: a composition inside another maps
	// its indices through.
	pool, poolIndex := q.Curve, kept
	if q.Pool != nil {
		pool, poolIndex = q.Pool, make([]int, len(kept))
		for i, idx := range kept {
			poolIndex[i] = q.PoolIndex[idx]
		}
	}
	var aboveOf func(context.Context, []int) ([]string, error)
	if of := q.AboveOf; of != nil {
		// asked by the kept passages' indices: the source's are kept's
		aboveOf = func(ctx context.Context, indices []int) ([]string, error) {
			outer := make([]int, len(indices))
			for i, j := range indices {
				if j < 0 || j >= len(kept) {
					return nil, invalidf("candidate %d outside the %d kept", j, len(kept))
				}
				outer[i] = kept[j]
			}
			return of(ctx, outer)
		}
	}
	return TextQuery{Question: q.Question, Curve: curve, Texts: texts, Headers: headers, Above: above, AboveOf: aboveOf, Caps: q.Caps, Order: q.Order, Pool: pool, PoolIndex: poolIndex}, kept, note, nil
}

// pickOf is xs[kept[0]], xs[kept[1]], …; nil for nil xs (a query's
// optional per-candidate strings stay unset).
func pickOf(xs []string, kept []int) []string {
	if xs == nil {
		return nil
	}
	out := make([]string, len(kept))
	for i, idx := range kept {
		out[i] = xs[idx]
	}
	return out
}

// lift maps a selection over the kept passages back onto the whole curve.
func lift(c *Curve, sel Selection, kept []int, note string) (Selection, error) {
	out := sel
	out.Indices = make([]int, len(sel.Indices))
	for i, j := range sel.Indices {
		if j < 0 || j >= len(kept) {
			return Selection{}, fmt.Errorf("selector returned index %d of %d kept passages", j, len(kept))
		}
		out.Indices[i] = kept[j]
	}
	out.Explanation.N = c.Len()
	out.Explanation.TotalTokens = c.TotalTokens()
	out.Explanation.Reason = note + sel.Explanation.Reason
	return out, nil
}

type composedMetered struct {
	*composed
	m MeteredSelector
}

func (c composedMetered) SelectMetered(ctx context.Context, q TextQuery) (Selection, SelectorUsage, error) {
	sub, kept, note, err := c.cut(ctx, q)
	if err != nil {
		return Selection{}, SelectorUsage{}, err
	}
	sel, u, err := c.m.SelectMetered(ctx, sub)
	if err != nil {
		return Selection{}, u, err
	}
	sel, err = lift(q.Curve, sel, kept, note)
	return sel, u, err
}
