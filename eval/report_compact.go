package eval

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
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
	if rep.NoGoldLabels && rep.Answers != nil {
		ww.line(wrapText(fmt.Sprintf("scorer %s · tokens %s · %d questions without gold passages (recall not measurable) · %.0f passages and %.0f tokens per context",
			rep.Scorer, rep.Encoding, rep.Questions, rep.MeanPassages, rep.MeanContextTokens), CompactWidth))
		if ww.err != nil {
			return ww.err
		}
		return writeCompactAnswers(w, rep)
	}
	ww.line(wrapText(fmt.Sprintf("scorer %s · tokens %s · %d questions (%d skipped: no gold) · %.0f passages and %.0f tokens per context · %.2f gold per question",
		rep.Scorer, rep.Encoding, rep.Questions, rep.Skipped, rep.MeanPassages, rep.MeanContextTokens, rep.MeanGold), CompactWidth))
	ww.line("")
	if ww.err != nil {
		return ww.err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	single := len(rep.Baselines) > 0
	head := "strategy\trecall\tall-gold\tk\ttokens\tvs top-k\tvs envelope\t"
	if single {
		head += "vs best single\t"
	}
	fmt.Fprintln(tw, head)
	pruning := false
	for _, r := range rep.Results {
		recall := fmt.Sprintf("%.3f", r.Recall)
		if r.Prunes {
			pruning = true
			recall = "n/c"
			if rep.SpanLabels {
				recall = fmt.Sprintf("%.3f†", r.Recall)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.1f\t%.0f\t%+.3f\t%+.3f ± %.3f\t",
			r.Strategy, recall, r.AllGold, r.MeanK, r.MeanTokens, r.GainVsTopK, r.GainVsEnvelope, r.GainSE)
		if single {
			fmt.Fprintf(tw, "%+.3f ± %.3f\t", r.GainVsBestSingle, r.BestSingleSE)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	notes := []string{"k and tokens are means per question. Gains are recall minus the recall, at the same mean tokens, " +
		"of fixed top-k (vs top-k), of the better of fixed top-k and fixed token budgets of the same scorer (vs envelope)"}
	if single {
		names := make([]string, len(rep.Baselines))
		for i, b := range rep.Baselines {
			names[i] = b.Scorer
		}
		notes[0] += fmt.Sprintf(" and of the best such envelope of the single scorers, %s (vs best single)", strings.Join(names, ", "))
	}
	notes[0] += "; ± paired bootstrap standard error. --wide prints every column."
	if pruning {
		note := "n/c: a pruning selector sends parts of passages, so its passage recall (gold passages it took anything from) is not comparable with whole passages; this data has no sentence labels (gold_spans) to measure the evidence it sends."
		if rep.SpanLabels {
			note = "†: a pruning selector's passage recall counts gold passages it took anything from, not comparable with whole passages: compare evidence recall below."
		}
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
	var ev, an bool
	for _, r := range rep.Results {
		ev = ev || r.EvidenceResult != nil
		an = an || r.PresenceResult != nil
	}
	if !ev && !an {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "\nstrategy\t"
	if ev {
		head += "evidence\ttokens\tgain\t"
	}
	if an {
		head += "answer\ttokens\tgain\t"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t", r.Strategy)
		if ev {
			if e := r.EvidenceResult; e != nil {
				fmt.Fprintf(tw, "%.3f\t%.0f\t%+.3f ± %.3f\t", e.EvidenceRecall, e.EvidenceTokens, e.EvidenceGain, e.EvidenceGainSE)
			} else {
				fmt.Fprint(tw, "\t\t\t")
			}
		}
		if an {
			if a := r.PresenceResult; a != nil {
				fmt.Fprintf(tw, "%.3f\t%.0f\t%+.3f ± %.3f\t", a.AnswerPresent, a.PresenceTokens, a.AnswerGain, a.AnswerGainSE)
			} else {
				fmt.Fprint(tw, "\t\t\t")
			}
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	var notes []string
	for _, r := range rep.Results {
		if e := r.EvidenceResult; e != nil {
			notes = append(notes, fmt.Sprintf("evidence = evidence recall, the share of a question's gold sentences (gold_spans) with ≥ %.0f %% of their bytes in the sent text, averaged over %d questions.", 100*SpanCoverage, e.EvidenceQuestions))
			break
		}
	}
	for _, r := range rep.Results {
		if a := r.PresenceResult; a != nil {
			notes = append(notes, fmt.Sprintf("answer = answer present, the share of %d questions whose SQuAD-normalised gold answer is whole words of the sent text (%d yes/no questions left out).", a.PresenceQuestions, a.YesNoQuestions))
			break
		}
	}
	notes = append(notes, "gain = the figure minus the better of fixed top-k and fixed token budgets of whole passages of the same scorer at the same mean tokens (--wide prints it), ± paired bootstrap standard error.")
	ww := &errWriter{w: w}
	for _, n := range notes {
		ww.line(wrapText(n, CompactWidth))
	}
	return ww.err
}

// writeCompactAnswers is writeAnswerTable with the columns a comparison
// reads; the run's totals stay in its heading.
func writeCompactAnswers(w io.Writer, rep *Report) error {
	a := rep.Answers
	judge := a.Judge != ""
	heading := "answers · reader " + a.Reader
	if judge {
		heading += " · judge " + a.Judge
	}
	if a.Window > 0 {
		heading += fmt.Sprintf(" · window %d tokens", a.Window)
	}
	heading += fmt.Sprintf(" · %d calls made, %d from the cache, %d failed · %d input + %d output tokens",
		a.Calls, a.Cached, a.Failures, a.InputTokens, a.OutputTokens)
	ww := &errWriter{w: w}
	ww.line("")
	ww.line(wrapText(heading, CompactWidth))
	if a.Truncated+a.Empty > 0 {
		ww.line(wrapText(fmt.Sprintf("degenerate replies, scored as they are: %d truncated (token limit or size bound), %d empty", a.Truncated, a.Empty), CompactWidth))
	}
	ww.line("")
	if ww.err != nil {
		return ww.err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "strategy\tsubem ± se\tf1\t"
	if judge {
		head += "judge ± se\tinvalid\t"
	}
	fmt.Fprintln(tw, head+"calls/q\tinput tok/q\t")
	counted := false
	for _, r := range rep.Results {
		if r.AnswerResult == nil {
			continue
		}
		ar := r.AnswerResult
		counted = counted || ar.TokensCounted
		fmt.Fprintf(tw, "%s\t%.3f ± %.3f\t%.3f\t", r.Strategy, ar.SubEM, ar.SubEMErr, ar.F1)
		if judge {
			j := "–"
			if ar.Judge != nil && ar.JudgeErr != nil {
				j = fmt.Sprintf("%.3f ± %.3f", *ar.Judge, *ar.JudgeErr)
			}
			fmt.Fprintf(tw, "%s\t%d\t", j, ar.JudgeInvalid)
		}
		fmt.Fprintf(tw, "%.2f\t%.0f\t\n", ar.LLMCalls, ar.InputTokens)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	ww.line("")
	ww.line(wrapText("--wide adds answered, em, output tokens, failed, truncated and empty replies per strategy.", CompactWidth))
	if counted {
		ww.line(wrapText("some replies carried no token usage: those tokens are our own count ("+rep.Encoding+").", CompactWidth))
	}
	if a.Stopped != "" {
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
