package answer

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/ctxsel/ctxsel/llm"
)

// JudgePromptA13 is the LLM-as-a-judge prompt of Taguchi et al., "Efficient
// Context Selection for Long-Context QA: No Tuning, No Iteration, Just
// Adaptive-k" (EMNLP 2025), Appendix A.1.3, verbatim as the paper's text
// gives it (its doubled bold markers included) except for trailing spaces
// and the escaped underscore in {output_format}. Placeholders:
// {in_context_examples}, {question}, {pred}, {gold}, {output_format}. It is
// llm-any's prompt; the official judge (llm:) sends JudgeTemplateA13.
const JudgePromptA13 = judgePromptA13

// JudgeExamplesA13 fills {in_context_examples} for llm-any: two examples of
// ctxsel's, written to show the output format (the official 8 are in
// JudgeTemplateA13).
const JudgeExamplesA13 = `Question: Who wrote Hamlet?
Assistant's Response: Hamlet was written by William Shakespeare.
Ground Truth: [{"id": 1, "answer": "William Shakespeare"}]
Output: [{"id": 1, "label": "Exact Match"}]

Question: Which two cities host the summer games of 2024 and 2028?
Assistant's Response: Paris hosts 2024.
Ground Truth: [{"id": 1, "answer": "Paris"}, {"id": 2, "answer": "Los Angeles"}]
Output: [{"id": 1, "label": "Exact Match"}, {"id": 2, "label": "No Match"}]`

// Labels of the A.1.3 judge and their scores.
var labelScore = map[string]float64{"exact match": 1, "partial match": 0.5, "no match": 0}

// LLMJudge is the Adaptive-k A.1.3 judge as the official code runs it: the
// judge model extracts the final answer from the prediction, then labels
// each gold entry Exact / Partial / No Match (→ 1 / 0.5 / 0), and the score
// is the mean over the entries (judgeA13). Two calls per answer.
type LLMJudge struct {
	Client llm.Client
	name   string
}

// NewLLMJudge returns the A.1.3 judge calling c.
func NewLLMJudge(c llm.Client) *LLMJudge { return &LLMJudge{Client: c, name: "llm:" + c.Describe()} }

// Name implements Judge.
func (j *LLMJudge) Name() string { return j.name }

// Judge implements Judge.
func (j *LLMJudge) Judge(ctx context.Context, it Item) (Verdict, error) {
	return judgeA13(ctx, j.Client, it)
}

// AnyJudge is ctxsel's variant of the A.1.3 judge (llm-any:): the paper's
// printed prompt with two examples of ours, no extraction step, and the best
// gold entry's label as the score — gold entries as alternatives (MuSiQue's
// aliases) — or, with Item.AllRequired, the mean. One call per answer.
type AnyJudge struct {
	Client llm.Client
	name   string
}

// NewAnyJudge returns llm-any calling c.
func NewAnyJudge(c llm.Client) *AnyJudge {
	return &AnyJudge{Client: c, name: "llm-any:" + c.Describe()}
}

// Name implements Judge.
func (j *AnyJudge) Name() string { return j.name }

type goldEntry struct {
	ID     int    `json:"id"`
	Answer string `json:"answer"`
}

// PromptA13 renders llm-any's prompt (JudgePromptA13 with
// JudgeExamplesA13) for it. With no gold answer the ground truth is [] (the
// paper's "None" case).
func PromptA13(it Item) string {
	entries := make([]goldEntry, len(it.Gold))
	for i, g := range it.Gold {
		entries[i] = goldEntry{ID: i + 1, Answer: g}
	}
	gold, _ := json.Marshal(entries)
	n := max(len(entries), 1)
	var of strings.Builder
	of.WriteString("[")
	for i := 1; i <= n; i++ {
		if i > 1 {
			of.WriteString(", ")
		}
		fmt.Fprintf(&of, `{"id": %d, "label": "Exact Match" | "Partial Match" | "No Match"}`, i)
	}
	of.WriteString("]")
	return strings.NewReplacer("{in_context_examples}", JudgeExamplesA13, "{question}", it.Question,
		"{pred}", it.Prediction, "{gold}", string(gold), "{output_format}", of.String()).Replace(JudgePromptA13)
}

