package eval

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/ctxsel/ctxsel/token"
)

// QuestionCurve is one question's scored context, in passage (input) order:
// what a learned selector trains on.
type QuestionCurve struct {
	RecordID string    `json:"record_id"`
	Scores   []float64 `json:"scores"`
	Tokens   []int     `json:"tokens"`
	Gold     []bool    `json:"gold"`
}

// Curves scores every record's passages against its question and returns the
// curves with token counts and gold labels. Records without gold passages are
// skipped; the second result counts them. Order follows recs.
func Curves(ctx context.Context, recs []Record, scorer Scorer, counter token.Counter, workers int) ([]QuestionCurve, int, error) {
	if counter == nil {
		c, err := token.New(token.Default)
		if err != nil {
			return nil, 0, fmt.Errorf("curves: %w", err)
		}
		counter = c
	}
	var kept []Record
	for _, r := range recs {
		if r.GoldCount() > 0 {
			kept = append(kept, r)
		}
	}
	if p, ok := scorer.(Preparer); ok {
		if err := p.Prepare(ctx, uniqueTexts(kept), nil); err != nil {
			return nil, 0, fmt.Errorf("curves: prepare %s: %w", scorer.Name(), err)
		}
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	out := make([]QuestionCurve, len(kept))
	errs := make([]error, len(kept))
	var wg sync.WaitGroup
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := kept[i]
				texts := make([]string, len(r.Passages))
				q := QuestionCurve{RecordID: r.ID, Tokens: make([]int, len(texts)), Gold: make([]bool, len(texts))}
				for j, p := range r.Passages {
					texts[j], q.Tokens[j], q.Gold[j] = p.Text, counter.Count(p.Text), p.Gold
				}
				s, err := scorer.Score(ctx, r.Question, texts)
				if err == nil && len(s) != len(texts) {
					err = fmt.Errorf("scorer %s returned %d scores for %d passages", scorer.Name(), len(s), len(texts))
				}
				q.Scores = s
				out[i], errs[i] = q, err
			}
		}()
	}
	for i := range kept {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("curves: %w", err)
	}
	for i, err := range errs {
		if err != nil {
			return nil, 0, fmt.Errorf("curves: record %q: %w", kept[i].ID, err)
		}
	}
	return out, len(recs) - len(kept), nil
}

func uniqueTexts(recs []Record) []string {
	var texts []string
	seen := map[string]bool{}
	for _, r := range recs {
		for _, p := range r.Passages {
			if !seen[p.Text] {
				seen[p.Text] = true
				texts = append(texts, p.Text)
			}
		}
	}
	return texts
}
