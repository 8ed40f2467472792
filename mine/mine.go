// Package mine is Context-Picker's offline evidence mining (Algorithm 1 of
// ../shared/papers/context-picker.txt): BM25 over [question; answer] picks
// the top-k passages of a record, a generator answers from them and a judge
// checks the answer; a record whose full candidate set fails is dropped,
// otherwise passages are removed one at a time (leave-one-out) while the
// answer stays correct, until no passage can go. The surviving set is the
// record's mined gold: a greedily minimal sufficient evidence set with
// respect to that generator and judge.
//
// Run adds what a long job needs: a checkpoint per question (resumable), a
// worker limit, progress with tokens, a cap on LLM tokens, and query
// rewrites kept in the original's split group.
package mine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/answer"
	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/llm"
	"github.com/ctxsel/ctxsel/score"
)

// DefaultK is the number of BM25 candidates mining starts from.
const DefaultK = 10

// DefaultThreshold is the verdict score counted as a correct answer with a
// lexical judge (SubEM and EM score 0 or 1; F1 at least a half).
const DefaultThreshold = 0.5

// DefaultLLMThreshold is the verdict score counted as correct with an LLM
// judge: a full match. Algorithm 1's judge decides whether the answer
// semantically matches the gold answer, so the A.1.3 judge's Partial Match
// (0.5) does not count, and a binary judge's "correct" (1) does.
const DefaultLLMThreshold = 1.0

// DefaultThresholdFor is the threshold Options uses for j when none is set.
func DefaultThresholdFor(j answer.Judge) float64 {
	if _, lexical := j.(answer.Metric); lexical {
		return DefaultThreshold
	}
	return DefaultLLMThreshold
}

// Options configure mining.
type Options struct {
	// K is the number of BM25 candidates (default DefaultK).
	K int
	// Generator answers from a candidate set; Judge checks the answer
	// against the record's answers. Both are required.
	Generator llm.Client
	Judge     answer.Judge
	// Threshold is the verdict score counted as correct (default
	// DefaultThresholdFor(Judge): 1, a full match, for an LLM judge; 0.5 for
	// a lexical one); an invalid verdict is never correct.
	Threshold float64
	// Template is the generator prompt (default llm.FactoidQA).
	Template llm.Template
	// Budget, when set, is asked before every LLM call and may refuse it
	// (the token cap); see Run.
	budget *budget
}

func (o Options) withDefaults() (Options, error) {
	if o.K == 0 {
		o.K = DefaultK
	}
	if o.K < 1 {
		return o, fmt.Errorf("%w: mine: k=%d must be positive", ctxsel.ErrInvalidInput, o.K)
	}
	if o.Threshold == 0 && o.Judge != nil {
		o.Threshold = DefaultThresholdFor(o.Judge)
	}
	if o.Template == "" {
		o.Template = llm.FactoidQA
	}
	if err := o.Template.Check(); err != nil {
		return o, fmt.Errorf("%w: mine: %v", ctxsel.ErrInvalidInput, err)
	}
	if o.Generator == nil || o.Judge == nil {
		return o, fmt.Errorf("%w: mine: a generator and a judge are required", ctxsel.ErrInvalidInput)
	}
	return o, nil
}

