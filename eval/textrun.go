package eval

import (
	"context"
	"fmt"
	"sync"

	"github.com/ctxsel/ctxsel"
)

// TextRun is a selector that reads the question and the passages' texts
// (an LLM picker), measured beside the score-only strategies on the same
// scored candidates.
type TextRun struct {
	// Name is the report row's name (the selector's spec).
	Name string
	// Select selects for one question. An error stops the run; a selector
	// that falls back on bad model output reports that in Invalid instead.
	Select func(ctx context.Context, q ctxsel.TextQuery) (TextOutcome, error)
}

// TextOutcome is one selection with the selector's own model usage,
// reported apart from any reader's.
type TextOutcome struct {
	Selection                      ctxsel.Selection
	PromptTokens, CompletionTokens int
	// Invalid is set when the model's output was unusable and a fallback
	// selected.
	Invalid bool
}

// callStats is one question's usage by one TextRun.
type callStats struct {
	prompt, completion int
	invalid            bool
}

// measureTexts runs every TextRun on every question, workers at a time,
// appending the selections to stats[q].perStrategy (after the strategies')
// and returning the call usage as calls[run][question].
func measureTexts(ctx context.Context, recs []Record, curves []QuestionCurve, stats []questionStats, runs []TextRun, workers int, progress func(done, total int)) ([][]callStats, error) {
	calls := make([][]callStats, len(runs))
	if len(runs) == 0 {
		return calls, nil
	}
	if workers <= 0 {
		workers = 8
	}
	sels := make([][]selStats, len(runs))
	for i := range runs {
		calls[i] = make([]callStats, len(recs))
		sels[i] = make([]selStats, len(recs))
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type job struct{ run, q int }
	jobs := make(chan job)
	var (
		mu       sync.Mutex
		firstErr error
		done     int
		wg       sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				r, q := recs[j.q], curves[j.q]
				cands := make([]ctxsel.Candidate, len(r.Passages))
				texts := make([]string, len(r.Passages))
				for i, p := range r.Passages {
					cands[i] = ctxsel.Candidate{ID: p.ID, Score: q.Scores[i], Tokens: q.Tokens[i]}
					texts[i] = p.Text
				}
				curve, err := ctxsel.NewCurve(cands)
				var out TextOutcome
				if err == nil {
					out, err = runs[j.run].Select(ctx, ctxsel.TextQuery{Question: r.Question, Curve: curve, Texts: texts})
				}
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = fmt.Errorf("%s on record %q: %w", runs[j.run].Name, r.ID, err)
					}
					cancel()
				} else {
					ss := selStats{k: out.Selection.K, tokens: out.Selection.Tokens}
					for _, idx := range out.Selection.Indices {
						if idx >= 0 && idx < len(q.Gold) && q.Gold[idx] {
							ss.gold++
						}
					}
					sels[j.run][j.q] = ss
					calls[j.run][j.q] = callStats{prompt: out.PromptTokens, completion: out.CompletionTokens, invalid: out.Invalid}
					done++
					if progress != nil {
						progress(done, len(runs)*len(recs))
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for run := range runs {
		for q := range recs {
			select {
			case jobs <- job{run, q}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for q := range stats {
		for run := range runs {
			stats[q].perStrategy = append(stats[q].perStrategy, sels[run][q])
		}
	}
	return calls, nil
}

// addCalls puts a TextRun's model usage into its result row.
func addCalls(r *Result, calls []callStats) {
	if len(calls) == 0 {
		return
	}
	var p, c, inv float64
	for _, s := range calls {
		p += float64(s.prompt)
		c += float64(s.completion)
		if s.invalid {
			inv++
		}
	}
	n := float64(len(calls))
	r.Selector = &SelectorCalls{MeanPromptTokens: p / n, MeanCompletionTokens: c / n, InvalidRate: inv / n}
}

// SelectorCalls is the model usage of a selector that reads texts: its own
// call's tokens (not the reader's) and how often its output was invalid.
type SelectorCalls struct {
	MeanPromptTokens     float64 `json:"mean_prompt_tokens"`
	MeanCompletionTokens float64 `json:"mean_completion_tokens"`
	// InvalidRate is invalid outputs (fallback taken) per question.
	InvalidRate float64 `json:"invalid_rate"`
}
