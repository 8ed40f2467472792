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
	return u
}

// headerLine returns the span of the text's first line when it is a header:
// a Markdown heading, or a title — at most maxHeaderWords words, not ending
// in sentence punctuation or a comma — with more text on later lines.
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
	h := &[2]int{start, end}
	if strings.HasPrefix(line, "#") {
		return h
	}
	last, _ := utf8.DecodeLastRuneInString(line)
	if strings.ContainsRune(".!?,;:。！？", last) || len(strings.Fields(line)) > maxHeaderWords {
		return nil
	}
	return h
}

// headerText is a header the caller gives for a passage (an index's
// document title and section) as one line: its white space runs made
// single spaces.
func headerText(h string) string {
	return strings.Join(strings.Fields(h), " ")
}
