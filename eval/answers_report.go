package eval

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// writeAnswerTable prints the answer columns: per strategy the answer
// metrics, the reader's calls and tokens per question, and failures.
func writeAnswerTable(w io.Writer, rep *Report) error {
	a := rep.Answers
	judge := a.Judge != ""
	fmt.Fprintf(w, "\nanswers · reader %s", a.Reader)
	if judge {
		fmt.Fprintf(w, " · judge %s", a.Judge)
	}
	if a.Window > 0 {
		fmt.Fprintf(w, " · window %d tokens", a.Window)
	}
	fmt.Fprintf(w, " · %d calls made, %d from the cache, %d failed · %d input + %d output tokens\n",
		a.Calls, a.Cached, a.Failures, a.InputTokens, a.OutputTokens)
	if a.Truncated+a.Empty > 0 {
		fmt.Fprintf(w, "degenerate replies, scored as they are: %d truncated (token limit or size bound), %d empty\n", a.Truncated, a.Empty)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "strategy\tanswered\tsubem ± se\tem\tf1\t"
	if judge {
		head += "judge ± se\tinvalid\t"
	}
	fmt.Fprintln(tw, head+"mean k\tcalls/q\tinput tok/q\toutput tok/q\tfailures\ttruncated\tempty\t")
	counted := false
	for _, r := range rep.Results {
		if r.AnswerResult == nil {
			continue
		}
		ar := r.AnswerResult
		counted = counted || ar.TokensCounted
		fmt.Fprintf(tw, "%s\t%d\t%.3f ± %.3f\t%.3f\t%.3f\t", r.Strategy, ar.Answered, ar.SubEM, ar.SubEMErr, ar.EM, ar.F1)
		if judge {
			j := "–"
			if ar.Judge != nil && ar.JudgeErr != nil {
				j = fmt.Sprintf("%.3f ± %.3f", *ar.Judge, *ar.JudgeErr)
			}
			fmt.Fprintf(tw, "%s\t%d\t", j, ar.JudgeInvalid)
		}
		fmt.Fprintf(tw, "%.1f\t%.2f\t%.0f\t%.0f\t%d\t%d\t%d\t\n", r.MeanK, ar.LLMCalls, ar.InputTokens, ar.OutputTokens, ar.LLMFailures,
			ar.LLMTruncated, ar.LLMEmpty)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	if counted {
		fmt.Fprintln(w, "\nsome replies carried no token usage: those tokens are our own count ("+rep.Encoding+").")
	}
	if a.Stopped != "" {
		fmt.Fprintf(w, "\nstopped early: %s (figures cover the answers made)\n", a.Stopped)
	}
	return nil
}

// recallFields are the JSON fields that need gold passages.
var recallFields = []string{"recall", "precision", "all_gold", "mean_true_k", "diff_k", "frontier_recall", "gain_vs_topk"}

// blankRecall re-encodes a report without gold labels with its recall
// fields left out, so no one reads a 0 as a measurement.
func blankRecall(rep *Report) (any, error) {
	b, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for _, r := range m["results"].([]any) {
		for _, f := range recallFields {
			delete(r.(map[string]any), f)
		}
	}
	for _, k := range []string{"frontier", "answer_frontier", "answer_budget_frontier"} {
		delete(m, k) // their points are named "recall"
	}
	return m, nil
}
