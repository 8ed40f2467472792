package mine

import (
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/token"
)

// Estimate is a dry run's cost bounds for the generator (judge calls, when
// the judge is an LLM, come on top: one per generator call, two for the
// A.1.3 judge).
type Estimate struct {
	Questions int `json:"questions"`
	// MinCalls assumes one leave-one-out pass that removes nothing (or a
	// dropped record: one call); MaxCalls assumes every pass removes one
	// passage, the last one it tries: 1 + k + (k−1) + … + 2.
	MinCalls int `json:"min_calls"`
	MaxCalls int `json:"max_calls"`
	// MinPromptTokens and MaxPromptTokens bound the generator's prompt
	// tokens, counted with the given encoding on the real prompts of the
	// first pass (the bound for later passes uses the full-set prompt).
	MinPromptTokens int `json:"min_prompt_tokens"`
	MaxPromptTokens int `json:"max_prompt_tokens"`
}

// EstimateCost renders the prompts mining would send first and counts them,
// without calling anything.
func EstimateCost(recs []dataset.Record, k int, tmpl llm.Template, counter token.Counter) (Estimate, error) {
	if k <= 0 {
		k = DefaultK
	}
	if tmpl == "" {
		tmpl = llm.FactoidQA
	}
	est := Estimate{Questions: len(recs)}
	for _, rec := range recs {
		cand := Candidates(rec, k)
		render := func(set []int) (int, error) {
			ps := make([]llm.Passage, len(set))
			for j, i := range set {
				ps[j] = llm.Passage{Label: rec.Passages[i].ID, Text: rec.Passages[i].Text}
			}
			p, err := tmpl.Render(rec.Question, llm.FormatContext(ps))
			return counter.Count(p), err
		}
		full, err := render(cand)
		if err != nil {
			return Estimate{}, err
		}
		est.MinCalls++
		est.MinPromptTokens += full
		est.MaxCalls++
		est.MaxPromptTokens += full
		if len(cand) < 2 {
			continue
		}
		for j := range cand {
			rest := append(append([]int(nil), cand[:j]...), cand[j+1:]...)
			n, err := render(rest)
			if err != nil {
				return Estimate{}, err
			}
			est.MinCalls++
			est.MinPromptTokens += n
		}
		for m := len(cand); m >= 2; m-- {
			est.MaxCalls += m
			est.MaxPromptTokens += m * full
		}
	}
	return est, nil
}