// Judge implements Judge.
func (j *AnyJudge) Judge(ctx context.Context, it Item) (Verdict, error) {
	r, err := llm.Ask(ctx, j.Client, PromptA13(it))
	if err != nil {
		return Verdict{}, fmt.Errorf("answer: A.1.3 judge (llm-any): %w", err)
	}
	v := Verdict{Raw: r.Content, PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, Cached: r.Cached, Calls: 1, CachedCalls: cachedCalls(r)}
	labels, ok := ParseA13(r.Content, max(len(it.Gold), 1))
	if !ok {
		v.Invalid = true
		return v, nil
	}
	v.Labels = labels
	for i, l := range labels {
		s := labelScore[l]
		if it.AllRequired {
			v.Score += s / float64(len(labels))
		} else if i == 0 || s > v.Score {
			v.Score = s
		}
	}
	return v, nil
}

var (
	labelField = regexp.MustCompile(`(?i)"label"\s*:\s*"([^"]*)"`)
	verdictRe  = regexp.MustCompile(`(?i)\b(exact|partial|no)[\s_-]+match\b`)
)

// ParseA13 reads an A.1.3 judge output holding want labels, returning them
// normalised ("exact match", "partial match", "no match"). It accepts the
// JSON list the prompt asks for, in any surrounding text, with any case;
// or, for a single entry, a bare verdict ("Exact Match.", "partial"). It
// fails (ok false) on a wrong count, an unknown label, or a bare output
// naming more than one verdict.
func ParseA13(out string, want int) (labels []string, ok bool) {
	if ms := labelField.FindAllStringSubmatch(out, -1); len(ms) > 0 {
		if len(ms) != want {
			return nil, false
		}
		for _, m := range ms {
			l, ok := normLabel(m[1])
			if !ok {
				return nil, false
			}
			labels = append(labels, l)
		}
		return labels, true
	}
	if want != 1 {
		return nil, false
	}
	if l, ok := normLabel(out); ok {
		return []string{l}, true
	}
	found := map[string]bool{}
	for _, m := range verdictRe.FindAllStringSubmatch(out, -1) {
		found[strings.ToLower(m[1])+" match"] = true
	}
	if len(found) != 1 {
		return nil, false
	}
	for l := range found {
		return []string{l}, true
	}
	return nil, false
}

// normLabel reads one label: "Exact Match", "exact_match", "PARTIAL", "No
// match." …
func normLabel(s string) (string, bool) {
	f := strings.Fields(strings.ToLower(strings.Map(func(r rune) rune {
		if r == '_' || r == '-' {
			return ' '
		}
		if strings.ContainsRune(`.,;:!*"'`+"`()[]{}", r) {
			return -1
		}
		return r
	}, s)))
	switch {
	case len(f) == 1:
		f = append(f, "match")
	case len(f) != 2 || f[1] != "match":
		return "", false
	}
	l := f[0] + " match"
	if _, ok := labelScore[l]; !ok {
		return "", false
	}
	return l, true
}

// JudgePromptBinary is ctxsel's binary judge prompt (not from a paper).
const JudgePromptBinary = `You are grading an answer to a question against the ground-truth answer(s).

Question: {question}
Ground truth: {gold}
Answer to grade: {pred}

Is the answer correct, i.e. does it state the ground-truth answer (or, when several are listed as required, all of them) without contradicting it? Reply with exactly one word: correct or incorrect.`

// BinaryJudge asks for a correct/incorrect verdict: 1 or 0.
type BinaryJudge struct {
	Client llm.Client
	name   string
}

// NewBinaryJudge returns the binary judge calling c.
func NewBinaryJudge(c llm.Client) *BinaryJudge {
	return &BinaryJudge{Client: c, name: "llm-binary:" + c.Describe()}
}

// Name implements Judge.
func (j *BinaryJudge) Name() string { return j.name }

// PromptBinary renders JudgePromptBinary for it.
func PromptBinary(it Item) string {
	gold := strings.Join(it.Gold, " | ")
	if it.AllRequired {
		gold = "all of: " + strings.Join(it.Gold, "; ")
	}
	if len(it.Gold) == 0 {
		gold = "(none: the question has no answer in the data)"
	}
	return strings.NewReplacer("{question}", it.Question, "{gold}", gold, "{pred}", it.Prediction).Replace(JudgePromptBinary)
}

