package httpretry

import (
	"context"
	"sync"
)

// Batches splits n items into consecutive ranges [lo, hi) of at most size
// items and calls fn for each, running up to workers calls at once. The first
// error cancels the context passed to the remaining calls and is returned;
// if ctx itself ends first, its error is returned.
func Batches(ctx context.Context, n, size, workers int, fn func(ctx context.Context, lo, hi int) error) error {
	if n <= 0 {
		return ctx.Err()
	}
	size = max(size, 1)
	nb := (n + size - 1) / size
	workers = min(max(workers, 1), nb)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var (
		mu       sync.Mutex
		next     int
		firstErr error
		wg       sync.WaitGroup
	)
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr != nil || next >= nb {
			return 0, false
		}
		b := next
		next++
		return b, true
	}
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if firstErr == nil {
			firstErr = err
			cancel()
		}
	}
	for range workers {
		wg.Go(func() {
			for {
				b, ok := take()
				if !ok {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(err)
					return
				}
				lo := b * size
				if err := fn(ctx, lo, min(lo+size, n)); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}
