package server

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"
)

// Embedding is the one CPU-heavy step a request can trigger (the offline
// model runs on this machine's cores), so it is bounded across requests:
// embedLimiter lets embed_concurrency embedding calls run at once (by
// default one per core Go may use), keeps up to embed_queue more waiting
// in arrival order, and refuses a call past that at once with 503 and a
// Retry-After estimate. Without it, N concurrent requests all slow down
// together and all pass their deadline together; with it the first ones
// finish at full speed and the rest wait their turn, each still held to
// its own deadline while it waits.
//
// Every embedding call of the server goes through boundedEmbedder, which
// takes a slot here first: /v1/select and /v1/rerank (passages and the
// query are two calls), /v1/embeddings, and the MCP tools over both
// transports.

// defaultEmbedQueue is embed_queue's default: enough for 16 concurrent
// rerank requests on two cores to wait rather than be refused.
const defaultEmbedQueue = 16

type embedLimiter struct {
	sem   *semaphore.Weighted // FIFO: waiters are served in arrival order
	slots int64
	queue int64

	waiting  atomic.Int64
	running  atomic.Int64
	refused  atomic.Uint64
	calls    atomic.Uint64
	avgNanos atomic.Int64 // moving average of a call's duration, for Retry-After
}

func newEmbedLimiter(slots, queue int) *embedLimiter {
	return &embedLimiter{sem: semaphore.NewWeighted(int64(slots)), slots: int64(slots), queue: int64(queue)}
}

// busyError refuses an embedding call when every slot is taken and the
// queue is full: writeFailure answers 503 with Retry-After.
type busyError struct {
	running, waiting int64
	retryAfter       time.Duration
}

func (e *busyError) Error() string {
	return fmt.Sprintf("the embedder is busy: %d calls running and %d waiting, the most this server allows (embed_concurrency, embed_queue); retry in %s s",
		e.running, e.waiting, e.retryAfterSeconds())
}

// retryAfterSeconds is the Retry-After header's value: whole seconds, at
// least 1.
func (e *busyError) retryAfterSeconds() string {
	return strconv.Itoa(max(1, int(math.Ceil(e.retryAfter.Seconds()))))
}

// acquire takes a slot, waiting in arrival order while ctx allows; it
// refuses at once (busyError) when the queue is full. release gives the
// slot back and must be called once, when the call has really ended (not
// when its caller stopped waiting for it).
func (l *embedLimiter) acquire(ctx context.Context) (release func(), err error) {
	if !l.sem.TryAcquire(1) {
		if w := l.waiting.Add(1); w > l.queue {
			l.waiting.Add(-1)
			l.refused.Add(1)
			return nil, &busyError{running: l.running.Load(), waiting: w - 1, retryAfter: l.estimate(w - 1)}
		}
		err := l.sem.Acquire(ctx, 1)
		l.waiting.Add(-1)
		if err != nil {
			return nil, fmt.Errorf("waiting for the embedder: %w", err)
		}
	}
	l.running.Add(1)
	start := time.Now()
	var once atomic.Bool
	return func() {
		if !once.CompareAndSwap(false, true) {
			return
		}
		l.observe(time.Since(start))
		l.running.Add(-1)
		l.sem.Release(1)
	}, nil
}

// observe folds a finished call's duration into the moving average (weight
// 1/8: a few calls move it, one outlier does not).
func (l *embedLimiter) observe(d time.Duration) {
	l.calls.Add(1)
	for {
		old := l.avgNanos.Load()
		next := int64(d)
		if old != 0 {
			next = old + (int64(d)-old)/8
		}
		if l.avgNanos.CompareAndSwap(old, next) {
			return
		}
	}
}

// estimate is how long a call arriving behind waiting others would wait:
// the queue ahead of it drains slots calls at a time.
func (l *embedLimiter) estimate(waiting int64) time.Duration {
	avg := time.Duration(l.avgNanos.Load())
	if avg <= 0 {
		avg = time.Second
	}
	rounds := (waiting + l.slots) / l.slots
	return time.Duration(rounds) * avg
}

// writeMetrics appends the limiter's gauges and counters in the Prometheus
// text format.
func (l *embedLimiter) writeMetrics(w io.Writer) {
	fmt.Fprintf(w, "# HELP ctxsel_embed_running Embedding calls running now (at most embed_concurrency).\n# TYPE ctxsel_embed_running gauge\nctxsel_embed_running %d\n", l.running.Load())
	fmt.Fprintf(w, "# HELP ctxsel_embed_waiting Embedding calls waiting for a slot (at most embed_queue).\n# TYPE ctxsel_embed_waiting gauge\nctxsel_embed_waiting %d\n", l.waiting.Load())
	fmt.Fprintf(w, "# HELP ctxsel_embed_calls_total Embedding calls that ran.\n# TYPE ctxsel_embed_calls_total counter\nctxsel_embed_calls_total %d\n", l.calls.Load())
	fmt.Fprintf(w, "# HELP ctxsel_embed_refused_total Embedding calls refused with 503 because the queue was full.\n# TYPE ctxsel_embed_refused_total counter\nctxsel_embed_refused_total %d\n", l.refused.Load())
}
