package ctxsel

import (
	"context"
	"fmt"
)

// TextQuery is what a TextSelector reads: the question, the scored
// candidates and their texts, and the caps and order the result must obey.
type TextQuery struct {
	Question string
	// Curve holds the candidates (ids, scores, token counts).
	Curve *Curve
	// Texts[i] is the text of Curve.Candidate(i); one per candidate.
	Texts []string
	// Headers, when set, holds one per candidate: the context line its
	// source knows for it (an index's document title and section), for a
	// selector that shows each passage under a header when the text has
	// none of its own; "" for none.
	Headers []string
	// Above, when set, holds one per candidate: the lines of its document
	// above its text that the text needs to be read (chunk.Above: the
	// heading path over it and, when it starts among a table's rows, the
	// table's header), "\n"-joined; "" for none. A selector that prunes
	// sends them before what it keeps of the passage.
	Above []string
	// AboveOf, when set instead of Above, gives the lines above the
	// candidates a selector reads, when it reads them: one string per
	// index asked, in order. A source that reads them at a cost (an index
	// reading its documents, a collection asked over the network) gives
	// them this way, so that a selector reading 20 of 1,000 candidates asks
	// for 20 (AboveFor reads either).
	AboveOf func(ctx context.Context, indices []int) ([]string, error)
	Caps    Caps
	Order   Order
	// Pool is set when Curve holds only the passages a strategy kept
	// (Compose): the whole curve they were cut from, PoolIndex[i] the
	// index in Pool of Curve's passage i. A selector whose features read
	// the curve's shape (a passage's rank, the spread of the scores)
	// reads it from Pool, so that it sees the same values composed as
	// alone.
	Pool      *Curve
	PoolIndex []int
}

// Validate reports a query a TextSelector cannot work on.
func (q TextQuery) Validate() error {
	if q.Curve == nil || q.Curve.Len() == 0 {
		return invalidf("no candidates")
	}
	if len(q.Texts) != q.Curve.Len() {
		return invalidf("%d texts for %d candidates", len(q.Texts), q.Curve.Len())
	}
	if q.Headers != nil && len(q.Headers) != q.Curve.Len() {
		return invalidf("%d headers for %d candidates", len(q.Headers), q.Curve.Len())
	}
	if q.Above != nil && len(q.Above) != q.Curve.Len() {
		return invalidf("%d above texts for %d candidates", len(q.Above), q.Curve.Len())
	}
	if q.Above != nil && q.AboveOf != nil {
		return invalidf("both the lines above the candidates and a function giving them")
	}
	if q.Pool != nil {
		if len(q.PoolIndex) != q.Curve.Len() {
			return invalidf("%d pool indices for %d candidates", len(q.PoolIndex), q.Curve.Len())
		}
		for _, j := range q.PoolIndex {
			if j < 0 || j >= q.Pool.Len() {
				return invalidf("pool index %d outside the pool of %d", j, q.Pool.Len())
			}
		}
	}
	return q.Caps.Validate()
}

// AboveFor is the lines above each candidate of indices (Above, or what
// AboveOf gives for them); nil when the query has neither.
func (q TextQuery) AboveFor(ctx context.Context, indices []int) ([]string, error) {
	for _, i := range indices {
		if i < 0 || i >= q.Curve.Len() {
			return nil, invalidf("candidate %d outside the %d candidates", i, q.Curve.Len())
		}
	}
	switch {
	case q.Above != nil:
		out := make([]string, len(indices))
		for k, i := range indices {
			out[k] = q.Above[i]
		}
		return out, nil
	case q.AboveOf != nil && len(indices) > 0:
		out, err := q.AboveOf(ctx, indices)
		if err != nil {
			return nil, fmt.Errorf("the lines above the passages: %w", err)
		}
		if len(out) != len(indices) {
			return nil, fmt.Errorf("the lines above the passages: %d for %d passages", len(out), len(indices))
		}
		return out, nil
	}
	return nil, nil
}

// TextSelector is the second kind of selector: one that reads the question
// and the passages' texts, and may call a model (an LLM picker, an
// LLM-routed choice). Unlike a Strategy it is not pure: it takes a context
// and may fail for reasons outside its input (a server down, a deadline).
// Implementations are safe for concurrent use and must return a Selection
// obeying q.Caps and q.Order, with Explanation saying what was decided and
// why (including any fallback taken).
type TextSelector interface {
	Name() string
	SelectTexts(ctx context.Context, q TextQuery) (Selection, error)
}

// SelectorUsage is what a TextSelector's own model calls cost, apart from
// any reader's.
type SelectorUsage struct {
	// Calls is how many model calls were made, a failed call included.
	Calls                          int
	PromptTokens, CompletionTokens int
	// Invalid says why the model's output was unusable and a fallback
	// selected instead; "" when it was used.
	Invalid string
	// CallError is set when the model call itself failed (auth, network,
	// the server), not its output: the fallback selected, but the caller's
	// configuration or the service needs attention. Its text may quote the
	// service's error body: log it, never show it to a remote client.
	CallError error
	// Metered is set by a Selector running a MeteredSelector: it reports
	// its own model usage, zero calls included.
	Metered bool
}

// MeteredSelector is a TextSelector that also reports its own model usage
// (an LLM picker), so that eval and ask can report it apart from the
// reader's.
type MeteredSelector interface {
	TextSelector
	SelectMetered(ctx context.Context, q TextQuery) (Selection, SelectorUsage, error)
}

// StrategyTexts lets a pure Strategy serve where a TextSelector is
// expected: it ignores the question and the texts and selects as Select.
func StrategyTexts(s Strategy) TextSelector { return strategyTexts{s} }

type strategyTexts struct{ s Strategy }

func (a strategyTexts) Name() string { return a.s.Name() }

func (a strategyTexts) SelectTexts(ctx context.Context, q TextQuery) (Selection, error) {
	if err := ctx.Err(); err != nil {
		return Selection{}, fmt.Errorf("select %s: %w", a.s.Name(), err)
	}
	if err := q.Validate(); err != nil {
		return Selection{}, err
	}
	return Select(q.Curve, a.s, q.Caps, q.Order)
}
