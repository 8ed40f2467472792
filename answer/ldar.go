package answer

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctxsel/ctxsel/llm"
)

// LDAR's judge (ku-dmlab/LDAR, evaluation/optim_utils.py,
// get_score_one_llm): a True/False verdict on the reader's answer against
// the reference answer, the reward LDAR trains on. The prompts are the
// code's f-strings verbatim, with {query}, {label} and {pred} for its
// fields (its "judgement" and "judgment" spellings kept).

// JudgePromptLDAR is the prompt for every query type but "hallu".
const JudgePromptLDAR = "I will provide you with a question and its groundtruth answer, as well as an answer from an AI assistant. You need to judge whether the AI assistant's answer is correct based on the groundtruth answer. If it is correct, you should only output True; if it is incorrect, only output False.\n\n[Query] {query}\n\n[Groundtruth Answer] {label}\n\n[AI Assistant's Answer] {pred}\n\nNow, start your judgment:"

// JudgePromptLDARHallu is the prompt for LaRA's hallucination queries.
const JudgePromptLDARHallu = "You need to help me determine whether an AI model is hallucinating. I will provide you with a question, a ground truth answer, and a prediction from the model. If the prediction from the model and the ground truth answer are basically consistent, and it is determined that this question is not mentioned in the text, then the model is deemed not to be hallucinating and the answer is considered correct. If it is correct, you should only output True; if it is incorrect, only output False.\n\n[Query] {query}\n\n[Groundtruth Answer] {label}\n\n[AI Assistant's Answer] {pred}\n\nNow, start your judgement:"

// JudgeSystemLDAR is the system message LDAR's judge call sends.
const JudgeSystemLDAR = "You are a discriminator that judges whether the predictions to questions are correct."

// LDARJudge is LDAR's True/False judge (llm-ldar:): 1 when the reply holds
// "true" in any case, as the official code reads it ('true' in
// response.lower()), else 0 — except that a reply holding neither "true" nor
// "false" is Invalid (the official code scores it 0; in a training reward an
// invalid verdict scores 0 too).
type LDARJudge struct {
	Client llm.Client
	name   string
}

// NewLDARJudge returns LDAR's judge calling c.
func NewLDARJudge(c llm.Client) *LDARJudge {
	return &LDARJudge{Client: c, name: "llm-ldar:" + c.Describe()}
}

// Name implements Judge.
func (j *LDARJudge) Name() string { return j.name }

// PromptLDAR renders LDAR's judge prompt for it: the hallucination prompt
// when it.Task is "hallu". The reference answer is the single gold answer,
// or the list's Python repr when there are several (the code formats
// whatever the data holds).
func PromptLDAR(it Item) string {
	tmpl := JudgePromptLDAR
	if it.Task == "hallu" {
		tmpl = JudgePromptLDARHallu
	}
	label := ""
	switch len(it.Gold) {
	case 0:
	case 1:
		label = it.Gold[0]
	default:
		parts := make([]string, len(it.Gold))
		for i, g := range it.Gold {
			parts[i] = pyRepr(g)
		}
		label = "[" + strings.Join(parts, ", ") + "]"
	}
	return strings.NewReplacer("{query}", it.Question, "{label}", label, "{pred}", it.Prediction).Replace(tmpl)
}

// Judge implements Judge.
func (j *LDARJudge) Judge(ctx context.Context, it Item) (Verdict, error) {
	zero := 0.0
	r, err := j.Client.Chat(ctx, llm.Request{Messages: []llm.Message{
		{Role: "system", Content: JudgeSystemLDAR}, {Role: "user", Content: PromptLDAR(it)}}, Temperature: &zero})
	if err != nil {
		return Verdict{}, fmt.Errorf("answer: LDAR judge: %w", err)
	}
	v := Verdict{Raw: r.Content, PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, Cached: r.Cached, Calls: 1, CachedCalls: cachedCalls(r)}
	correct, ok := ParseLDAR(r.Content)
	switch {
	case !ok:
		v.Invalid = true
	case correct:
		v.Score, v.Labels = 1, []string{"true"}
	default:
		v.Labels = []string{"false"}
	}
	return v, nil
}

// ParseLDAR reads LDAR's verdict: true when the lowercased reply holds
// "true" (the official rule, so "Not true" is true too), false when it
// holds "false" and not "true"; ok is false when it holds neither.
func ParseLDAR(out string) (correct, ok bool) {
	lo := strings.ToLower(out)
	switch {
	case strings.Contains(lo, "true"):
		return true, true
	case strings.Contains(lo, "false"):
		return false, true
	}
	return false, false
}
