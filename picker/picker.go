// Package picker is Context-Picker's inference and prompts (Zhu et
// al., "Context-Picker", ../shared/papers/context-picker.txt): an LLM reads
// the best candidates within a token budget and returns a minimal
// sufficient evidence set with a rationale. The Picker is a
// ctxsel.TextSelector: it reads texts, calls a model and may fail, unlike
// the pure score-only strategies. Its output is validated against the
// offered ids; an invalid answer never fails the request but falls back to
// a score-only strategy, and the explanation says so. Eq. 6, the reward of
// its RL training, is package picker/reward (training-only).
package picker

import (
	"context"
	"fmt"
	"slices"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/llm"
)

// Picker is the LLM evidence picker. It is safe for concurrent use.
type Picker struct {
	cfg    Config
	client llm.Client
	// fallback and its caps: cfg.Fallback, built once
	fallback     ctxsel.Strategy
	fallbackCaps ctxsel.Caps
}

// New returns a picker calling client under cfg (a Config from ParseSpec).
func New(client llm.Client, cfg Config) (*Picker, error) { return NewWith(client, cfg, nil) }

// NewWith is New with the dependencies of the fallback strategy
// (ctxsel.NewWith's: a band fallback's policy, ldar.DepPolicy); nil: none.
func NewWith(client llm.Client, cfg Config, deps ctxsel.Deps) (*Picker, error) {
	if client == nil {
		return nil, invalidf("picker: no LLM client")
	}
	if cfg.Budget < 1 {
		return nil, invalidf("picker: budget %d must be positive", cfg.Budget)
	}
	if cfg.Fallback == "" {
		cfg.Fallback = DefaultFallback
	}
	sp, err := ctxsel.ParseSpec(cfg.Fallback)
	if err != nil {
		return nil, fmt.Errorf("picker: fallback: %w", err)
	}
	st, caps, err := ctxsel.NewWith(sp, deps)
	if err != nil {
		return nil, fmt.Errorf("picker: fallback: %w", err)
	}
	return &Picker{cfg: cfg, client: client, fallback: st, fallbackCaps: caps}, nil
}

// Name implements ctxsel.TextSelector.
func (p *Picker) Name() string { return "picker" }

// Config is the picker's configuration.
func (p *Picker) Config() Config { return p.cfg }

// String is the picker's spec, every setting written out: how reports name
// it (two pickers with different settings are two rows).
func (p *Picker) String() string { return p.cfg.String() }

// Result is one pick with what it cost and whether the model's answer was
// used.
type Result struct {
	Selection ctxsel.Selection
	// Valid is false when the answer (or the call) was unusable and the
	// fallback selected instead; Invalid then says why.
	Valid   bool
	Invalid string
	// Rationale is the model's rationale of a valid pick.
	Rationale string
	// Offered is how many candidates the prompt showed.
	Offered int
	// PromptTokens and CompletionTokens are the picker call's own usage,
	// as the server reported it.
	PromptTokens, CompletionTokens int
	// Raw is the model's answer as received.
	Raw string
	// CallErr is the model call's own failure (auth, network, the server),
	// when it rather than the model's output made the fallback select:
	// Invalid then names only its kind (llm.Failure), as the explanation
	// may reach a remote client; CallErr, for the operator, may quote
	// the server's error body.
	CallErr error
}

// SelectTexts implements ctxsel.TextSelector.
func (p *Picker) SelectTexts(ctx context.Context, q ctxsel.TextQuery) (ctxsel.Selection, error) {
	r, err := p.Pick(ctx, q)
	return r.Selection, err
}

// SelectMetered implements ctxsel.MeteredSelector: the selection with the
// picker call's own usage (no call when no candidate fits the budget).
func (p *Picker) SelectMetered(ctx context.Context, q ctxsel.TextQuery) (ctxsel.Selection, ctxsel.SelectorUsage, error) {
	r, err := p.Pick(ctx, q)
	u := ctxsel.SelectorUsage{PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, Invalid: r.Invalid, CallError: r.CallErr}
	if r.Offered > 0 {
		u.Calls = 1
	}
	return r.Selection, u, err
}

