package answer

import (
	"context"
	_ "embed" // the prompts
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel/llm"
)

// The A.1.3 judge as the official Adaptive-k code runs it
// (megagonlabs/adaptive-k-retrieval, llm_as_a_judge.py and eval.py): first
// the judge model extracts the final answer from the reader's reply
// (ExtractTemplateA13), then it labels every entry of the gold list
// against that answer (JudgeTemplateA13, its 8 worked examples inline), and
// the score is the mean of the labels (Exact / Partial / No Match → 1 /
// 0.5 / 0) over the entries.

// ExtractTemplateA13 is prompts/holobench_postproc_template.txt, verbatim as
// the judge model receives it (Python's str.format turns its {{ }} into
// braces); {response} is the reader's reply. The text is the file
// prompts/a13_extract.txt here, built into the binary.
//
//go:embed prompts/a13_extract.txt
var ExtractTemplateA13 string

// JudgeTemplateA13 is prompts/holobench_eval_template.txt, verbatim as the
// judge model receives it (its {{ }} are braces after str.format): the
// paper's A.1.3 prompt with its {in_context_examples}, 8 worked examples,
// written out. Placeholders: {question}, {pred} (the extracted final answer),
// {gold} and {output_format} (Python reprs of lists of dicts, as the official
// code formats them). The text is the file prompts/a13_judge.txt here,
// built into the binary.
//
//go:embed prompts/a13_judge.txt
var JudgeTemplateA13 string

// MaxGoldEntriesA13 is how many gold entries the official judge shows (k = 50
// in llm_as_a_judge.py, --holobench_k): entries past it are not judged.
const MaxGoldEntriesA13 = 50

// PromptExtractA13 renders ExtractTemplateA13 for a reply.
func PromptExtractA13(reply string) string {
	return strings.ReplaceAll(ExtractTemplateA13, "{response}", reply)
}

// PromptJudgeA13 renders JudgeTemplateA13 for it, with final as the
// assistant's response; want is how many labels the judge must return.
// Gold entries are rows {'id': i, 'answer': text} (i from 1, at most
// MaxGoldEntriesA13); with no gold answer the ground truth is [] and one
// label (id 0) is asked for, as the official code does.
func PromptJudgeA13(it Item, final string) (prompt string, want int) {
	gold := it.Gold[:min(len(it.Gold), MaxGoldEntriesA13)]
	var g, of strings.Builder
	g.WriteString("[")
	of.WriteString("[")
	for i, ans := range gold {
		if i > 0 {
			g.WriteString(", ")
			of.WriteString(", ")
		}
		fmt.Fprintf(&g, "{'id': %d, 'answer': %s}", i+1, pyRepr(ans))
		fmt.Fprintf(&of, "{'id': %d, 'label': '...'}", i+1)
	}
	if len(gold) == 0 {
		of.WriteString("{'id': 0, 'label': '...'}")
	}
	g.WriteString("]")
	of.WriteString("]")
	return strings.NewReplacer("{question}", it.Question, "{pred}", final, "{gold}", g.String(),
		"{output_format}", of.String()).Replace(JudgeTemplateA13), max(len(gold), 1)
}

// pyRepr is Python 3's repr of a str: single quotes unless the text holds
// a single quote and no double quote; backslash, the quote, \n, \r, \t and
// unprintable characters escaped.
func pyRepr(s string) string {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	var b strings.Builder
	b.WriteByte(q)
	for i, w := 0, 0; i < len(s); i += w {
		r, size := utf8.DecodeRuneInString(s[i:])
		w = size
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, "\\x%02x", s[i]) // not UTF-8: never from JSON data
		case r == '\\' || r == rune(q):
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == ' ' || unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&b, "\\x%02x", r)
		case r < 0x10000:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			fmt.Fprintf(&b, "\\U%08x", r)
		}
	}
	b.WriteByte(q)
	return b.String()
}

// ParseExtractA13 reads the extraction step's output: a JSON object with
// "final_answer" (and "reasoning"), alone, in a code fence or in text.
func ParseExtractA13(out string) (final string, ok bool) {
	start, end := strings.Index(out, "{"), strings.LastIndex(out, "}")
	if start < 0 || end < start {
		return "", false
	}
	var v struct {
		FinalAnswer *string `json:"final_answer"`
	}
	if err := json.Unmarshal([]byte(out[start:end+1]), &v); err != nil || v.FinalAnswer == nil {
		return "", false
	}
	return *v.FinalAnswer, true
}

// cachedCalls is 1 for a reply from the call cache.
func cachedCalls(r llm.Response) int {
	if r.Cached {
		return 1
	}
	return 0
}

// judgeA13 runs the official two calls for it.
func judgeA13(ctx context.Context, c llm.Client, it Item) (Verdict, error) {
	zero := 0.0
	// The official call asks for a structured output; JSON mode is the
	// portable part of that, and the output is parsed either way.
	r, err := c.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: "user", Content: PromptExtractA13(it.Prediction)}}, Temperature: &zero, JSON: true})
	if err != nil {
		return Verdict{}, fmt.Errorf("answer: A.1.3 judge, answer extraction: %w", err)
	}
	v := Verdict{PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, Cached: r.Cached, Calls: 1, CachedCalls: cachedCalls(r)}
	if r.FinishReason == "length" {
		// The official code scores a reply whose extraction overruns as one
		// "No Match" (llm_as_a_judge.py, LengthFinishReasonError).
		v.Raw, v.Labels = "answer extraction stopped at the length limit: "+r.Content, []string{"no match"}
		return v, nil
	}
	final, ok := ParseExtractA13(r.Content)
	if !ok {
		v.Invalid, v.Raw = true, "answer extraction unreadable: "+r.Content
		return v, nil
	}
	v.Extracted = final
	prompt, want := PromptJudgeA13(it, final)
	r, err = c.Chat(ctx, llm.Request{Messages: []llm.Message{{Role: "user", Content: prompt}}, Temperature: &zero})
	if err != nil {
		return v, fmt.Errorf("answer: A.1.3 judge: %w", err)
	}
	v.Raw = r.Content
	v.PromptTokens += r.PromptTokens
	v.CompletionTokens += r.CompletionTokens
	v.Cached = v.Cached && r.Cached
	v.Calls++
	v.CachedCalls += cachedCalls(r)
	labels, ok := ParseA13(r.Content, want)
	if !ok {
		v.Invalid = true
		return v, nil
	}
	v.Labels = labels
	for _, l := range labels { // the mean over the entries (eval.py: avg_score)
		v.Score += labelScore[l] / float64(len(labels))
	}
	return v, nil
}
