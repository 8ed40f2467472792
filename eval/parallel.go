package eval

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/ctxsel/ctxsel/dataset"
)

// eachRecord calls do for every index of recs on workers goroutines (one per
// core when workers <= 0), calling progress after each success. The first
// failure cancels the rest and is what eachRecord returns, with its
// record's ID; failures that follow (cancellations) are dropped.
func eachRecord(ctx context.Context, recs []dataset.Record, workers int, progress func(done, total int), do func(ctx context.Context, i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		done int
	)
	next := make(chan int)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := do(ctx, i); err != nil {
					cancel(fmt.Errorf("record %q: %w", recs[i].ID, err))
					continue
				}
				if progress != nil {
					mu.Lock()
					done++
					progress(done, len(recs))
					mu.Unlock()
				}
			}
		}()
	}
feed:
	for i := range recs {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return context.Cause(ctx)
}