// Offer returns the input indices of the candidates the prompt shows: the
// best by score while their tokens fit in the budget, at most maxOffered,
// in the configured order.
func (p *Picker) Offer(c *ctxsel.Curve) []int {
	var idx []int
	used := 0
	for _, i := range c.Top(min(c.Len(), maxOffered)) {
		t := c.TokensOf(i)
		if used+t > p.cfg.Budget {
			break
		}
		used += t
		idx = append(idx, i)
	}
	if p.cfg.Order == ctxsel.DocumentOrder {
		slices.Sort(idx)
	}
	return idx
}

// Pick asks the model and validates its answer. Only a cancelled context
// or bad input is an error: a failed call or an invalid answer falls back.
func (p *Picker) Pick(ctx context.Context, q ctxsel.TextQuery) (Result, error) {
	if err := q.Validate(); err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, fmt.Errorf("picker: %w", err)
	}
	idx := p.Offer(q.Curve)
	res := Result{Offered: len(idx)}
	if len(idx) == 0 {
		return p.fallBack(q, res, fmt.Sprintf("no candidate fits the budget of %d tokens", p.cfg.Budget))
	}
	offered := make([]Offered, len(idx))
	byID := make(map[string]int, len(idx))
	for j, i := range idx {
		id := q.Curve.Candidate(i).ID
		offered[j] = Offered{ID: id, Text: q.Texts[i]}
		byID[id] = i
	}
	prompt := Prompt(StageTest, q.Question, offered)
	resp, err := p.client.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: "user", Content: prompt}}, JSON: true})
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, fmt.Errorf("picker: %w", err)
		}
		res.CallErr = err
		return p.fallBack(q, res, "call failed: "+llm.Failure(err))
	}
	res.PromptTokens, res.CompletionTokens, res.Raw = resp.PromptTokens, resp.CompletionTokens, resp.Content
	if resp.FinishReason == "length" {
		return p.fallBack(q, res, "output cut off at the token limit")
	}
	out, err := Parse(resp.Content, byID)
	if err != nil {
		return p.fallBack(q, res, Reason(err))
	}
	set := make([]int, len(out.IDs))
	for j, id := range out.IDs {
		set[j] = byID[id]
	}
	rationale := clip(out.Rationale, maxRationale)
	reason := "picker chose " + plural(len(set), "passage") + " of " + plural(len(idx), "offered")
	if rationale != "" {
		reason += ": " + rationale
	} else {
		reason += " (no rationale given)"
	}
	sel, err := ctxsel.SelectSet(q.Curve, set, q.Caps, q.Order, ctxsel.Explanation{
		Strategy: "picker", Params: p.params(),
		Decision: ctxsel.Decision{Kind: "pick", Rank: len(idx) - 1, Value: float64(p.cfg.Budget)},
		Reason:   reason,
	})
	if err != nil {
		return Result{}, fmt.Errorf("picker: %w", err)
	}
	res.Selection, res.Valid, res.Rationale = sel, true, rationale
	return res, nil
}

// fallBack selects with the fallback strategy and says why.
func (p *Picker) fallBack(q ctxsel.TextQuery, res Result, why string) (Result, error) {
	st := p.fallback
	caps := mergeCaps(p.fallbackCaps, q.Caps)
	sel, err := ctxsel.Select(q.Curve, st, caps, q.Order)
	if err != nil {
		return Result{}, fmt.Errorf("picker: fallback %s: %w", p.cfg.Fallback, err)
	}
	sel.Explanation.Reason = fmt.Sprintf("picker output invalid: %s; fell back to %s: %s", why, st.Name(), sel.Explanation.Reason)
	sel.Explanation.Strategy = "picker"
	res.Selection, res.Valid, res.Invalid = sel, false, why
	return res, nil
}

func (p *Picker) params() map[string]float64 {
	return map[string]float64{"budget": float64(p.cfg.Budget)}
}

// mergeCaps keeps the tighter of two caps.
func mergeCaps(a, b ctxsel.Caps) ctxsel.Caps {
	tight := func(x, y int) int {
		switch {
		case x == 0:
			return y
		case y == 0:
			return x
		}
		return min(x, y)
	}
	return ctxsel.Caps{MinK: max(a.MinK, b.MinK), MaxK: tight(a.MaxK, b.MaxK), MaxTokens: tight(a.MaxTokens, b.MaxTokens)}
}

func plural(n int, s string) string {
	if n != 1 && s == "passage" {
		s += "s"
	}
	return fmt.Sprintf("%d %s", n, s)
}

var _ ctxsel.TextSelector = (*Picker)(nil)
