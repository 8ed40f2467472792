package eval

import "context"

// Scorer gives each passage a similarity to the query; higher is more
// relevant. Implementations must be safe for concurrent use.
type Scorer interface {
	Name() string
	Score(ctx context.Context, query string, passages []string) ([]float64, error)
}

// Preparer is implemented by scorers that do better with every passage up
// front (an embedding scorer embeds them in large batches, once). Run calls
// Prepare before scoring; progress may be nil.
type Preparer interface {
	Prepare(ctx context.Context, passages []string, progress func(done, total int)) error
}
