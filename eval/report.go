package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the report as an aligned table, every column.
func WriteTable(w io.Writer, rep *Report) error {
	if rep.NoGoldLabels && rep.Answers != nil {
		fmt.Fprintln(w, summary(rep))
		return writeAnswerTable(w, rep)
	}
	fmt.Fprintf(w, "%s\n\n", summary(rep))
	if err := writeColumns(w, recallColumns(rep), rep.Results, false); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\ngain = recall − recall of fixed top-k interpolated at the same mean tokens (top-k@tokens).\n"+
		"gain vs envelope = recall − the better of fixed top-k and fixed token budgets of the same scorer at the same mean tokens, ± paired bootstrap standard error.\n"+
		"p10 / median / p90 / max tokens: the tokens sent per question (nearest rank); < ½ budget: the share of questions that sent less than half their strategy's token budget (– without one).")
	if err == nil && len(rep.Baselines) > 0 {
		_, err = fmt.Fprintf(w, "gain vs best single = recall − the best top-k/budget envelope of the single scorers (%s).\n", baselineNames(rep))
	}
	if note := pruningNote(rep); err == nil && note != "" {
		_, err = fmt.Fprintln(w, note)
	}
	if err != nil {
		return err
	}
	if err := writeEvidenceTable(w, rep); err != nil {
		return err
	}
	if err := writeVersus(w, rep, false); err != nil {
		return err
	}
	if rep.Answers != nil {
		if err := writeAnswerTable(w, rep); err != nil {
			return err
		}
	}
	return writeSelectorCalls(w, rep)
}

// writeEvidenceTable lists what each strategy sends, measured on the
// sentence labels (evidence recall) and the answers (answer present),
// each against whole passages' top-k/budget envelope at its own tokens.
func writeEvidenceTable(w io.Writer, rep *Report) error {
	return writeEvidence(w, rep, false, func(ev *EvidenceResult, an *PresenceResult) error {
		var notes []string
		if ev != nil {
			notes = append(notes, fmt.Sprintf("evidence recall = share of a question's gold sentences (gold_spans) with ≥ %.0f %% of their bytes in the sent text, averaged over %d questions", 100*SpanCoverage, ev.EvidenceQuestions))
		}
		if an != nil {
			notes = append(notes, fmt.Sprintf("answer present = share of %d questions whose SQuAD-normalised gold answer is whole words of the sent text (%d yes/no questions left out)", an.PresenceQuestions, an.YesNoQuestions))
		}
		notes = append(notes, "passage envelope = the better of fixed top-k and fixed token budgets of whole passages of the same scorer at the same mean tokens; gain ± paired bootstrap standard error.")
		_, err := fmt.Fprintln(w, strings.Join(notes, ".\n"))
		return err
	})
}

// WriteJSON writes the report, one object per strategy under "results".
func WriteJSON(w io.Writer, rep *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	var v any = rep
	if rep.NoGoldLabels {
		m, err := blankRecall(rep)
		if err != nil {
			return fmt.Errorf("write json: %w", err)
		}
		v = m
	}
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write json: %w", err)
	}
	return nil
}

// writeSelectorCalls lists the own model usage of selectors that read
// texts, apart from the selected context's tokens above.
func writeSelectorCalls(w io.Writer, rep *Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := false
	for _, r := range rep.Results {
		if r.Selector == nil {
			continue
		}
		if !header {
			fmt.Fprintln(tw, "\nselector call\tprompt tokens\tcompletion tokens\tinvalid rate\t")
			header = true
		}
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.3f\t\n", r.Strategy, r.Selector.MeanPromptTokens, r.Selector.MeanCompletionTokens, r.Selector.InvalidRate)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}
