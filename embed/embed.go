// Package embed defines how ctxsel turns text into vectors. Backends live in
// sub-packages (uselite: the embedded offline model; openai; ollama) and all
// satisfy Embedder, so the evaluation harness, the index and the server never
// care which one is configured.
package embed

import (
	"context"
	"fmt"
	"math"
	"strings"
)

// Embedder maps texts to vectors, one per text, in input order.
//
// Implementations must be safe for concurrent use, honour ctx cancellation,
// and never panic on user input (empty strings included).
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// ModelID identifies the model and every setting that changes its
	// vectors (dimensions, prefixes, weights version). Caches key on it.
	ModelID() string
}

// QueryEmbedder is implemented by embedders whose model embeds search queries
// differently from the passages being searched (instruction prefixes such as
// "query: " / "passage: "). Embed always embeds passages; EmbedQuery embeds
// queries. Use Queries rather than asserting this interface directly.
type QueryEmbedder interface {
	EmbedQuery(ctx context.Context, texts []string) ([][]float32, error)
}

// Named is implemented by embedders that relay a model of a remote service:
// ModelName is the model's own name at that service (e.g.
// "text-embedding-3-small"), without the server's address or the settings
// ModelID adds. Use ModelName rather than asserting this interface.
type Named interface {
	ModelName() string
}

// ModelName is the name to show for e's model: its own (Named), or else
// ModelID up to its first '@' or '+' ("use-lite@v1+..." gives "use-lite").
func ModelName(e Embedder) string {
	if n, ok := e.(Named); ok {
		if name := n.ModelName(); name != "" {
			return name
		}
	}
	id := e.ModelID()
	if i := strings.IndexAny(id, "@+"); i > 0 {
		return id[:i]
	}
	return id
}

// Queries embeds texts as search queries: through EmbedQuery when e
// implements QueryEmbedder, otherwise through Embed.
func Queries(ctx context.Context, e Embedder, texts []string) ([][]float32, error) {
	if q, ok := e.(QueryEmbedder); ok {
		return q.EmbedQuery(ctx, texts)
	}
	return e.Embed(ctx, texts)
}

// CheckVectors validates what a backend returned for want inputs: exactly want
// vectors, all non-empty and of one dimension, every component finite. It
// returns that dimension (0 when want is 0).
func CheckVectors(vecs [][]float32, want int) (dim int, err error) {
	if len(vecs) != want {
		return 0, fmt.Errorf("got %d vectors for %d inputs", len(vecs), want)
	}
	for i, v := range vecs {
		if len(v) == 0 {
			return 0, fmt.Errorf("vector %d is empty", i)
		}
		if i == 0 {
			dim = len(v)
		} else if len(v) != dim {
			return 0, fmt.Errorf("vector %d has dimension %d, vector 0 has %d", i, len(v), dim)
		}
		for j, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return 0, fmt.Errorf("vector %d component %d is %v", i, j, x)
			}
		}
	}
	return dim, nil
}
