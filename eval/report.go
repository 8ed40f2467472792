package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints the report as an aligned table.
func WriteTable(w io.Writer, rep *Report) error {
	if rep.NoGoldLabels && rep.Answers != nil {
		fmt.Fprintf(w, "scorer %s · tokens %s · %d questions without gold passages (recall not measurable) · %.0f passages and %.0f tokens per context\n",
			rep.Scorer, rep.Encoding, rep.Questions, rep.MeanPassages, rep.MeanContextTokens)
		return writeAnswerTable(w, rep)
	}
	fmt.Fprintf(w, "scorer %s · tokens %s · %d questions (%d skipped: no gold) · %.0f passages and %.0f tokens per context · %.2f gold per question\n\n",
		rep.Scorer, rep.Encoding, rep.Questions, rep.Skipped, rep.MeanPassages, rep.MeanContextTokens, rep.MeanGold)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	single := len(rep.Baselines) > 0
	head := "strategy\trecall\tprecision\tall-gold\tmean k\tmean tokens\ttoken %\treduction %\ttrue-k\tdiff-k\ttop-k@tokens\tgain\tenvelope@tokens\tgain vs envelope\t"
	if single {
		head += "best single@tokens\tgain vs best single\t"
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
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.3f\t%.1f\t%.0f\t%.2f\t%.1f\t%.1f\t%.1f\t%.3f\t%+.3f\t%.3f\t%+.3f ± %.3f\t",
			r.Strategy, recall, r.Precision, r.AllGold, r.MeanK, r.MeanTokens, 100*r.TokenFraction, r.ReductionPct,
			r.MeanTrueK, r.DiffK, r.FrontierRecall, r.GainVsTopK, r.EnvelopeRecall, r.GainVsEnvelope, r.GainSE)
		if single {
			fmt.Fprintf(tw, "%.3f\t%+.3f ± %.3f\t", r.BestSingleRecall, r.GainVsBestSingle, r.BestSingleSE)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	_, err := fmt.Fprintln(w, "\ngain = recall − recall of fixed top-k interpolated at the same mean tokens (top-k@tokens).\n"+
		"gain vs envelope = recall − the better of fixed top-k and fixed token budgets of the same scorer at the same mean tokens, ± paired bootstrap standard error.")
	if err == nil && single {
		names := make([]string, len(rep.Baselines))
		for i, b := range rep.Baselines {
			names[i] = b.Scorer
		}
		_, err = fmt.Fprintf(w, "gain vs best single = recall − the best top-k/budget envelope of the single scorers (%s).\n", strings.Join(names, ", "))
	}
	if err == nil && pruning {
		note := "n/c: a pruning selector sends parts of passages, so its passage recall (gold passages it took anything from) is not comparable with whole passages; this data has no sentence labels (gold_spans) to measure the evidence it sends."
		if rep.SpanLabels {
			note = "†: a pruning selector's passage recall counts gold passages it took anything from, not comparable with whole passages: compare evidence recall below."
		}
		_, err = fmt.Fprintln(w, note)
	}
	if err != nil {
		return err
	}
	if err := writeEvidenceTable(w, rep); err != nil {
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
		head += "evidence recall\ttokens\tpassage envelope@tokens\tgain\t"
	}
	if an {
		head += "answer present\ttokens\tpassage envelope@tokens\tgain\t"
	}
	fmt.Fprintln(tw, head)
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t", r.Strategy)
		if ev {
			if e := r.EvidenceResult; e != nil {
				fmt.Fprintf(tw, "%.3f\t%.0f\t%.3f\t%+.3f ± %.3f\t", e.EvidenceRecall, e.EvidenceTokens, e.EvidenceEnvelope, e.EvidenceGain, e.EvidenceGainSE)
			} else {
				fmt.Fprint(tw, "\t\t\t\t")
			}
		}
		if an {
			if a := r.PresenceResult; a != nil {
				fmt.Fprintf(tw, "%.3f\t%.0f\t%.3f\t%+.3f ± %.3f\t", a.AnswerPresent, a.PresenceTokens, a.AnswerEnvelope, a.AnswerGain, a.AnswerGainSE)
			} else {
				fmt.Fprint(tw, "\t\t\t\t")
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
			notes = append(notes, fmt.Sprintf("evidence recall = share of a question's gold sentences (gold_spans) with ≥ %.0f %% of their bytes in the sent text, averaged over %d questions", 100*SpanCoverage, e.EvidenceQuestions))
			break
		}
	}
	for _, r := range rep.Results {
		if a := r.PresenceResult; a != nil {
			notes = append(notes, fmt.Sprintf("answer present = share of %d questions whose SQuAD-normalised gold answer is whole words of the sent text (%d yes/no questions left out)", a.PresenceQuestions, a.YesNoQuestions))
			break
		}
	}
	notes = append(notes, "passage envelope = the better of fixed top-k and fixed token budgets of whole passages of the same scorer at the same mean tokens; gain ± paired bootstrap standard error.")
	_, err := fmt.Fprintln(w, strings.Join(notes, ".\n"))
	return err
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