// Judge implements Judge.
func (j *BinaryJudge) Judge(ctx context.Context, it Item) (Verdict, error) {
	r, err := llm.Ask(ctx, j.Client, PromptBinary(it))
	if err != nil {
		return Verdict{}, fmt.Errorf("answer: binary judge: %w", err)
	}
	v := Verdict{Raw: r.Content, PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, Cached: r.Cached, Calls: 1, CachedCalls: cachedCalls(r)}
	correct, ok := ParseBinary(r.Content)
	switch {
	case !ok:
		v.Invalid = true
	case correct:
		v.Score, v.Labels = 1, []string{"correct"}
	default:
		v.Labels = []string{"incorrect"}
	}
	return v, nil
}

var binaryRe = regexp.MustCompile(`(?i)\b(in)?correct\b`)

// ParseBinary reads a binary verdict: "correct", "Incorrect.", "**Correct**
// — the answer names…". A line starting with "verdict:" or "answer:", when
// present, is read alone. It fails when the output names both verdicts or
// neither.
func ParseBinary(out string) (correct, ok bool) {
	text := out
	for _, line := range strings.Split(out, "\n") {
		l := strings.ToLower(strings.TrimLeft(strings.TrimSpace(line), "*#-_ "))
		if strings.HasPrefix(l, "verdict") || strings.HasPrefix(l, "answer:") || strings.HasPrefix(l, "grade") {
			text = line
			break
		}
	}
	seen := map[bool]bool{}
	for _, m := range binaryRe.FindAllStringSubmatch(text, -1) {
		seen[m[1] == ""] = true
	}
	if len(seen) != 1 {
		return false, false
	}
	for c := range seen {
		return c, true
	}
	return false, false
}

const judgePromptA13 = "You will be given a question along with a response generated by an assistant and the corresponding ground truth data. Your task is to assess the response based on its accuracy and completeness in comparison to the ground truth. For each entry in the ground truth, determine whether the information provided by the assistant is an \"Exact Match,\" a \"Partial Match,\" or a \"No Match.\"\n" +
	"\n" +
	"****Evaluation Criteria:****\n" +
	"\n" +
	"- ****Exact Match**:** The assistant's response precisely matches the ground truth in both content and detail.\n" +
	"- ****Partial Match**:** The assistant's response includes some correct information but is either incomplete, incorrectly ordered, or contains inaccuracies.\n" +
	"- ****No Match**:** The assistant's response does not accurately reflect the ground truth or is missing entirely.\n" +
	"\n" +
	"****Special Cases:****\n" +
	"\n" +
	"****Ground Truth is None:****\n" +
	"\n" +
	"- If the ground truth is `None` (represented as an empty list `[]`):\n" +
	" - ****Exact Match**:** If the assistant's response indicates that there is no information or content.\n" +
	" - ****No Match**:** If the assistant's response provides any information when the ground truth is `None`.\n" +
	"\n" +
	"****Output Format:****\n" +
	"\n" +
	"- The output should be a list of objects where each object contains:\n" +
	" - An `id` that matches the `id` of the corresponding ground truth entry.\n" +
	" - A `label` indicating whether the assistant's response is an \"Exact Match\", \"Partial Match\", or \"No Match\".\n" +
	"- The number of output objects should match the number of entries in the ground truth.\n" +
	"\n" +
	"****Examples:****\n" +
	"{in_context_examples}\n" +
	"\n" +
	"===== Your task starts here =====\n" +
	"\n" +
	"****Question:****\n" +
	"````\n" +
	"\n" +
	"{question}\n" +
	"````\n" +
	"\n" +
	"****Assistant's Response:****\n" +
	"````\n" +
	"\n" +
	"{pred}\n" +
	"````\n" +
	"\n" +
	"****Ground Truth:****\n" +
	"````\n" +
	"\n" +
	"{gold}\n" +
	"````\n" +
	"\n" +
	"****Output Format:****\n" +
	"````\n" +
	"\n" +
	"{output_format}\n" +
	"````"