// Provenance says how a record's gold was mined.
type Provenance struct {
	// Candidates are the BM25 top-k over [question; answer], best first.
	Candidates []string `json:"candidates"`
	// Gold is the mined minimal sufficient set, in candidate order;
	// OriginalGold the record's gold before mining.
	Gold         []string `json:"gold"`
	OriginalGold []string `json:"original_gold,omitempty"`
	// Removed lists the pruned passages in the order they were removed.
	Removed []string `json:"removed"`
	// Dropped is set when the full candidate set was not answered
	// correctly (the record is left out of the output); Reason says why.
	Dropped bool   `json:"dropped,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Calls counts generator and judge calls; the tokens are theirs.
	Calls            int `json:"calls"`
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Group is the id of the record whose rewrites share its split group;
	// Rewrites are the validated paraphrases of the question.
	Group    string   `json:"group"`
	Rewrites []string `json:"rewrites,omitempty"`
}

// Tokens is the LLM tokens the record cost.
func (p Provenance) Tokens() int { return p.PromptTokens + p.CompletionTokens }

// Candidates returns the input indices of the record's top-k passages by
// BM25 over the question and its answers, best first (ties: input order).
func Candidates(rec dataset.Record, k int) []int {
	texts := make([]string, len(rec.Passages))
	for i, p := range rec.Passages {
		texts[i] = p.Text
	}
	idx := score.RankBM25(rec.Question+"\n"+strings.Join(rec.Answers, "\n"), texts)
	return idx[:min(k, len(idx))]
}

// Record mines one record: Algorithm 1. The error is a failed call, a
// cancelled context or the token cap; a record that cannot be mined is
// Dropped with a Reason.
func Record(ctx context.Context, rec dataset.Record, opt Options) (Provenance, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return Provenance{}, err
	}
	prov := Provenance{Group: rec.ID, Removed: []string{}}
	for _, p := range rec.Passages {
		if p.Gold {
			prov.OriginalGold = append(prov.OriginalGold, p.ID)
		}
	}
	if len(rec.Answers) == 0 {
		prov.Dropped, prov.Reason = true, "the record has no answer to check against"
		return prov, nil
	}
	cand := Candidates(rec, opt.K)
	for _, i := range cand {
		prov.Candidates = append(prov.Candidates, rec.Passages[i].ID)
	}
	ok, err := answerable(ctx, rec, cand, opt, &prov)
	if err != nil {
		return prov, err
	}
	if !ok {
		prov.Dropped, prov.Reason = true, fmt.Sprintf("the generator's answer from all %d candidates was judged wrong", len(cand))
		prov.Gold = []string{}
		return prov, nil
	}
	suf := slices.Clone(cand)
	for changed := true; changed; {
		changed = false
		for _, c := range slices.Clone(suf) {
			if len(suf) == 1 {
				// An empty set is no evidence: the last passage stays.
				break
			}
			rest := slices.DeleteFunc(slices.Clone(suf), func(i int) bool { return i == c })
			ok, err := answerable(ctx, rec, rest, opt, &prov)
			if err != nil {
				return prov, err
			}
			if ok {
				suf = rest
				prov.Removed = append(prov.Removed, rec.Passages[c].ID)
				changed = true
			}
		}
	}
	for _, i := range suf {
		prov.Gold = append(prov.Gold, rec.Passages[i].ID)
	}
	return prov, nil
}

// answerable runs the answer-judge pipeline on the passages set (input
// indices, shown in that order).
func answerable(ctx context.Context, rec dataset.Record, set []int, opt Options, prov *Provenance) (bool, error) {
	ps := make([]llm.Passage, len(set))
	for j, i := range set {
		ps[j] = llm.Passage{Label: rec.Passages[i].ID, Text: rec.Passages[i].Text}
	}
	prompt, err := opt.Template.Render(rec.Question, llm.FormatContext(ps))
	if err != nil {
		return false, err
	}
	if err := opt.budget.check(); err != nil {
		return false, err
	}
	resp, err := llm.Ask(ctx, opt.Generator, prompt)
	if err != nil {
		return false, fmt.Errorf("generator: %w", err)
	}
	prov.Calls++
	prov.PromptTokens += resp.PromptTokens
	prov.CompletionTokens += resp.CompletionTokens
	opt.budget.spend(resp.PromptTokens + resp.CompletionTokens)
	if err := opt.budget.check(); err != nil {
		return false, err
	}
	v, err := opt.Judge.Judge(ctx, answer.Item{Question: rec.Question, Prediction: strings.TrimSpace(resp.Content), Gold: rec.Answers, Task: rec.Task})
	if err != nil {
		return false, fmt.Errorf("judge %s: %w", opt.Judge.Name(), err)
	}
	if v.PromptTokens+v.CompletionTokens > 0 {
		prov.Calls++
		prov.PromptTokens += v.PromptTokens
		prov.CompletionTokens += v.CompletionTokens
		opt.budget.spend(v.PromptTokens + v.CompletionTokens)
	}
	return !v.Invalid && v.Score >= opt.Threshold, nil
}

// Mined is the record with gold = the mined set and the provenance in
// meta.mined (other meta keys are kept).
func Mined(rec dataset.Record, prov Provenance) (dataset.Record, error) {
	out := rec
	out.Passages = slices.Clone(rec.Passages)
	gold := make(map[string]bool, len(prov.Gold))
	for _, id := range prov.Gold {
		gold[id] = true
	}
	for i := range out.Passages {
		out.Passages[i].Gold = gold[out.Passages[i].ID]
	}
	meta := map[string]json.RawMessage{}
	if len(rec.Meta) > 0 && string(rec.Meta) != "null" {
		if err := json.Unmarshal(rec.Meta, &meta); err != nil {
			// Non-object meta is kept under its own key.
			meta = map[string]json.RawMessage{"original": rec.Meta}
		}
	}
	b, err := json.Marshal(prov)
	if err != nil {
		return dataset.Record{}, fmt.Errorf("mine: %w", err)
	}
	meta["mined"] = b
	if out.Meta, err = json.Marshal(meta); err != nil {
		return dataset.Record{}, fmt.Errorf("mine: %w", err)
	}
	return out, nil
}
