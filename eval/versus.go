package eval

import (
	"fmt"
	"io"
)

// Versus is a row's paired difference from the row Options.Versus names,
// question by question on the same questions: this row's figure minus the
// named row's, with the standard error of the mean difference (the paired
// differences' standard deviation over √n). Which of two strategies
// keeps more, and at what cost, without the envelope in between.
type Versus struct {
	Strategy string `json:"strategy"`
	// Recall is passage recall over the questions with gold passages;
	// absent on data without them.
	Recall   *float64 `json:"recall_diff,omitempty"`
	RecallSE *float64 `json:"recall_diff_se,omitempty"`
	// EvidenceRecall and TouchedRecall are over the questions with
	// sentence labels (gold_spans); absent without them.
	EvidenceRecall   *float64 `json:"evidence_recall_diff,omitempty"`
	EvidenceRecallSE *float64 `json:"evidence_recall_diff_se,omitempty"`
	TouchedRecall    *float64 `json:"touched_recall_diff,omitempty"`
	TouchedRecallSE  *float64 `json:"touched_recall_diff_se,omitempty"`
	// Tokens is the difference in tokens sent, over every question.
	Tokens   float64 `json:"tokens_diff"`
	TokensSE float64 `json:"tokens_diff_se"`
}

// versusIndex is the slot Options.Versus names — a spec as given in
// Options.Strategies, or a row's name — or -1.
func versusIndex(opt Options, slots []strategySlot) (int, error) {
	if opt.Versus == "" {
		return -1, nil
	}
	for i, sl := range slots {
		if sl.name == opt.Versus || (sl.spec != "" && sl.spec == opt.Versus) {
			return i, nil
		}
	}
	return -1, fmt.Errorf("versus %q is none of the strategies measured", opt.Versus)
}

// versusResults fills every other row's Versus against row ref.
func versusResults(rep *Report, stats []questionStats, ref int) {
	if ref < 0 {
		return
	}
	for si := range rep.Results {
		if si == ref {
			continue
		}
		v := &Versus{Strategy: rep.Results[ref].Strategy}
		if !rep.NoGoldLabels {
			r, rs := pairedMean(stats, func(q *questionStats, s selStats) (float64, bool) {
				return float64(s.gold) / float64(q.gold), q.gold > 0
			}, si, ref)
			v.Recall, v.RecallSE = &r, &rs
		}
		v.Tokens, v.TokensSE = pairedMean(stats, func(_ *questionStats, s selStats) (float64, bool) {
			return float64(s.tokens), true
		}, si, ref)
		if rep.EvidenceFrontier != nil {
			e, es := pairedMean(stats, func(q *questionStats, s selStats) (float64, bool) {
				return float64(s.spansKept) / float64(q.ev.total), q.ev != nil && q.ev.total > 0
			}, si, ref)
			t, ts := pairedMean(stats, func(q *questionStats, s selStats) (float64, bool) {
				return float64(s.spansTouched) / float64(q.ev.total), q.ev != nil && q.ev.total > 0
			}, si, ref)
			v.EvidenceRecall, v.EvidenceRecallSE, v.TouchedRecall, v.TouchedRecallSE = &e, &es, &t, &ts
		}
		rep.Results[si].Versus = v
	}
}

// pairedMean is the mean over the questions of (figure of row a − figure
// of row b) and its standard error; fig's ok false leaves a question out.
func pairedMean(stats []questionStats, fig func(*questionStats, selStats) (float64, bool), a, b int) (mean, se float64) {
	var diffs []float64
	for i := range stats {
		q := &stats[i]
		x, ok := fig(q, q.perStrategy[a])
		if !ok {
			continue
		}
		y, _ := fig(q, q.perStrategy[b])
		diffs = append(diffs, x-y)
		mean += x - y
	}
	if len(diffs) == 0 {
		return 0, 0
	}
	return mean / float64(len(diffs)), stdErr(diffs)
}

// writeVersus prints the paired differences (after a blank line) when a
// row was named to compare with; nothing otherwise.
func writeVersus(w io.Writer, rep *Report, compact bool) error {
	var ref string
	ev, rec := false, false
	for _, r := range rep.Results {
		if r.Versus != nil {
			ref, ev, rec = r.Versus.Strategy, r.Versus.EvidenceRecall != nil, r.Versus.Recall != nil
		}
	}
	if ref == "" {
		return nil
	}
	pm := func(v, se float64) string { return fmt.Sprintf("%+.3f ± %.3f", v, se) }
	cols := []column[Result]{both("strategy", func(r Result) string { return r.Strategy })}
	if rec {
		// beside the evidence columns, passage recall is a --wide column
		c := column[Result]{"Δ recall", "", func(r Result) string { return pm(*r.Versus.Recall, *r.Versus.RecallSE) }}
		if !ev {
			c.compact = c.wide
		}
		cols = append(cols, c)
	}
	if ev {
		cols = append(cols,
			both("Δ evidence", func(r Result) string { return pm(*r.Versus.EvidenceRecall, *r.Versus.EvidenceRecallSE) }),
			both("Δ touched", func(r Result) string { return pm(*r.Versus.TouchedRecall, *r.Versus.TouchedRecallSE) }))
	}
	cols = append(cols, both("Δ tokens", func(r Result) string { return fmt.Sprintf("%+.0f ± %.0f", r.Versus.Tokens, r.Versus.TokensSE) }))
	var rows []Result
	for _, r := range rep.Results {
		if r.Versus != nil {
			rows = append(rows, r)
		}
	}
	ww := &errWriter{w: w}
	ww.line("")
	ww.line(wrapText(fmt.Sprintf("against %s, question by question (this row minus it, ± standard error of the paired mean):", ref), CompactWidth))
	if ww.err != nil {
		return ww.err
	}
	return writeColumns(w, cols, rows, compact)
}
