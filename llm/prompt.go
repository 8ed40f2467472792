package llm

import (
	"fmt"
	"strconv"
	"strings"
)

// Template is a prompt with {question} and {context} placeholders.
type Template string

// FactoidQA is the reader prompt for factoid QA of Taguchi et al., "Efficient
// Context Selection for Long-Context QA: No Tuning, No Iteration, Just
// Adaptive-k" (EMNLP 2025), Appendix A.1.1, verbatim except for the
// Markdown hard-line-break spaces the paper's typesetting left at line ends.
const FactoidQA Template = "Your task is to answer the question provided. To help you answer accurately, some relevant context documents have been retrieved. After reviewing them, you'll be asked the same question again. Please respond succinctly.\n" +
	"\n" +
	"**Input:**\n" +
	"- **Question:**\n" +
	"```\n" +
	"{question}\n" +
	"```\n" +
	"\n" +
	"- **Context:**\n" +
	"```\n" +
	"{context}\n" +
	"```\n" +
	"\n" +
	"- **Question:**\n" +
	"```\n" +
	"{question}\n" +
	"```\n" +
	"\n" +
	"**Response:**\n" +
	"- **Answer:**"

// Check reports a template without a {question} or {context} placeholder.
func (t Template) Check() error {
	for _, p := range []string{"{question}", "{context}"} {
		if !strings.Contains(string(t), p) {
			return fmt.Errorf("prompt template has no %s placeholder", p)
		}
	}
	return nil
}

// Render fills in the question and the context. Placeholders are replaced
// in one pass, so braces inside the question or the passages are kept as
// they are.
func (t Template) Render(question, context string) (string, error) {
	if err := t.Check(); err != nil {
		return "", err
	}
	return strings.NewReplacer("{question}", question, "{context}", context).Replace(string(t)), nil
}

// Passage is one selected passage as the prompt shows it.
type Passage struct {
	// Label cites the passage, e.g. "notes/a.md#3".
	Label string
	Text  string
}

// FormatContext joins passages into a prompt's context, numbered so that
// an answer can cite them:
//
//	[1] notes/a.md#3
//	passage text
//
//	[2] …
func FormatContext(ps []Passage) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("[" + strconv.Itoa(i+1) + "]")
		if p.Label != "" {
			b.WriteString(" " + p.Label)
		}
		b.WriteString("\n")
		b.WriteString(strings.TrimSpace(p.Text))
	}
	return b.String()
}

// A reader's window holds the prompt, the passages in it and the answer.
const (
	// DefaultAnswerReserve is the part of a reader's window kept for its
	// answer.
	DefaultAnswerReserve = 512
	// PassageOverhead is the formatting FormatContext puts around one
	// unlabelled passage ("[12]\n" and the blank line after it), in tokens,
	// with room to spare.
	PassageOverhead = 6
	// LabelledPassageOverhead is the same for a passage shown with its
	// label ("[3] doc#12\n"), as ask shows chunks.
	LabelledPassageOverhead = 8
)

// PassageBudget is what a reader's window leaves for passages when t asks
// question: window less reserve (the answer's tokens) less the prompt
// around no passages, counted by counter. It is zero or negative when the
// window cannot hold even that; callers decide whether that is an error or
// a budget of one token. A template that does not render is counted as it
// is.
func PassageBudget(window, reserve int, t Template, question string, counter interface{ Count(string) int }) int {
	empty, err := t.Render(question, "")
	if err != nil {
		empty = string(t)
	}
	return window - reserve - counter.Count(empty)
}
