package eval

import (
	"context"
	"fmt"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/llm"
)

// SelectorCalls is the model usage of a metered selector (an LLM
// picker), on its row of the report: its own call's tokens (not the
// reader's) and how often its output was invalid.
type SelectorCalls struct {
	MeanPromptTokens     float64 `json:"mean_prompt_tokens"`
	MeanCompletionTokens float64 `json:"mean_completion_tokens"`
	// InvalidRate is invalid outputs (fallback taken) per question.
	InvalidRate float64 `json:"invalid_rate"`
}

// callStats is one question's usage by one metered selector.
type callStats struct {
	prompt, completion int
	invalid            bool
}

// selectTexts runs the text-selector slots (which may call a model, so they
// take a context and may fail) on every question, workers at a time,
// cutting each selection to the window budget like measure does for
// strategies. The first failure stops the rest; progress counts questions.
func selectTexts(ctx context.Context, recs []dataset.Record, curves []QuestionCurve, stats []questionStats, slots []strategySlot, budget func(dataset.Record) int, workers int, progress func(done, total int)) error {
	var textSlots []int
	for i, sl := range slots {
		if sl.text {
			textSlots = append(textSlots, i)
		}
	}
	if len(textSlots) == 0 {
		return nil
	}
	return eachRecord(ctx, recs, workers, progress, func(ctx context.Context, qi int) error {
		return selectTextsOne(ctx, recs[qi], curves[qi], &stats[qi], slots, textSlots, budget)
	})
}

func selectTextsOne(ctx context.Context, r dataset.Record, q QuestionCurve, st *questionStats, slots []strategySlot, textSlots []int, budget func(dataset.Record) int) error {
	texts := make([]string, len(r.Passages))
	var headers []string // the passages' titles, as an index gives its chunks'
	for i, p := range r.Passages {
		texts[i] = p.Text
		if p.Title != "" && headers == nil {
			headers = make([]string, len(r.Passages))
		}
	}
	if headers != nil {
		for i, p := range r.Passages {
			headers[i] = p.Title
		}
	}
	curve, err := ctxsel.NewCurve(candidates(r, q))
	if err != nil {
		return err
	}
	for _, i := range textSlots {
		tq := ctxsel.TextQuery{Question: r.Question, Curve: curve, Texts: texts, Headers: headers, Order: ctxsel.RankOrder}
		sel, use, err := slots[i].run.Select(ctx, tq)
		if err != nil {
			return fmt.Errorf("%s: %w", slots[i].name, err)
		}
		var call *callStats
		if use.Metered {
			call = &callStats{prompt: use.PromptTokens, completion: use.CompletionTokens, invalid: use.Invalid != ""}
		}
		if budget != nil {
			if sel, err = ctxsel.FitWindow(curve, sel, budget(r), llm.PassageOverhead, ctxsel.RankOrder); err != nil {
				return fmt.Errorf("%s: %w", slots[i].name, err)
			}
		}
		st.perStrategy[i].setSelection(sel, st)
		st.perStrategy[i].call = call
	}
	return nil
}

// selectorCalls averages a metered selector's usage over the questions;
// nil for a slot that is not one.
func selectorCalls(idx int, qs []questionStats) *SelectorCalls {
	var p, c, inv, n float64
	for _, q := range qs {
		s := q.perStrategy[idx].call
		if s == nil {
			continue
		}
		p += float64(s.prompt)
		c += float64(s.completion)
		if s.invalid {
			inv++
		}
		n++
	}
	if n == 0 {
		return nil
	}
	return &SelectorCalls{MeanPromptTokens: p / n, MeanCompletionTokens: c / n, InvalidRate: inv / n}
}
