package ldareval

import (
	"fmt"

	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/ldar"
)

// WithTexts fills the question, answers and passage texts of qs from the
// pooled records they were scored from (dataset.Pool with the same seed), so
// that an LLM-judged reward can read them. A question whose record is
// missing or has another number of passages is an error.
func WithTexts(qs []ldar.Question, pooled []dataset.Record) error {
	byID := make(map[string]*dataset.Record, len(pooled))
	for i := range pooled {
		byID[pooled[i].ID] = &pooled[i]
	}
	for i := range qs {
		r, ok := byID[qs[i].ID]
		if !ok {
			return fmt.Errorf("ldareval: question %q is not among the pooled records", qs[i].ID)
		}
		if len(r.Passages) != len(qs[i].Scores) {
			return fmt.Errorf("ldareval: question %q: %d passages, %d scores (pooled with another seed?)", qs[i].ID, len(r.Passages), len(qs[i].Scores))
		}
		qs[i].Question, qs[i].Answers = r.Question, r.Answers
		qs[i].Texts = make([]string, len(r.Passages))
		for j, p := range r.Passages {
			qs[i].Texts[j] = p.Text
		}
	}
	return nil
}
