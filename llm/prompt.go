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

// RenderVerbatim fills in the question and the context exactly as the
// template is written, placeholders replaced in one pass, with no fence
// added or lengthened: a paper's code's prompt byte for byte (LaRA's reader
// prompts, as LDAR sends them). A passage may then close a block or write
// a question of its own, so it is only for texts the caller trusts, a
// benchmark's documents; Render is for everything else.
func (t Template) RenderVerbatim(question, context string) (string, error) {
	if err := t.Check(); err != nil {
		return "", err
	}
	return strings.NewReplacer("{question}", question, "{context}", context).Replace(string(t)), nil
}

// Render fills in the question and the context. Placeholders are replaced
// in one pass, so braces inside the question or the passages are kept as
// they are.
//
// No text filled in can end the block it is put in, so no passage can close
// the context and write a question or an answer of its own: where the
// template fences a placeholder (a line of ``` before it, one after, as
// FactoidQA does), the fence is made longer than the longest run of its
// character in the text (CommonMark closes a fence only with one at least
// as long); a context the template leaves bare (Self-Route's prompt) is put
// in a fence of its own, on lines of its own. For a text without a run of three backticks, a
// fenced placeholder renders exactly as the template is written.
func (t Template) Render(question, context string) (string, error) {
	if err := t.Check(); err != nil {
		return "", err
	}
	var b strings.Builder
	b.Grow(len(t) + 2*len(question) + len(context) + 16)
	s := string(t)
	for {
		i, name := nextPlaceholder(s)
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		value := question
		if name == "{context}" {
			value = context
		}
		before, after := s[:i], s[i+len(name):]
		open, c := fenceEnding(before)
		closing := 0
		if open > 0 {
			closing = fenceStarting(after, c)
		}
		switch {
		case open > 0 && closing > 0:
			n := max(open, closing, longestRun(value, c)+1)
			b.WriteString(before[:len(before)-open-1]) // up to the fence line
			writeFenced(&b, c, n, value)
			after = after[1+closing:] // past "\n" and the closing fence
		case name == "{context}":
			// A fence must have lines of its own.
			b.WriteString(before)
			if before != "" && !strings.HasSuffix(before, "\n") {
				b.WriteByte('\n')
			}
			b.WriteString(Fence(value))
			if after != "" && !strings.HasPrefix(after, "\n") {
				b.WriteByte('\n')
			}
		default:
			b.WriteString(before)
			b.WriteString(value)
		}
		s = after
	}
}

// nextPlaceholder finds the first {question} or {context} in s.
func nextPlaceholder(s string) (int, string) {
	q, c := strings.Index(s, "{question}"), strings.Index(s, "{context}")
	switch {
	case q < 0 && c < 0:
		return -1, ""
	case c < 0 || q >= 0 && q < c:
		return q, "{question}"
	}
	return c, "{context}"
}

// fenceEnding reports the length and character of the fence line that s
// ends with ("...\n```\n"), or 0.
func fenceEnding(s string) (int, byte) {
	if !strings.HasSuffix(s, "\n") {
		return 0, 0
	}
	line := s[strings.LastIndexByte(s[:len(s)-1], '\n')+1 : len(s)-1]
	if len(line) < 3 || (line[0] != '`' && line[0] != '~') || strings.Trim(line, line[:1]) != "" {
		return 0, 0
	}
	return len(line), line[0]
}

// fenceStarting reports the length of the fence line of character c that
// s starts with ("\n```\n..." or "\n```" at its end), or 0.
func fenceStarting(s string, c byte) int {
	if !strings.HasPrefix(s, "\n") {
		return 0
	}
	n := 0
	for 1+n < len(s) && s[1+n] == c {
		n++
	}
	if n < 3 || (1+n < len(s) && s[1+n] != '\n') {
		return 0
	}
	return n
}

// longestRun is the longest run of c in s.
func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

// Fence puts text in a code fence of backticks longer than any run of them
// in text (at least three), so that nothing in text can end the block.
func Fence(text string) string {
	var b strings.Builder
	writeFenced(&b, '`', max(3, longestRun(text, '`')+1), text)
	return b.String()
}

func writeFenced(b *strings.Builder, c byte, n int, value string) {
	fence := strings.Repeat(string(c), n)
	b.WriteString(fence)
	b.WriteByte('\n')
	b.WriteString(value)
	b.WriteByte('\n')
	b.WriteString(fence)
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
