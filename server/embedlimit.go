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
// default one per core Go may use), keeps calls holding up to embed_queue
// texts waiting in arrival order, and refuses a call past that at once
// with 503 and a Retry-After estimate. The queue is bounded by work, not
// by requests: 64 clients sending one text each are less work than one
// rerank of 256 documents, and clients that embed in parallel (chromem-go,
// LangChain, go-openai with a worker pool) send many small requests at
// once and do not retry a 503. Without the bound, N concurrent requests
// all slow down together and all pass their deadline together; with it
// the first ones finish at full speed and the rest wait their turn, each
// still held to its own deadline while it waits.
//
// Every embedding call of the server goes through boundedEmbedder, which
// takes a slot here first: /v1/select and /v1/rerank (passages and the
// query are two calls), /v1/embeddings, and the MCP tools over both
// transports.

// defaultEmbedQueue is embed_queue's default, in texts: 16 concurrent
// reranks of 256 documents, or thousands of one-text requests, wait on
// two cores rather than be refused.
const defaultEmbedQueue = 4096

type embedLimiter struct {
	sem   *semaphore.Weighted // FIFO: waiters are served in arrival order
	slots int64
	queue int64 // texts that may wait

	waiting      atomic.Int64 // calls waiting
	waitingTexts atomic.Int64 // their texts, charged as in charge
	running      atomic.Int64
	refused      atomic.Uint64
	calls        atomic.Uint64
	texts        atomic.Uint64
	avgNanos     atomic.Int64 // moving average of a text's embedding time, for Retry-After
}

func newEmbedLimiter(slots, queue int) *embedLimiter {
	return &embedLimiter{sem: semaphore.NewWeighted(int64(slots)), slots: int64(slots), queue: int64(queue)}
}

// busyError refuses an embedding call when every slot is taken and the
// queue is full: writeFailure answers 503 with Retry-After.
type busyError struct {
	running, waiting, texts int64
	retryAfter              time.Duration
}

func (e *busyError) Error() string {
	return fmt.Sprintf("the embedder is busy: %d calls running and %d waiting with %d texts, the most this server allows (embed_concurrency, embed_queue); retry in %s s",
		e.running, e.waiting, e.texts, e.retryAfterSeconds())
}

// retryAfterSeconds is the Retry-After header's value: whole seconds, at
// least 1.
func (e *busyError) retryAfterSeconds() string {
	return strconv.Itoa(max(1, int(math.Ceil(e.retryAfter.Seconds()))))
}

// charge is what a call of n texts counts against the queue: its texts,
// but never more than the whole queue (a call larger than the queue waits
// when nothing else does) and at least one (a queue of 0 holds no call).
func (l *embedLimiter) charge(n int) int64 {
	return min(max(int64(n), 1), max(l.queue, 1))
}

// acquire takes a slot for a call embedding n texts, waiting in arrival
// order while ctx allows; it refuses at once (busyError) when the texts
// already waiting leave no room in the queue. release gives the slot back
// and must be called once, when the call has really ended (not when its
// caller stopped waiting for it).
func (l *embedLimiter) acquire(ctx context.Context, n int) (release func(), err error) {
	if !l.sem.TryAcquire(1) {
		c := l.charge(n)
		if t := l.waitingTexts.Add(c); t > l.queue {
			l.waitingTexts.Add(-c)
			l.refused.Add(1)
			ahead := t - c
			return nil, &busyError{running: l.running.Load(), waiting: l.waiting.Load(), texts: ahead, retryAfter: l.estimate(ahead + int64(n))}
		}
		l.waiting.Add(1)
		err := l.sem.Acquire(ctx, 1)
		l.waiting.Add(-1)
		l.waitingTexts.Add(-c)
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
		l.observe(time.Since(start), n)
		l.running.Add(-1)
		l.sem.Release(1)
	}, nil
}

// observe folds a finished call's time per text into the moving average
// (weight 1/8: a few calls move it, one outlier does not).
func (l *embedLimiter) observe(d time.Duration, n int) {
	l.calls.Add(1)
	l.texts.Add(uint64(n))
	d /= time.Duration(max(n, 1))
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

// estimate is how long the last of texts waiting would wait: they are
// embedded slots calls at a time.
func (l *embedLimiter) estimate(texts int64) time.Duration {
	avg := time.Duration(l.avgNanos.Load())
	if avg <= 0 {
		avg = 100 * time.Millisecond
	}
	return time.Duration((texts+l.slots-1)/l.slots) * avg
}

// writeMetrics appends the limiter's gauges and counters in the Prometheus
// text format.
func (l *embedLimiter) writeMetrics(w io.Writer) {
	fmt.Fprintf(w, "# HELP ctxsel_embed_running Embedding calls running now (at most embed_concurrency).\n# TYPE ctxsel_embed_running gauge\nctxsel_embed_running %d\n", l.running.Load())
	fmt.Fprintf(w, "# HELP ctxsel_embed_waiting Embedding calls waiting for a slot (at most embed_queue).\n# TYPE ctxsel_embed_waiting gauge\nctxsel_embed_waiting %d\n", l.waiting.Load())
	fmt.Fprintf(w, "# HELP ctxsel_embed_waiting_texts Texts of the embedding calls waiting (at most embed_queue).\n# TYPE ctxsel_embed_waiting_texts gauge\nctxsel_embed_waiting_texts %d\n", l.waitingTexts.Load())
	fmt.Fprintf(w, "# HELP ctxsel_embed_texts_total Texts the embedding calls that ran embedded.\n# TYPE ctxsel_embed_texts_total counter\nctxsel_embed_texts_total %d\n", l.texts.Load())
	fmt.Fprintf(w, "# HELP ctxsel_embed_calls_total Embedding calls that ran.\n# TYPE ctxsel_embed_calls_total counter\nctxsel_embed_calls_total %d\n", l.calls.Load())
	fmt.Fprintf(w, "# HELP ctxsel_embed_refused_total Embedding calls refused with 503 because the queue was full.\n# TYPE ctxsel_embed_refused_total counter\nctxsel_embed_refused_total %d\n", l.refused.Load())
}
