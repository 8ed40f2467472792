package ctxsel

import "context"

// Selector is a resolved spec made runnable (Resolved.Runnable): a
// strategy with its caps, a text selector, or a composition of the two.
// Every caller runs it the same way, whatever the spec named; only an
// answering route, which needs the reader's reply, is a kind apart.
type Selector interface {
	// Name is what runs: the strategy's or the text selector's name.
	Name() string
	// ReadsTexts reports whether Select reads the query's question and
	// texts. One that does not selects from the scores alone (a
	// strategy): a query may leave them out, it keeps whole passages (no
	// Evidence), never waits on I/O, and is fitted to a window afterwards
	// rather than packing within it.
	ReadsTexts() bool
	// Select selects from q, q.Caps tightening the spec's own caps; the
	// usage is the selector's own model calls (zero for one that calls
	// none). A strategy ignores ctx, as Select does.
	Select(ctx context.Context, q TextQuery) (Selection, SelectorUsage, error)
}

// Runnable returns what r resolved to as a Selector: a strategy with its
// caps, or a text selector (metered when it is a MeteredSelector). It is
// nil for an answering route and for the zero Resolved.
func (r Resolved) Runnable() Selector {
	switch {
	case r.Selector != nil:
		return textRunner{r.Selector}
	case r.Strategy != nil:
		return strategyRunner{r.Strategy, r.Caps}
	}
	return nil
}

// strategyRunner runs a strategy over the scores: Select with the spec's
// caps tightened by the query's.
type strategyRunner struct {
	s    Strategy
	caps Caps
}

func (a strategyRunner) Name() string     { return a.s.Name() }
func (a strategyRunner) ReadsTexts() bool { return false }

func (a strategyRunner) Select(_ context.Context, q TextQuery) (Selection, SelectorUsage, error) {
	sel, err := Select(q.Curve, a.s, tighter(a.caps, q.Caps), q.Order)
	return sel, SelectorUsage{}, err
}

// textRunner runs a text selector, its own usage reported when it meters
// it.
type textRunner struct{ ts TextSelector }

func (a textRunner) Name() string     { return a.ts.Name() }
func (a textRunner) ReadsTexts() bool { return true }

func (a textRunner) Select(ctx context.Context, q TextQuery) (Selection, SelectorUsage, error) {
	if m, ok := a.ts.(MeteredSelector); ok {
		sel, u, err := m.SelectMetered(ctx, q)
		u.Metered = true
		return sel, u, err
	}
	sel, err := a.ts.SelectTexts(ctx, q)
	return sel, SelectorUsage{}, err
}

// tighter combines two sets of caps: the larger minimum, the smaller of
// the non-zero maxima; a query's max_k below the spec's min_k wins over
// it (a server's top_n), while the spec's own caps are left as they are.
func tighter(a, b Caps) Caps {
	lower := func(x, y int) int {
		if x == 0 || (y != 0 && y < x) {
			return y
		}
		return x
	}
	c := Caps{MinK: max(a.MinK, b.MinK), MaxK: lower(a.MaxK, b.MaxK), MaxTokens: lower(a.MaxTokens, b.MaxTokens)}
	if b.MaxK > 0 {
		c.MinK = min(c.MinK, c.MaxK)
	}
	return c
}
