package server

import (
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

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

// free is what the budget has left.
func (b *byteBudget) free() int64 { return b.limit - b.used.Load() }

// readyBodyBytes is the budget /readyz wants free: less, and an ordinary
// request would be refused with 503, so the server is not ready for one.
const readyBodyBytes = 64 << 10

// clientBudget bounds the bytes of the bodies one client (a remote IP) is
// still sending: without it, a client on many connections, each sending a
// little, could hold the whole byteBudget and have every other client's
// POST refused. A body's bytes leave its client's share once it has
// arrived (the server-wide budget holds them until the handler returns).
type clientBudget struct {
	limit int64
	mu    sync.Mutex
	used  map[string]int64
}

// clientShare is a client's share of a budget of inflight bytes for bodies
// of at most maxBody: half the budget, but never less than one body of
// maxBody needs while it arrives (readBody reserves at most twice a body).
func clientShare(inflight, maxBody int64) int64 {
	return max(inflight/2, min(inflight, 2*maxBody))
}

// take reserves n bytes of client's share, or reports false and reserves
// nothing.
func (c *clientBudget) take(client string, n int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.used == nil {
		c.used = map[string]int64{}
	}
	if c.used[client]+n > c.limit {
		return false
	}
	c.used[client] += n
	return true
}

// give returns n bytes of client's share.
func (c *clientBudget) give(client string, n int64) {
	if n == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.used[client] -= n; c.used[client] <= 0 {
		delete(c.used, client)
	}
}

// clientKey is the client a request's body is charged to: its remote IP.
func clientKey(r *http.Request) string {
	if host, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		return host
	}
	return r.RemoteAddr
}
