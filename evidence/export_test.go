package evidence

import "github.com/ctxsel/ctxsel/chunk"

// PreUnitsSplit is Split as it was before the units (040ebf1), for the
// tests that check a text whose structures are off splits as it did.
func PreUnitsSplit(text string) Units {
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
