package eval

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// The report's tables are lists of columns, printed whole by WriteTable
// (`eval --wide`) and in part by WriteCompactTable: one column list per
// table keeps the two alike in every cell they share.

// column is one column of a table of Ts: its heading in the wide table,
// its heading in the compact one ("" leaves it out there), and its cell.
type column[T any] struct {
	wide, compact string
	cell          func(T) string
}

// both is a column of the wide and the compact table under one heading.
func both[T any](head string, cell func(T) string) column[T] { return column[T]{head, head, cell} }

// writeColumns prints rows under cols, right-aligned: every column, or
// with compact those that have a compact heading.
func writeColumns[T any](w io.Writer, cols []column[T], rows []T, compact bool) error {
	shown := cols
	if compact {
		shown = nil
		for _, c := range cols {
			if c.compact != "" {
				shown = append(shown, c)
			}
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	var line strings.Builder
	for _, c := range shown {
		if compact {
			line.WriteString(c.compact)
		} else {
			line.WriteString(c.wide)
		}
		line.WriteByte('\t')
	}
	fmt.Fprintln(tw, line.String())
	for _, r := range rows {
		line.Reset()
		for _, c := range shown {
			line.WriteString(c.cell(r))
			line.WriteByte('\t')
		}
		fmt.Fprintln(tw, line.String())
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

// recallColumns are the main table's columns: recall against gold
// passages, tokens and the gains over the baselines.
func recallColumns(rep *Report) []column[Result] {
	f := func(format string, v func(Result) float64) func(Result) string {
		return func(r Result) string { return fmt.Sprintf(format, v(r)) }
	}
	cols := []column[Result]{
		both("strategy", func(r Result) string { return r.Strategy }),
		both("recall", func(r Result) string { return recallCell(rep, r) }),
		{"precision", "", f("%.3f", func(r Result) float64 { return r.Precision })},
		both("all-gold", f("%.3f", func(r Result) float64 { return r.AllGold })),
		{"mean k", "k", f("%.1f", func(r Result) float64 { return r.MeanK })},
		{"mean tokens", "tokens", f("%.0f", func(r Result) float64 { return r.MeanTokens })},
		{"token %", "", f("%.2f", func(r Result) float64 { return 100 * r.TokenFraction })},
		{"reduction %", "", f("%.1f", func(r Result) float64 { return r.ReductionPct })},
		{"true-k", "", f("%.1f", func(r Result) float64 { return r.MeanTrueK })},
		{"diff-k", "", f("%.1f", func(r Result) float64 { return r.DiffK })},
		{"top-k@tokens", "", f("%.3f", func(r Result) float64 { return r.FrontierRecall })},
		{"gain", "vs top-k", f("%+.3f", func(r Result) float64 { return r.GainVsTopK })},
		{"envelope@tokens", "", f("%.3f", func(r Result) float64 { return r.EnvelopeRecall })},
		{"gain vs envelope", "vs envelope", func(r Result) string { return fmt.Sprintf("%+.3f ± %.3f", r.GainVsEnvelope, r.GainSE) }},
	}
	cols = append(cols, spreadColumns()...)
	if len(rep.Baselines) > 0 {
		cols = append(cols,
			column[Result]{"best single@tokens", "", f("%.3f", func(r Result) float64 { return r.BestSingleRecall })},
			column[Result]{"gain vs best single", "vs best single", func(r Result) string {
				return fmt.Sprintf("%+.3f ± %.3f", r.GainVsBestSingle, r.BestSingleSE)
			}})
	}
	return cols
}

// spreadColumns are the wide table's columns of how the tokens sent
// spread over the questions (TokenSpread): too many for the compact one.
func spreadColumns() []column[Result] {
	cell := func(v func(*TokenSpread) string) func(Result) string {
		return func(r Result) string {
			if r.Spread == nil {
				return ""
			}
			return v(r.Spread)
		}
	}
	n := func(v func(*TokenSpread) int) func(Result) string {
		return cell(func(s *TokenSpread) string { return fmt.Sprintf("%d", v(s)) })
	}
	return []column[Result]{
		{"p10 tokens", "", n(func(s *TokenSpread) int { return s.P10 })},
		{"median tokens", "", n(func(s *TokenSpread) int { return s.P50 })},
		{"p90 tokens", "", n(func(s *TokenSpread) int { return s.P90 })},
		{"max tokens", "", n(func(s *TokenSpread) int { return s.Max })},
		{"< ½ budget", "", cell(func(s *TokenSpread) string {
			if s.UnderHalf == nil {
				return "–"
			}
			return fmt.Sprintf("%.0f %%", 100**s.UnderHalf)
		})},
	}
}

// recallCell is a row's passage recall: "n/c" for a pruning selector's,
// which is not comparable with whole passages, marked † where sentence
// labels measure its evidence instead.
func recallCell(rep *Report, r Result) string {
	switch {
	case !r.Prunes:
		return fmt.Sprintf("%.3f", r.Recall)
	case rep.SpanLabels:
		return fmt.Sprintf("%.3f†", r.Recall)
	}
	return "n/c"
}

// pruningNote explains recallCell's marks; "" when no row prunes.
func pruningNote(rep *Report) string {
	for _, r := range rep.Results {
		if !r.Prunes {
			continue
		}
		if rep.SpanLabels {
			return "†: a pruning selector's passage recall counts gold passages it took anything from, not comparable with whole passages: compare evidence recall below."
		}
		return "n/c: a pruning selector sends parts of passages, so its passage recall (gold passages it took anything from) is not comparable with whole passages; this data has no sentence labels (gold_spans) to measure the evidence it sends."
	}
	return ""
}

// baselineNames names the single scorers of the best-single gains.
func baselineNames(rep *Report) string {
	names := make([]string, len(rep.Baselines))
	for i, b := range rep.Baselines {
		names[i] = b.Scorer
	}
	return strings.Join(names, ", ")
}

// summary is the report's first line: scorer, tokens, questions and
// contexts.
func summary(rep *Report) string {
	if rep.NoGoldLabels && rep.Answers != nil {
		return fmt.Sprintf("scorer %s · tokens %s · %d questions without gold passages (recall not measurable) · %.0f passages and %.0f tokens per context",
			rep.Scorer, rep.Encoding, rep.Questions, rep.MeanPassages, rep.MeanContextTokens)
	}
	return fmt.Sprintf("scorer %s · tokens %s · %d questions (%d skipped: no gold) · %.0f passages and %.0f tokens per context · %.2f gold per question",
		rep.Scorer, rep.Encoding, rep.Questions, rep.Skipped, rep.MeanPassages, rep.MeanContextTokens, rep.MeanGold)
}

// evidenceColumns are the evidence table's: evidence recall where the
// data has sentence labels (ev), answer present where it has answers
// (an), each against whole passages' envelope at its own tokens.
func evidenceColumns(ev, an bool) []column[Result] {
	cols := []column[Result]{both("strategy", func(r Result) string { return r.Strategy })}
	if ev {
		cols = append(cols, figureColumns("evidence recall", "evidence", func(r Result) (figure, bool) {
			e := r.EvidenceResult
			if e == nil {
				return figure{}, false
			}
			return figure{e.EvidenceRecall, e.EvidenceTokens, e.EvidenceEnvelope, e.EvidenceGain, e.EvidenceGainSE}, true
		})...)
		// gold units touched (≥ 30 % of their bytes sent) beside those kept
		// (≥ 80 %): a selector that sends fragments shows here
		cols = append(cols, column[Result]{"touched recall", "touched", func(r Result) string {
			if e := r.EvidenceResult; e != nil {
				return fmt.Sprintf("%.3f", e.TouchedRecall)
			}
			return ""
		}})
	}
	if an {
		cols = append(cols, figureColumns("answer present", "answer", func(r Result) (figure, bool) {
			a := r.PresenceResult
			if a == nil {
				return figure{}, false
			}
			return figure{a.AnswerPresent, a.PresenceTokens, a.AnswerEnvelope, a.AnswerGain, a.AnswerGainSE}, true
		})...)
	}
	return cols
}

// figure is one of the evidence table's figures of a row: its value at
// its mean tokens, whole passages' envelope there, and the gain over it.
type figure struct{ value, tokens, envelope, gain, gainSE float64 }

// figureColumns are a figure's four columns; a row without it (ok false)
// has empty cells.
func figureColumns(wide, compact string, of func(Result) (figure, bool)) []column[Result] {
	cell := func(format func(figure) string) func(Result) string {
		return func(r Result) string {
			if f, ok := of(r); ok {
				return format(f)
			}
			return ""
		}
	}
	return []column[Result]{
		{wide, compact, cell(func(f figure) string { return fmt.Sprintf("%.3f", f.value) })},
		both("tokens", cell(func(f figure) string { return fmt.Sprintf("%.0f", f.tokens) })),
		{"passage envelope@tokens", "", cell(func(f figure) string { return fmt.Sprintf("%.3f", f.envelope) })},
		both("gain", cell(func(f figure) string { return fmt.Sprintf("%+.3f ± %.3f", f.gain, f.gainSE) })),
	}
}

// writeEvidence prints the evidence table (after a blank line) with the
// notes notes gives for the first rows with evidence and presence figures
// (nil where no row has them); nothing where no row has either.
func writeEvidence(w io.Writer, rep *Report, compact bool, notes func(*EvidenceResult, *PresenceResult) error) error {
	var ev *EvidenceResult
	var an *PresenceResult
	for _, r := range rep.Results {
		if ev == nil {
			ev = r.EvidenceResult
		}
		if an == nil {
			an = r.PresenceResult
		}
	}
	if ev == nil && an == nil {
		return nil
	}
	if _, err := fmt.Fprintln(w); err != nil {
		return err
	}
	if err := writeColumns(w, evidenceColumns(ev != nil, an != nil), rep.Results, compact); err != nil {
		return err
	}
	return notes(ev, an)
}

// answerColumns are the answer table's: answer metrics, the judge's where
// there is one, the reader's calls and tokens per question, failures.
func answerColumns(judge bool) []column[Result] {
	f := func(format string, v func(*AnswerResult) any) func(Result) string {
		return func(r Result) string { return fmt.Sprintf(format, v(r.AnswerResult)) }
	}
	cols := []column[Result]{
		both("strategy", func(r Result) string { return r.Strategy }),
		{"answered", "", f("%d", func(a *AnswerResult) any { return a.Answered })},
		both("subem ± se", func(r Result) string { return fmt.Sprintf("%.3f ± %.3f", r.SubEM, r.SubEMErr) }),
		{"em", "", f("%.3f", func(a *AnswerResult) any { return a.EM })},
		both("f1", f("%.3f", func(a *AnswerResult) any { return a.F1 })),
	}
	if judge {
		cols = append(cols,
			both("judge ± se", func(r Result) string {
				if r.Judge == nil || r.JudgeErr == nil {
					return "–"
				}
				return fmt.Sprintf("%.3f ± %.3f", *r.Judge, *r.JudgeErr)
			}),
			both("invalid", f("%d", func(a *AnswerResult) any { return a.JudgeInvalid })))
	}
	return append(cols,
		column[Result]{"mean k", "", func(r Result) string { return fmt.Sprintf("%.1f", r.MeanK) }},
		both("calls/q", f("%.2f", func(a *AnswerResult) any { return a.LLMCalls })),
		both("input tok/q", f("%.0f", func(a *AnswerResult) any { return a.InputTokens })),
		column[Result]{"output tok/q", "", f("%.0f", func(a *AnswerResult) any { return a.OutputTokens })},
		column[Result]{"failures", "", f("%d", func(a *AnswerResult) any { return a.LLMFailures })},
		column[Result]{"truncated", "", f("%d", func(a *AnswerResult) any { return a.LLMTruncated })},
		column[Result]{"empty", "", f("%d", func(a *AnswerResult) any { return a.LLMEmpty })})
}

// answersHeading is the answer table's heading: reader, judge, window and
// the run's totals; degenerate says how many replies were degenerate, ""
// for none.
func answersHeading(a *AnswerTotals) (heading, degenerate string) {
	heading = "answers · reader " + a.Reader
	if a.Judge != "" {
		heading += " · judge " + a.Judge
	}
	if a.Window > 0 {
		heading += fmt.Sprintf(" · window %d tokens", a.Window)
	}
	heading += fmt.Sprintf(" · %d calls made, %d from the cache, %d failed · %d input + %d output tokens",
		a.Calls, a.Cached, a.Failures, a.InputTokens, a.OutputTokens)
	if a.Truncated+a.Empty > 0 {
		degenerate = fmt.Sprintf("degenerate replies, scored as they are: %d truncated (token limit or size bound), %d empty", a.Truncated, a.Empty)
	}
	return heading, degenerate
}

// writeAnswerRows prints the answer table of the rows that answered, and
// says whether any row's tokens are partly our own count.
func writeAnswerRows(w io.Writer, rep *Report, compact bool) (counted bool, err error) {
	var rows []Result
	for _, r := range rep.Results {
		if r.AnswerResult != nil {
			rows = append(rows, r)
			counted = counted || r.TokensCounted
		}
	}
	return counted, writeColumns(w, answerColumns(rep.Answers.Judge != ""), rows, compact)
}
