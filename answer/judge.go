package answer

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/llm"
)

// Item is one answer to score.
type Item struct {
	Question   string
	Prediction string
	// Gold are the gold answers: alternatives (any one suffices), unless
	// AllRequired, when each is an entry the answer must cover (HoloBench
	// rows); the lexical metrics and llm-any take the best alternative. The
	// A.1.3 judge (llm:) always takes the mean over the entries, as the
	// official code does.
	Gold        []string
	AllRequired bool
	// Task is the record's task; LDAR's judge reads LaRA's query type
	// ("hallu" has its own prompt).
	Task string
}

// Verdict is a judge's score for one Item.
type Verdict struct {
	// Score is in [0, 1]; 0 when Invalid.
	Score float64 `json:"score"`
	// Invalid marks an LLM verdict that could not be read unambiguously:
	// count it as judge_invalid, never as a score.
	Invalid bool `json:"invalid,omitempty"`
	// Raw is the judge model's output, kept for audit ("" for lexical
	// judges).
	Raw string `json:"raw,omitempty"`
	// Labels are the per-entry labels an LLM judge gave (A.1.3 judge), or
	// its single verdict (binary judges).
	Labels []string `json:"labels,omitempty"`
	// Extracted is the final answer the A.1.3 judge's extraction step took
	// from the prediction, the text it judged.
	Extracted string `json:"extracted,omitempty"`
	// Usage of the judge's calls (zero for lexical judges): Calls made (the
	// A.1.3 judge makes two), CachedCalls of them answered from the cache,
	// Cached when all were.
	PromptTokens     int  `json:"prompt_tokens,omitempty"`
	CompletionTokens int  `json:"completion_tokens,omitempty"`
	Cached           bool `json:"cached,omitempty"`
	Calls            int  `json:"calls,omitempty"`
	CachedCalls      int  `json:"cached_calls,omitempty"`
}

// Judge scores answers. Implementations are safe for concurrent use.
type Judge interface {
	// Name is the spec that selects the judge, e.g. "subem" or
	// "llm:openai:gpt-4o-mini" (never a key).
	Name() string
	// Judge scores one item. An error means the judge could not run (a
	// failed call); an unreadable verdict is Verdict.Invalid, not an error.
	Judge(ctx context.Context, it Item) (Verdict, error)
}

// Metric is a lexical judge: a pure function of prediction and gold.
type Metric struct {
	name string
	fn   func(pred string, gold []string) float64
}

// The lexical judges.
var (
	EMJudge    = Metric{"em", EM}
	SubEMJudge = Metric{"subem", SubEM}
	F1Judge    = Metric{"f1", F1}
)

// Name implements Judge.
func (m Metric) Name() string { return m.name }

// Judge implements Judge. With AllRequired, the score is the mean over the
// gold entries of the metric against each.
func (m Metric) Judge(_ context.Context, it Item) (Verdict, error) {
	if !it.AllRequired || len(it.Gold) == 0 {
		return Verdict{Score: m.fn(it.Prediction, it.Gold)}, nil
	}
	sum := 0.0
	for _, g := range it.Gold {
		sum += m.fn(it.Prediction, []string{g})
	}
	return Verdict{Score: sum / float64(len(it.Gold))}, nil
}

// OpenFunc opens an LLM endpoint spec (llm.ParseSpec syntax), typically
// llm.OpenSpec with the run's shared options, limiter and cache applied.
type OpenFunc func(spec string) (llm.Client, error)

// Kinds of LLM judge, as a --judge spec's prefix.
var llmJudgeKinds = []string{"llm", "llm-any", "llm-binary", "llm-ldar"}

// ParseJudge resolves a --judge value:
//
//	em | subem | f1         lexical metrics (SQuAD normalisation)
//	llm:SPEC                the Adaptive-k A.1.3 judge as its official code runs it: the final
//	                        answer extracted first, 8 worked examples, Exact/Partial/No Match →
//	                        1/0.5/0, the mean over the gold entries
//	llm-any:SPEC            ctxsel's A.1.3 variant: the paper's printed prompt with two examples
//	                        of ours, no extraction, the best gold entry (alternatives such as
//	                        aliases), the mean with Item.AllRequired
//	llm-binary:SPEC         ctxsel's correct/incorrect judge
//	llm-ldar:SPEC           LDAR's True/False judge (its code's prompts, "hallu" tasks apart)
//
// where SPEC is an llm endpoint spec opened with open. Errors wrap
// ctxsel.ErrInvalidInput when the spec is malformed.
func ParseJudge(spec string, open OpenFunc) (Judge, error) {
	switch strings.TrimSpace(spec) {
	case "em":
		return EMJudge, nil
	case "subem":
		return SubEMJudge, nil
	case "f1":
		return F1Judge, nil
	}
	kind, endpoint, ok := strings.Cut(spec, ":")
	if !ok || !slices.Contains(llmJudgeKinds, kind) {
		return nil, fmt.Errorf("answer: judge %q: want em, subem, f1, llm:SPEC, llm-any:SPEC, llm-binary:SPEC or llm-ldar:SPEC: %w", spec, ctxsel.ErrInvalidInput)
	}
	sp, err := llm.ParseSpec(endpoint)
	if err != nil {
		return nil, fmt.Errorf("answer: judge: %w", err)
	}
	if open == nil {
		return nil, fmt.Errorf("answer: judge %q needs an LLM, and none can be opened here: %w", spec, ctxsel.ErrInvalidInput)
	}
	c, err := open(endpoint)
	if err != nil {
		return nil, fmt.Errorf("answer: judge: %w", err)
	}
	name := kind + ":" + sp.String()
	switch kind {
	case "llm":
		return &LLMJudge{Client: c, name: name}, nil
	case "llm-any":
		return &AnyJudge{Client: c, name: name}, nil
	case "llm-ldar":
		return &LDARJudge{Client: c, name: name}, nil
	}
	return &BinaryJudge{Client: c, name: name}, nil
}

// IsLLM reports whether a --judge spec names an LLM judge.
func IsLLM(spec string) bool {
	kind, _, ok := strings.Cut(strings.TrimSpace(spec), ":")
	return ok && slices.Contains(llmJudgeKinds, kind)
}
