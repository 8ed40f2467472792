package eval

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// CompactWidth is the width WriteCompactTable keeps to: a terminal's 100
// columns, whenever the strategy names are no longer than the defaults'.
const CompactWidth = 100

// WriteCompactTable prints the report with the columns a comparison reads —
// recall, all-gold, k, tokens and the three gains — and its title and notes
// wrapped to CompactWidth. WriteTable prints every column (`eval --wide`).
func WriteCompactTable(w io.Writer, rep *Report, title string) error {
	ww := &errWriter{w: w}
	if title != "" {
		ww.line(wrapText(title, CompactWidth))
	}
	ww.line(wrapText(summary(rep), CompactWidth))
	if rep.NoGoldLabels && rep.Answers != nil {
		if ww.err != nil {
			return ww.err
		}
		return writeCompactAnswers(w, rep)
	}
	ww.line("")
	if ww.err != nil {
		return ww.err
	}
	if err := writeColumns(w, recallColumns(rep), rep.Results, true); err != nil {
		return err
	}
	notes := []string{"k and tokens are means per question. Gains are recall minus the recall, at the same mean tokens, " +
		"of fixed top-k (vs top-k), of the better of fixed top-k and fixed token budgets of the same scorer (vs envelope)"}
	if len(rep.Baselines) > 0 {
		notes[0] += fmt.Sprintf(" and of the best such envelope of the single scorers, %s (vs best single)", baselineNames(rep))
	}
	notes[0] += "; ± paired bootstrap standard error. --wide prints every column."
	if note := pruningNote(rep); note != "" {
		notes = append(notes, note)
	}
	ww.line("")
	for _, n := range notes {
		ww.line(wrapText(n, CompactWidth))
	}
	if ww.err != nil {
		return ww.err
	}
	if err := writeCompactEvidence(w, rep); err != nil {
		return err
	}
	if err := writeVersus(w, rep, true); err != nil {
		return err
	}
	if rep.Answers != nil {
		if err := writeCompactAnswers(w, rep); err != nil {
			return err
		}
	}
	return writeSelectorCalls(w, rep)
}

// writeCompactEvidence is writeEvidenceTable without the envelope columns
// (the gains carry them).
func writeCompactEvidence(w io.Writer, rep *Report) error {
	return writeEvidence(w, rep, true, func(ev *EvidenceResult, an *PresenceResult) error {
		var notes []string
		if ev != nil {
			notes = append(notes, fmt.Sprintf("evidence = evidence recall, the share of a question's gold sentences (gold_spans) with ≥ %.0f %% of their bytes in the sent text, averaged over %d questions.", 100*SpanCoverage, ev.EvidenceQuestions))
		}
		if an != nil {
			notes = append(notes, fmt.Sprintf("answer = answer present, the share of %d questions whose SQuAD-normalised gold answer is whole words of the sent text (%d yes/no questions left out).", an.PresenceQuestions, an.YesNoQuestions))
		}
		notes = append(notes, "gain = the figure minus the better of fixed top-k and fixed token budgets of whole passages of the same scorer at the same mean tokens (--wide prints it), ± paired bootstrap standard error.")
		ww := &errWriter{w: w}
		for _, n := range notes {
			ww.line(wrapText(n, CompactWidth))
		}
		return ww.err
	})
}

// writeCompactAnswers is writeAnswerTable with the columns a comparison
// reads; the run's totals stay in its heading.
func writeCompactAnswers(w io.Writer, rep *Report) error {
	heading, degenerate := answersHeading(rep.Answers)
	ww := &errWriter{w: w}
	ww.line("")
	ww.line(wrapText(heading, CompactWidth))
	if degenerate != "" {
		ww.line(wrapText(degenerate, CompactWidth))
	}
	ww.line("")
	if ww.err != nil {
		return ww.err
	}
	counted, err := writeAnswerRows(w, rep, true)
	if err != nil {
		return err
	}
	ww.line("")
	ww.line(wrapText("--wide adds answered, em, output tokens, failed, truncated and empty replies per strategy.", CompactWidth))
	if counted {
		ww.line(wrapText("some replies carried no token usage: those tokens are our own count ("+rep.Encoding+").", CompactWidth))
	}
	if a := rep.Answers; a.Stopped != "" {
		ww.line(wrapText(fmt.Sprintf("stopped early: %s (figures cover the answers made)", a.Stopped), CompactWidth))
	}
	return ww.err
}

// errWriter writes lines until the first error, which it keeps.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) line(s string) {
	if e.err == nil {
		_, e.err = fmt.Fprintln(e.w, s)
	}
}

// wrapText breaks s into lines of at most width runes: after the " · "
// separators of a heading where it can, else between words. A word longer
// than width stands alone on its line.
func wrapText(s string, width int) string {
	if utf8.RuneCountInString(s) <= width {
		return s
	}
	parts := strings.Split(s, " · ")
	for i := range parts[:len(parts)-1] {
		parts[i] += " ·" // the separator ends its line
	}
	var lines []string
	cur := ""
	for _, p := range parts {
		if cur != "" && utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(p) <= width {
			cur += " " + p
			continue
		}
		if cur != "" {
			lines = append(lines, cur)
		}
		cur = p
		if utf8.RuneCountInString(cur) > width { // one part too long: between words
			words := wrapWords(cur, width)
			lines = append(lines, words[:len(words)-1]...)
			cur = words[len(words)-1]
		}
	}
	return strings.Join(append(lines, cur), "\n")
}

// wrapWords fills lines of at most width runes with the words of s.
func wrapWords(s string, width int) []string {
	var words []string
	for _, w := range strings.Fields(s) {
		if w == "·" && len(words) > 0 { // a separator ends the line of the word before it
			words[len(words)-1] += " ·"
			continue
		}
		words = append(words, w)
	}
	var lines []string
	cur := ""
	for _, word := range words {
		switch {
		case cur == "":
			cur = word
		case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(word) <= width:
			cur += " " + word
		default:
			lines = append(lines, cur)
			cur = word
		}
	}
	return append(lines, cur)
}
