package eval

import (
	"context"
	"fmt"
	"runtime"
	"sync"

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
	if len(opt.Strategies) == 0 {
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
	if p, ok := scorer.(Preparer); ok {
		if err := p.Prepare(ctx, uniqueTexts(kept), opt.PrepareProgress); err != nil {
			return nil, fmt.Errorf("eval: prepare %s: %w", scorer.Name(), err)
		}
	}

	stats := make([]questionStats, len(kept))
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	jobs := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				q, err := measure(ctx, kept[i], scorer, counter, strategies)
				if err != nil {
					errs <- fmt.Errorf("eval: record %q: %w", kept[i].ID, err)
					cancel()
					return
				}
				stats[i] = q
				if opt.Progress != nil {
					mu.Lock()
					done++
					opt.Progress(done, len(kept))
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := range kept {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	select {
	case err := <-errs:
		return nil, err
	default:
	}
	if err := ctx.Err(); err != nil {
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
	return rep, nil
}

type strategyCaps struct {
	s    ctxsel.Strategy
	caps ctxsel.Caps
}

// measure scores one question and applies every strategy to its curve.
func measure(ctx context.Context, r Record, scorer Scorer, counter token.Counter, strategies []strategyCaps) (questionStats, error) {
	texts := make([]string, len(r.Passages))
	for i, p := range r.Passages {
		texts[i] = p.Text
	}
	scores, err := scorer.Score(ctx, r.Question, texts)
	if err != nil {
		return questionStats{}, fmt.Errorf("score: %w", err)
	}
	if len(scores) != len(texts) {
		return questionStats{}, fmt.Errorf("scorer %s returned %d scores for %d passages", scorer.Name(), len(scores), len(texts))
	}
	cands := make([]ctxsel.Candidate, len(texts))
	for i, p := range r.Passages {
		cands[i] = ctxsel.Candidate{ID: p.ID, Score: scores[i], Tokens: counter.Count(p.Text)}
	}
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		return questionStats{}, err
	}
	n := curve.Len()
	q := questionStats{gold: r.GoldCount(), totalTokens: curve.TotalTokens(), goldPrefix: make([]int, n+1), tokenPrefix: make([]int, n+1)}
	for rank, idx := range curve.Top(n) {
		g := 0
		if r.Passages[idx].Gold {
			g = 1
		}
		q.goldPrefix[rank+1] = q.goldPrefix[rank] + g
		q.tokenPrefix[rank+1] = q.tokenPrefix[rank] + cands[idx].Tokens
		if g == 1 && q.goldPrefix[rank+1] == q.gold {
			q.trueK = rank + 1
		}
	}
	q.perStrategy = make([]selStats, len(strategies))
	for i, st := range strategies {
		sel, err := ctxsel.Select(curve, st.s, st.caps, ctxsel.RankOrder)
		if err != nil {
			return questionStats{}, fmt.Errorf("select %s: %w", st.s.Name(), err)
		}
		s := selStats{k: sel.K, tokens: sel.Tokens}
		for _, idx := range sel.Indices {
			if r.Passages[idx].Gold {
				s.gold++
			}
		}
		q.perStrategy[i] = s
	}
	return q, nil
}
