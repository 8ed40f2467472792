package server

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/internal/wire"
)

// limits is the request-bounds policy: one set of bounds, taken from the
// Config, that every route and transport applies before it does any work
// (the HTTP routes, /mcp and ctxsel mcp over stdio), answering in its own
// error shape (a JSON error with its HTTP status, a JSON-RPC error, an MCP
// tool error). The decoders enforce the size bounds as they read, so an
// over-long request fails at the first offending element.
//
//   - body: a request body, an /mcp POST, one stdio frame (max_body_bytes);
//   - MaxText: the query and each candidate's, document's or input's text
//     (max_text_bytes), which must also be valid UTF-8: replacing bytes
//     would score a text the caller did not send (wire.Limits);
//   - MaxCandidates: candidates, documents, inputs, ids and top_n;
//   - MaxDim: a vector's dimension;
//   - deadline: the work of one request (request_timeout), started once
//     where the request enters (wrap for HTTP, mcpTool for MCP); a
//     deadline set deeper can only be later.
type limits struct {
	wire.Limits
	body     int64
	deadline time.Duration
}

func (s *Server) limits() limits {
	return limits{Limits: wire.Limits{MaxCandidates: s.cfg.MaxCandidates, MaxText: s.cfg.MaxTextBytes, MaxDim: s.cfg.MaxVectorDim},
		body: s.cfg.MaxBodyBytes, deadline: s.cfg.RequestTimeout.D()}
}

// bound gives ctx the request deadline.
func (l limits) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, l.deadline)
}

// within runs f and returns its result, or ctx's error as soon as ctx is
// done: a back end that does not watch ctx (CPU-bound work on a large
// input) cannot hold a request past its deadline. A result that comes late
// is dropped; a panic in f is returned as an error, since no handler's
// recovery covers f's goroutine.
func within[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{err: fmt.Errorf("panic: %v\n%s", p, debug.Stack())}
			}
		}()
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// boundedEmbedder holds every embedding call of a request to its deadline
// (within), whatever the embedder does with its context: the offline model
// runs a long text to the end. Each call first takes a slot of the server's
// one embedLimiter, held until the inner call really returns. It keeps the
// embedder's optional interfaces.
type boundedEmbedder struct {
	inner embed.Embedder
	limit *embedLimiter
}

func (b boundedEmbedder) ModelID() string   { return b.inner.ModelID() }
func (b boundedEmbedder) ModelName() string { return embed.ModelName(b.inner) }

func (b boundedEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return b.run(ctx, len(texts), func() ([][]float32, error) { return b.inner.Embed(ctx, texts) })
}

func (b boundedEmbedder) EmbedQuery(ctx context.Context, texts []string) ([][]float32, error) {
	return b.run(ctx, len(texts), func() ([][]float32, error) { return embed.Queries(ctx, b.inner, texts) })
}

func (b boundedEmbedder) run(ctx context.Context, texts int, f func() ([][]float32, error)) ([][]float32, error) {
	release, err := b.limit.acquire(ctx, texts)
	if err != nil {
		return nil, err
	}
	return within(ctx, func() ([][]float32, error) {
		defer release()
		return f()
	})
}
