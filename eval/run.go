package eval

import (
	"context"
	"fmt"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/token"
)

// Options configure Run.
type Options struct {
	// Strategies to measure; their names in the report are Spec.String().
	Strategies []ctxsel.Spec
	// Counter counts passage tokens; nil means token.Default.
	Counter token.Counter
	// Workers score questions in parallel; 0 means GOMAXPROCS.
	Workers int
	// Progress, when set, is told how many questions are done.
	Progress func(done, total int)
	// PrepareProgress, when set, follows the scorer's Prepare step.
	PrepareProgress func(done, total int)
	// TextRuns are selectors that read texts (an LLM picker), reported
	// after the strategies; TextWorkers of their selections run at once
	// (0: 8) and TextProgress follows them.
	TextRuns     []TextRun
	TextWorkers  int
	TextProgress func(done, total int)
}

// Report is what Run measured.
type Report struct {
	Scorer   string `json:"scorer"`
	Encoding string `json:"encoding"`
	// Questions is how many were measured; Skipped had no gold passage.
	Questions         int             `json:"questions"`
	Skipped           int             `json:"skipped_no_gold"`
	MeanPassages      float64         `json:"mean_passages"`
	MeanContextTokens float64         `json:"mean_context_tokens"`
	MeanGold          float64         `json:"mean_gold"`
	Results           []Result        `json:"results"`
	Frontier          []FrontierPoint `json:"frontier"`
}

// Run scores every record's passages against its question, applies each
// strategy, and aggregates the figures. Records without gold passages are
// skipped and counted.
func Run(ctx context.Context, recs []Record, scorer Scorer, opt Options) (*Report, error) {
	if scorer == nil {
		return nil, fmt.Errorf("eval: no scorer")
	}
	if len(opt.Strategies) == 0 && len(opt.TextRuns) == 0 {
		return nil, fmt.Errorf("eval: no strategies")
	}
	counter := opt.Counter
	if counter == nil {
		c, err := token.New(token.Default)
		if err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
		counter = c
	}
	strategies := make([]strategyCaps, len(opt.Strategies))
	for i, sp := range opt.Strategies {
		s, caps, err := ctxsel.New(sp)
		if err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
		strategies[i] = strategyCaps{s, caps}
	}
	var kept []Record
	skipped := 0
	for _, r := range recs {
		if r.GoldCount() == 0 {
			skipped++
			continue
		}
		kept = append(kept, r)
	}
	rep := &Report{Scorer: scorer.Name(), Encoding: counter.Encoding(), Questions: len(kept), Skipped: skipped}
	if len(kept) == 0 {
		return nil, fmt.Errorf("eval: none of %d records has a gold passage", len(recs))
	}
	curves, err := score(ctx, kept, scorer, counter, opt.Workers, opt.Progress, opt.PrepareProgress)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	stats := make([]questionStats, len(kept))
	for i, q := range curves {
		if stats[i], err = measure(kept[i], q, strategies); err != nil {
			return nil, fmt.Errorf("eval: record %q: %w", kept[i].ID, err)
		}
	}
	calls, err := measureTexts(ctx, kept, curves, stats, opt.TextRuns, opt.TextWorkers, opt.TextProgress)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}

	for _, q := range stats {
		rep.MeanPassages += float64(len(q.goldPrefix) - 1)
		rep.MeanContextTokens += float64(q.totalTokens)
		rep.MeanGold += float64(q.gold)
	}
	n := float64(len(stats))
	rep.MeanPassages /= n
	rep.MeanContextTokens /= n
	rep.MeanGold /= n
	rep.Frontier = frontier(stats)
	for i, sp := range opt.Strategies {
		rep.Results = append(rep.Results, aggregate(sp.String(), i, stats, rep.Frontier))
	}
	for i, tr := range opt.TextRuns {
		r := aggregate(tr.Name, len(opt.Strategies)+i, stats, rep.Frontier)
		addCalls(&r, calls[i])
		rep.Results = append(rep.Results, r)
	}
	return rep, nil
}

type strategyCaps struct {
	s    ctxsel.Strategy
	caps ctxsel.Caps
}

// measure applies every strategy to one scored question.
func measure(r Record, q QuestionCurve, strategies []strategyCaps) (questionStats, error) {
	cands := make([]ctxsel.Candidate, len(r.Passages))
	for i, p := range r.Passages {
		cands[i] = ctxsel.Candidate{ID: p.ID, Score: q.Scores[i], Tokens: q.Tokens[i]}
	}
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		return questionStats{}, err
	}
	n := curve.Len()
	st := questionStats{gold: r.GoldCount(), totalTokens: curve.TotalTokens(), goldPrefix: make([]int, n+1), tokenPrefix: make([]int, n+1)}
	for rank, idx := range curve.Top(n) {
		g := 0
		if q.Gold[idx] {
			g = 1
		}
		st.goldPrefix[rank+1] = st.goldPrefix[rank] + g
		st.tokenPrefix[rank+1] = st.tokenPrefix[rank] + cands[idx].Tokens
		if g == 1 && st.goldPrefix[rank+1] == st.gold {
			st.trueK = rank + 1
		}
	}
	st.perStrategy = make([]selStats, len(strategies))
	for i, sc := range strategies {
		sel, err := ctxsel.Select(curve, sc.s, sc.caps, ctxsel.RankOrder)
		if err != nil {
			return questionStats{}, fmt.Errorf("select %s: %w", sc.s.Name(), err)
		}
		ss := selStats{k: sel.K, tokens: sel.Tokens}
		for _, idx := range sel.Indices {
			if q.Gold[idx] {
				ss.gold++
			}
		}
		st.perStrategy[i] = ss
	}
	return st, nil
}
