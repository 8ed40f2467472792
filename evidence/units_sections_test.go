package evidence_test

import (
	"testing"

	"github.com/ctxsel/ctxsel/evidence"
)

// A chunk of several documents: each title line after a blank line opens
// a section; a title-like line inside prose does not, nor does the
// passage's own first line (its header).
func TestSplitHeadings(t *testing.T) {
	text := "Ed Wood\nEd Wood was a filmmaker. He was American.\n\nScott Derrickson\nScott Derrickson is a director.\n\n## Career\nHe made films.\nNot A Heading\nsaid nobody."
	u := evidence.Split(text)
	var got []string
	for j, sp := range u.Sentences {
		if u.Headings != nil && u.Headings[j] {
			got = append(got, text[sp[0]:sp[1]])
		}
	}
	if len(got) != 2 || got[0] != "Scott Derrickson" || got[1] != "## Career" {
		t.Fatalf("headings %q of %q", got, sentences(text, u))
	}
	if u := evidence.Split("Title\nOne sentence. Two sentences."); u.Headings != nil {
		t.Fatalf("a paragraph has headings: %v", u.Headings)
	}
}

func sentences(text string, u evidence.Units) []string {
	var out []string
	for _, sp := range u.Sentences {
		out = append(out, text[sp[0]:sp[1]])
	}
	return out
}
