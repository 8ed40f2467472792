package lengthest

import (
	"fmt"
	"io"
	"math"
)

// Plan is what a run will spend, counted before any call: every call,
// prompt tokens exactly for the panel (full context, cut to each window)
// and as an upper bound for the search (each budget filled to the brim,
// since the retriever's choice is not made yet), completion tokens from the
// word limit (or MaxTokens).
type Plan struct {
	Examples         int `json:"examples"`
	PanelCalls       int `json:"panel_calls"`
	SearchCalls      int `json:"search_calls"`
	Calls            int `json:"calls"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// MakePlan counts the calls and tokens of Run on exs without calling
// anything (no clients or retriever needed). Budgets at or above an
// example's whole (truncated) input admit every document and share one set
// of summaries, as in Run.
func MakePlan(cfg Config, exs []Example) (Plan, error) {
	cfg.defaults()
	if err := cfg.validate(false); err != nil {
		return Plan{}, err
	}
	answer := cfg.answerReserve()
	p := Plan{Examples: len(exs)}
	for _, ex := range exs {
		for _, m := range cfg.Panel {
			prompt, _, err := cfg.fullPrompt(m, ex)
			if err != nil {
				return Plan{}, fmt.Errorf("example %s: %w", ex.ID, err)
			}
			p.PanelCalls += cfg.Samples
			p.PromptTokens += cfg.Samples * cfg.Tokenizer.Count(prompt)
		}
		overhead := cfg.Tokenizer.Count(RenderPrompt(make([]string, len(ex.Docs)), ex.Question, cfg.Words))
		total := 0
		for _, d := range ex.Docs {
			t, err := TruncateSentences(cfg.Tokenizer, d, cfg.DocTokens)
			if err != nil {
				return Plan{}, fmt.Errorf("example %s: %w", ex.ID, err)
			}
			total += cfg.Tokenizer.Count(t)
		}
		limit := cfg.docLimit(cfg.Summarizer, ex)
		full := false
		for _, b := range cfg.Budgets {
			if b >= total {
				if full {
					continue
				}
				full = true
			}
			p.SearchCalls += cfg.Samples
			p.PromptTokens += cfg.Samples * (overhead + min(b, total, max(limit, 0)))
		}
	}
	p.Calls = p.PanelCalls + p.SearchCalls
	p.CompletionTokens = p.Calls * answer
	return p, nil
}

// Write prints the plan.
func (p Plan) Write(w io.Writer) error {
	_, err := fmt.Fprintf(w, "plan: %d examples; %d LLM calls (%d panel, %d search); about %s prompt + %s completion tokens (upper bound)\n",
		p.Examples, p.Calls, p.PanelCalls, p.SearchCalls, human(p.PromptTokens), human(p.CompletionTokens))
	return err
}

func human(n int) string {
	switch {
	case n >= 1e6:
		return fmt.Sprintf("%.2fM", float64(n)/1e6)
	case n >= 1e4:
		return fmt.Sprintf("%.0fk", math.Round(float64(n)/1e3))
	}
	return fmt.Sprint(n)
}
