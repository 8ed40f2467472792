// Package remote holds what the HTTP embedding back ends (embed/openai,
// embed/ollama) share: their common settings, Config, checked and completed
// in one place, and Batch: splitting texts into batches sent concurrently,
// prefixing them, and checking what comes back. A new back end is built from
// the same two.
package remote

import (
	"context"
	"fmt"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/internal/httpretry"
)

// Batch describes one back end's batching.
type Batch struct {
	// Backend and Model name the source in errors ("openai", "text-embedding-3-small").
	Backend, Model string
	// Size is the most texts per request, Concurrency the most requests in flight.
	Size, Concurrency int
	// Dimensions, when > 0, is the dimension every vector must have.
	Dimensions int
	// Secret is redacted from errors (the API key).
	Secret string
}

// Embed prefixes texts, sends them in batches through request and returns
// one checked vector per text, in input order.
func (b Batch) Embed(ctx context.Context, texts []string, prefix string, request func(ctx context.Context, input []string) ([][]float32, error)) ([][]float32, error) {
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, ctx.Err()
	}
	err := httpretry.Batches(ctx, len(texts), b.Size, b.Concurrency,
		func(ctx context.Context, lo, hi int) error {
			input := make([]string, hi-lo)
			for i, t := range texts[lo:hi] {
				input[i] = prefix + t
			}
			vecs, err := request(ctx, input)
			if err != nil {
				if hi-lo < len(texts) {
					return fmt.Errorf("%s: texts %d..%d: %w", b.Backend, lo, hi-1, err)
				}
				return fmt.Errorf("%s: %w", b.Backend, err)
			}
			copy(out[lo:hi], vecs)
			return nil
		})
	if err != nil {
		return nil, httpretry.Redact(err, b.Secret)
	}
	dim, err := embed.CheckVectors(out, len(texts))
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", b.Backend, b.Model, err)
	}
	if b.Dimensions > 0 && dim != b.Dimensions {
		return nil, fmt.Errorf("%s: %s returned %d-dimensional vectors, want %d", b.Backend, b.Model, dim, b.Dimensions)
	}
	return out, nil
}
