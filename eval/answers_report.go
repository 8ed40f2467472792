package eval

import (
	"encoding/json"
	"fmt"
	"io"
)

// writeAnswerTable prints the answer columns: per strategy the answer
// metrics, the reader's calls and tokens per question, and failures.
func writeAnswerTable(w io.Writer, rep *Report) error {
	heading, degenerate := answersHeading(rep.Answers)
	fmt.Fprintf(w, "\n%s\n", heading)
	if degenerate != "" {
		fmt.Fprintln(w, degenerate)
	}
	fmt.Fprintln(w)
	counted, err := writeAnswerRows(w, rep, false)
	if err != nil {
		return err
	}
	if counted {
		fmt.Fprintln(w, "\nsome replies carried no token usage: those tokens are our own count ("+rep.Encoding+").")
	}
	if a := rep.Answers; a.Stopped != "" {
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
