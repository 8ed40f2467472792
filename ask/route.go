package ask

import (
	"context"
	"fmt"
	"time"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/cutoff"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/selfroute"
	"github.com/ctxsel/ctxsel/token"
)

// Route is what Self-Route did: each step's context and reply, and the
// tokens of both calls together.
type Route struct {
	// Routed is set when the reader declined the top-k and was asked again
	// with the long context.
	Routed bool        `json:"routed"`
	Steps  []RouteStep `json:"steps"`
	// InputTokens and OutputTokens sum the steps' usage.
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// RouteStep is one call of the route.
type RouteStep struct {
	K            int          `json:"k"`
	Tokens       int          `json:"tokens"`
	PromptTokens int          `json:"prompt_tokens"`
	Reply        llm.Response `json:"reply"`
}

func tmplOr(t, def llm.Template) llm.Template {
	if t == "" {
		return def
	}
	return t
}

// show makes sel the answer's selection: its passages and the prompt.
func (a *Answer) show(sel ctxsel.Selection, hits []index.Hit, tmpl llm.Template, counter token.Counter) error {
	a.Selection = sel
	a.Passages = make([]Passage, len(sel.Indices))
	ps := make([]llm.Passage, len(sel.Indices))
	for i, idx := range sel.Indices {
		a.Passages[i] = Passage{Hit: hits[idx], ID: hits[idx].ID(), Rank: idx}
		ps[i] = llm.Passage{Label: hits[idx].ID(), Text: hits[idx].Text}
	}
	var err error
	if a.Prompt, err = tmpl.Render(a.Question, llm.FormatContext(ps)); err != nil {
		return err
	}
	a.PromptTokens = counter.Count(a.Prompt)
	return nil
}

// askRoute runs Self-Route: the top-k first, then, when the reader declines,
// every candidate cut to the window in document order. The answer shows the
// step it ended with (or, on a failed call, the step that failed).
func askRoute(ctx context.Context, a *Answer, curve *ctxsel.Curve, hits []index.Hit, r selfroute.Spec, tmpl llm.Template, counter token.Counter, opts Options) error {
	top, err := ctxsel.Select(curve, cutoff.TopK(r.K), ctxsel.Caps{}, opts.Order)
	if err != nil {
		return err
	}
	window := opts.Window
	if window <= 0 {
		window = DefaultWindow
	}
	budget := llm.PassageBudget(window, llm.DefaultAnswerReserve, tmpl, a.Question, counter)
	if budget <= 0 {
		return invalidf("window of %d tokens leaves no room for passages", window)
	}
	full, err := ctxsel.Select(curve, cutoff.TopK(curve.Len()), ctxsel.Caps{}, ctxsel.RankOrder)
	if err == nil {
		full, err = ctxsel.FitWindow(curve, full, budget, llm.LabelledPassageOverhead, ctxsel.DocumentOrder)
	}
	if err != nil {
		return err
	}
	a.Route = &Route{}
	t := time.Now()
	_, err = selfroute.Route(ctx, top, full, func(ctx context.Context, sel ctxsel.Selection) (llm.Response, error) {
		if err := a.show(sel, hits, tmpl, counter); err != nil {
			return llm.Response{}, err
		}
		resp, err := llm.Ask(ctx, opts.LLM, a.Prompt)
		if err != nil {
			return resp, fmt.Errorf("ask the LLM: %w", err)
		}
		a.Route.Steps = append(a.Route.Steps, RouteStep{K: sel.K, Tokens: sel.Tokens, PromptTokens: a.PromptTokens, Reply: resp})
		a.Route.InputTokens += resp.PromptTokens
		a.Route.OutputTokens += resp.CompletionTokens
		a.Reply = &resp
		return resp, nil
	})
	a.Route.Routed = len(a.Route.Steps) > 1 || (err != nil && len(a.Route.Steps) == 1)
	a.Timings.LLM = time.Since(t)
	return err
}
