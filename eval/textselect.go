package eval

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/ctxsel/ctxsel"
)

// selectTexts runs the text-selector slots (which may call a model, so they
// take a context and may fail) on every question, in parallel, cutting each
// selection to the window budget like measure does for strategies. The
// first failure stops the rest.
func selectTexts(ctx context.Context, recs []Record, curves []QuestionCurve, stats []questionStats, slots []strategySlot, budget func(Record) int, workers int) error {
	var textSlots []int
	for i, sl := range slots {
		if sl.text != nil {
			textSlots = append(textSlots, i)
		}
	}
	if len(textSlots) == 0 {
		return nil
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for qi := range next {
				if err := selectTextsOne(ctx, recs[qi], curves[qi], &stats[qi], slots, textSlots, budget); err != nil {
					once.Do(func() { first = fmt.Errorf("record %q: %w", recs[qi].ID, err); cancel() })
				}
			}
		}()
	}
feed:
	for qi := range recs {
		select {
		case next <- qi:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

func selectTextsOne(ctx context.Context, r Record, q QuestionCurve, st *questionStats, slots []strategySlot, textSlots []int, budget func(Record) int) error {
	cands := make([]ctxsel.Candidate, len(r.Passages))
	texts := make([]string, len(r.Passages))
	for i, p := range r.Passages {
		cands[i] = ctxsel.Candidate{ID: p.ID, Score: q.Scores[i], Tokens: q.Tokens[i]}
		texts[i] = p.Text
	}
	curve, err := ctxsel.NewCurve(cands)
	if err != nil {
		return err
	}
	for _, i := range textSlots {
		sel, err := slots[i].text.SelectTexts(ctx, ctxsel.TextQuery{Question: r.Question, Curve: curve, Texts: texts, Order: ctxsel.RankOrder})
		if err != nil {
			return fmt.Errorf("%s: %w", slots[i].name, err)
		}
		if budget != nil {
			if sel, err = ctxsel.FitWindow(curve, sel, budget(r), perPassage, ctxsel.RankOrder); err != nil {
				return fmt.Errorf("%s: %w", slots[i].name, err)
			}
		}
		st.perStrategy[i].setSelection(sel, q.Gold)
	}
	return nil
}
