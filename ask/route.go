package ask

import (
	"context"
	"time"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/llm"
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

// show makes sel the answer's selection: its passages and the prompt.
func (a *Answer) show(sel ctxsel.Selection, hits []index.Hit, tmpl llm.Template, counter token.Counter) error {
	labels := Labels(hits)
	// the answer names its passages as the prompt does (a remote client
	// gets the selection's ids too)
	sel.IDs = make([]string, len(sel.Indices))
	for i, idx := range sel.Indices {
		sel.IDs[i] = labels[idx]
	}
	a.Selection = sel
	a.Passages = make([]Passage, len(sel.Indices))
	ps := make([]llm.Passage, len(sel.Indices))
	for i, idx := range sel.Indices {
		a.Passages[i] = Passage{Hit: hits[idx], ID: labels[idx], Rank: idx}
		if sel.Evidence != nil { // a pruning selector's text is what is sent
			ev := sel.Evidence[i]
			a.Passages[i].Evidence = &ev
		}
		ps[i] = llm.Passage{Label: labels[idx], Text: a.Passages[i].Sent()}
	}
	var err error
	if a.Prompt, err = tmpl.Render(a.Question, llm.FormatContext(ps)); err != nil {
		return err
	}
	a.PromptTokens = counter.Count(a.Prompt)
	return nil
}

// askRoute runs an answering route (Self-Route): its steps in turn, each
// with its prompt (the route's own for its first step, tmpl, the normal
// long-context prompt, for the long-context step), each cut to the
// reader's window (the long-context step in document order). The answer
// shows the step it ended with (or, on a failed call, the step that
// failed).
func askRoute(ctx context.Context, a *Answer, curve *ctxsel.Curve, hits []index.Hit, r ctxsel.Route, tmpl llm.Template, counter token.Counter, opts Options) error {
	steps, err := r.Plan(curve, opts.Order)
	if err != nil {
		return err
	}
	a.Route = &Route{}
	t := time.Now()
	n, err := ctxsel.RunRoute(ctx, r, steps, func(ctx context.Context, st ctxsel.RouteStep) (string, error) {
		order := opts.Order
		if st.Long {
			order = ctxsel.DocumentOrder
		}
		sel, err := a.fit(curve, st.Selection, hits, llm.Template(st.Prompt(r, "", string(tmpl))), counter, order)
		if err != nil {
			return "", err
		}
		resp, err := llm.AskWithin(ctx, opts.LLM, a.Prompt, a.Window.sent())
		if err != nil {
			return "", a.llmError(err)
		}
		a.Route.Steps = append(a.Route.Steps, RouteStep{K: sel.K, Tokens: sel.Tokens, PromptTokens: a.PromptTokens, Reply: resp})
		a.Route.InputTokens += resp.PromptTokens
		a.Route.OutputTokens += resp.CompletionTokens
		a.Reply, a.ReplyDefect = &resp, resp.Defect()
		return resp.Content, nil
	})
	a.Route.Routed = n > 1
	a.Timings.LLM = time.Since(t)
	return err
}
