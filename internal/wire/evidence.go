package wire

import "github.com/ctxsel/ctxsel"

// AppendEvidence appends what a pruning selector kept of one passage
// (ctxsel.Evidence) as the object its JSON tags name: the header's and the
// kept sentences' byte spans into the passage text, the title and the
// lines above it sent (when any), the text sent, its
// tokens and the passage's, and why the cut fell where it did.
func AppendEvidence(b []byte, e *ctxsel.Evidence) []byte {
	b = append(b, '{')
	if e.Header != nil {
		b = append(b, `"header":`...)
		b = appendSpan(b, *e.Header)
		b = append(b, ',')
	}
	if e.Title != "" {
		b = append(b, `"title":`...)
		b = AppendString(b, e.Title)
		b = append(b, ',')
	}
	if e.Above != "" {
		b = append(b, `"above":`...)
		b = AppendString(b, e.Above)
		b = append(b, ',')
	}
	b = append(b, `"spans":`...)
	b = AppendArray(b, len(e.Spans), func(b []byte, i int) []byte { return appendSpan(b, e.Spans[i]) })
	b = append(b, `,"text":`...)
	b = AppendString(b, e.Text)
	b = append(b, `,"tokens":`...)
	b = AppendInt(b, e.Tokens)
	b = append(b, `,"passage_tokens":`...)
	b = AppendInt(b, e.PassageTokens)
	b = append(b, `,"kept_score":`...)
	b = AppendFloat(b, e.KeptScore)
	if e.DroppedScore != nil {
		b = append(b, `,"dropped_score":`...)
		b = AppendFloat(b, *e.DroppedScore)
	}
	b = append(b, `,"sentences":`...)
	b = AppendInt(b, e.Sentences)
	b = append(b, `,"why":`...)
	b = AppendString(b, e.Why)
	return append(b, '}')
}

// appendEvidenceList appends the "evidence" member of a selection that
// pruned passages: one object per selected passage, aligned with "ids".
func appendEvidenceList(b []byte, ev []ctxsel.Evidence) []byte {
	b = append(b, `,"evidence":`...)
	return AppendArray(b, len(ev), func(b []byte, i int) []byte { return AppendEvidence(b, &ev[i]) })
}

func appendSpan(b []byte, sp [2]int) []byte { return appendInts(b, sp[:]) }
