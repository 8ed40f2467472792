package server

import "sync/atomic"

// byteBudget bounds the bytes that request bodies hold across all requests in
// flight: each request's cap on its own body (max_body_bytes) does not stop
// sixteen of them at once from holding sixteen times that. A request that
// would cross the budget is refused at once (503), not queued: waiting
// would hold its connection and what it has already read.
type byteBudget struct {
	limit int64
	used  atomic.Int64
	peak  atomic.Int64 // the most ever held, for tests and metrics
}

// take reserves n bytes, or reports false and reserves nothing.
func (b *byteBudget) take(n int64) bool {
	used := b.used.Add(n)
	if used > b.limit {
		b.used.Add(-n)
		return false
	}
	for p := b.peak.Load(); used > p && !b.peak.CompareAndSwap(p, used); p = b.peak.Load() {
	}
	return true
}

// give returns n reserved bytes.
func (b *byteBudget) give(n int64) { b.used.Add(-n) }
