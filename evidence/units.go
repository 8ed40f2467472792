package evidence

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel/chunk"
)

// Units are a passage's evidence units: its header and its sentences, as
// byte offsets [start, end) into the passage text.
type Units struct {
	// Header is the passage's context line, or nil: its first line when
	// that line is a Markdown heading or a title (short, no closing
	// punctuation, followed by more text).
	Header *[2]int
	// Sentences are the sentences after the header (chunk.SplitSentences):
	// in order, disjoint, none holding the header.
	Sentences [][2]int
	// Headings marks the sentences that open a section inside the passage
	// (a chunk of several documents or sections): a line of its own after
	// a blank line that reads as a title, or a Markdown heading, with more
	// text after it. nil when there is none.
	Headings []bool
}

// maxHeaderWords is the longest first line read as a title.
const maxHeaderWords = 16

// Split returns the evidence units of a passage. Pure: no header and no
// sentences for an empty or all-space text; any string is split (invalid
// UTF-8 gives spans inside it, but Selector rejects such texts).
func Split(text string) Units {
	sents := chunk.SplitSentences(text)
	var u Units
	if len(sents) > 1 {
		if h := headerLine(text); h != nil && sents[0] == *h {
			u.Header, sents = h, sents[1:]
		}
	}
	u.Sentences = sents
	for j, sp := range sents {
		if j < len(sents)-1 && isHeading(text, sp) {
			if u.Headings == nil {
				u.Headings = make([]bool, len(sents))
			}
			u.Headings[j] = true
		}
	}
	return u
}

// isHeading reports whether the sentence sp of text is a section heading:
// the whole of its line, a Markdown heading, or a title (titleLike) after
// a blank line.
func isHeading(text string, sp [2]int) bool {
	before, after := text[:sp[0]], text[sp[1]:]
	lineStart := strings.LastIndexByte(before, '\n') + 1
	if strings.TrimSpace(before[lineStart:]) != "" || lineStart == 0 {
		return false // not at a line's start, or the passage's own first line
	}
	if nl := strings.IndexByte(after, '\n'); strings.TrimSpace(after[:max(nl, 0)]) != "" || nl < 0 {
		return false // not a whole line, or nothing after it
	}
	line := text[sp[0]:sp[1]]
	if strings.HasPrefix(line, "#") {
		return true
	}
	prev := strings.TrimRightFunc(before[:lineStart-1], func(r rune) bool { return r == ' ' || r == '\t' || r == '\r' })
	return strings.HasSuffix(prev, "\n") && titleLike(line)
}

// headerLine returns the span of the text's first line when it is a header:
// a Markdown heading, or a title — at most maxHeaderWords words, not
// starting in lower case, not ending in sentence punctuation or a comma
// (closing quotes aside) — with more text on later lines.
func headerLine(text string) *[2]int {
	start := len(text) - len(strings.TrimLeftFunc(text, unicode.IsSpace))
	nl := strings.IndexByte(text[start:], '\n')
	if nl < 0 {
		return nil
	}
	end := start + len(strings.TrimRightFunc(text[start:start+nl], unicode.IsSpace))
	if end <= start || strings.TrimSpace(text[start+nl:]) == "" {
		return nil
	}
	line := text[start:end]
	if strings.HasPrefix(line, "#") || titleLike(line) {
		return &[2]int{start, end}
	}
	return nil
}

// titleLike reports a line that reads as a title: at most maxHeaderWords
// words, not starting in lower case, not ending in sentence punctuation
// or a comma (closing quotes aside).
func titleLike(line string) bool {
	// A sentence's end may hide behind closing quotes ("… “Humbug.”"), and
	// a chunk cut mid-sentence starts in lower case: neither is a title.
	last, _ := utf8.DecodeLastRuneInString(strings.TrimRight(line, "\"'”’»)]"))
	first, _ := utf8.DecodeRuneInString(line)
	return !strings.ContainsRune(".!?,;:。！？", last) && !unicode.IsLower(first) && len(strings.Fields(line)) <= maxHeaderWords
}

// headerText is a header the caller gives for a passage (an index's
// document title and section) as one line: its white space runs made
// single spaces.
func headerText(h string) string {
	return strings.Join(strings.Fields(h), " ")
}
