package eval

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/ctxsel/ctxsel/embed"
)

// EmbedScorer scores passages by cosine similarity of their embeddings to
// the question's, the papers' retriever. Vectors are kept in memory by text,
// so a pooled evaluation embeds each distinct passage once; wrap the
// embedder with embed/cache to keep them across runs.
type EmbedScorer struct {
	name  string
	e     embed.Embedder
	batch int

	mu   sync.RWMutex
	vecs map[string][]float32
}

// NewEmbedScorer scores with e; name is how reports call it (e.g. "use-lite").
func NewEmbedScorer(name string, e embed.Embedder) *EmbedScorer {
	return &EmbedScorer{name: name, e: e, batch: 256, vecs: map[string][]float32{}}
}

// Name implements Scorer.
func (s *EmbedScorer) Name() string { return s.name }

// Embedder is the embedder the scorer embeds with (another user of the same
// model, e.g. a sentence selector, shares its cache).
func (s *EmbedScorer) Embedder() embed.Embedder { return s.e }

// Prepare embeds every passage not seen yet, in batches, reporting progress.
func (s *EmbedScorer) Prepare(ctx context.Context, passages []string, progress func(done, total int)) error {
	missing := s.missing(passages)
	for i := 0; i < len(missing); i += s.batch {
		end := min(len(missing), i+s.batch)
		if err := s.embed(ctx, missing[i:end]); err != nil {
			return err
		}
		if progress != nil {
			progress(end, len(missing))
		}
	}
	return nil
}

func (s *EmbedScorer) missing(texts []string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	seen := map[string]bool{}
	for _, t := range texts {
		if _, ok := s.vecs[t]; !ok && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

func (s *EmbedScorer) embed(ctx context.Context, texts []string) error {
	if len(texts) == 0 {
		return nil
	}
	vecs, err := s.e.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("embed passages: %w", err)
	}
	if _, err := embed.CheckVectors(vecs, len(texts)); err != nil {
		return fmt.Errorf("embed passages: %w", err)
	}
	s.mu.Lock()
	for i, t := range texts {
		s.vecs[t] = vecs[i]
	}
	s.mu.Unlock()
	return nil
}

// Score implements Scorer: cosine similarity in [−1, 1].
func (s *EmbedScorer) Score(ctx context.Context, query string, passages []string) ([]float64, error) {
	if err := s.embed(ctx, s.missing(passages)); err != nil {
		return nil, err
	}
	qv, err := embed.Queries(ctx, s.e, []string{query})
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	if _, err := embed.CheckVectors(qv, 1); err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	q := qv[0]
	qn := norm(q)
	out := make([]float64, len(passages))
	s.mu.RLock()
	defer s.mu.RUnlock()
	for i, p := range passages {
		v := s.vecs[p]
		if len(v) != len(q) {
			return nil, fmt.Errorf("passage %d: vector dimension %d, query %d", i, len(v), len(q))
		}
		var dot float64
		for j := range v {
			dot += float64(v[j]) * float64(q[j])
		}
		if d := qn * norm(v); d > 0 {
			out[i] = dot / d
		}
	}
	return out, nil
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}
