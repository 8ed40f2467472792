package score

import (
	"context"
	"fmt"
	"sync"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/internal/vecmath"
)

// DefaultBatch is how many texts an Embedding scorer hands its embedder
// in one call unless told otherwise.
const DefaultBatch = 256

// EmbeddingOptions configure an Embedding scorer.
type EmbeddingOptions struct {
	// Batch is how many texts go to the embedder in one call (0 means
	// DefaultBatch).
	Batch int
	// Memo keeps every text's vector in memory, by text, so a text scored
	// again (a pooled evaluation, where each passage meets many questions)
	// is embedded once; memory grows with the distinct texts seen. Without
	// it every Score embeds its texts (wrap the embedder with embed/cache
	// to keep vectors on disk instead).
	Memo bool
}

// Embedding scores texts by the cosine similarity of their embeddings to
// the query's (embed.Queries, so an embedder with a query form uses it),
// the papers' retriever. Scores are in [−1, 1]; a text that embeds to the
// zero vector scores 0. It is safe for concurrent use.
type Embedding struct {
	name  string
	e     embed.Embedder
	batch int

	mu   sync.RWMutex
	vecs map[string][]float32 // nil without Memo
}

// NewEmbedding scores with e; name is how reports call it (e.g. "use-lite").
func NewEmbedding(name string, e embed.Embedder, opt EmbeddingOptions) *Embedding {
	s := &Embedding{name: name, e: e, batch: opt.Batch}
	if s.batch <= 0 {
		s.batch = DefaultBatch
	}
	if opt.Memo {
		s.vecs = map[string][]float32{}
	}
	return s
}

// Name implements Scorer.
func (s *Embedding) Name() string { return s.name }

// Embedder is the embedder the scorer calls.
func (s *Embedding) Embedder() embed.Embedder { return s.e }

// Prepare embeds every text not embedded yet, in batches, reporting
// progress. Without Memo there is nothing to keep, and it does nothing.
func (s *Embedding) Prepare(ctx context.Context, texts []string, progress func(done, total int)) error {
	if s.vecs == nil {
		return nil
	}
	_, err := s.embedMissing(ctx, texts, progress)
	return err
}

// distinct returns the texts of texts that have no vector yet, each once.
func (s *Embedding) distinct(texts []string) []string {
	if s.vecs != nil {
		s.mu.RLock()
		defer s.mu.RUnlock()
	}
	var out []string
	seen := make(map[string]bool, len(texts))
	for _, t := range texts {
		if seen[t] {
			continue
		}
		seen[t] = true
		if _, ok := s.vecs[t]; !ok {
			out = append(out, t)
		}
	}
	return out
}

// embedMissing embeds, in batches, the texts that have no vector yet and
// returns the new vectors by text (kept too, with Memo).
func (s *Embedding) embedMissing(ctx context.Context, texts []string, progress func(done, total int)) (map[string][]float32, error) {
	missing := s.distinct(texts)
	got := make(map[string][]float32, len(missing))
	for i := 0; i < len(missing); i += s.batch {
		end := min(len(missing), i+s.batch)
		part := missing[i:end]
		vecs, err := s.e.Embed(ctx, part)
		if err == nil {
			_, err = embed.CheckVectors(vecs, len(part))
		}
		if err != nil {
			return nil, fmt.Errorf("embed passages: %w", err)
		}
		for j, t := range part {
			got[t] = vecs[j]
		}
		if s.vecs != nil {
			s.mu.Lock()
			for j, t := range part {
				s.vecs[t] = vecs[j]
			}
			s.mu.Unlock()
		}
		if progress != nil {
			progress(end, len(missing))
		}
	}
	return got, nil
}

// Score implements Scorer: cosine similarity in [−1, 1].
func (s *Embedding) Score(ctx context.Context, query string, texts []string) ([]float64, error) {
	return s.ScoreKnown(ctx, query, texts, nil)
}

// ScoreKnown is Score with some texts' vectors known already (vectors an
// index stored, by the same model): known[i], when not nil, is texts[i]'s
// vector and texts[i] is not embedded; known may be nil or shorter than
// texts.
func (s *Embedding) ScoreKnown(ctx context.Context, query string, texts []string, known [][]float32) ([]float64, error) {
	vecOf := func(i int) []float32 {
		if i < len(known) {
			return known[i]
		}
		return nil
	}
	embedNow := texts
	if len(known) > 0 {
		embedNow = make([]string, 0, len(texts))
		for i, t := range texts {
			if vecOf(i) == nil {
				embedNow = append(embedNow, t)
			}
		}
	}
	fresh, err := s.embedMissing(ctx, embedNow, nil)
	if err != nil {
		return nil, err
	}
	qv, err := embed.Queries(ctx, s.e, []string{query})
	if err == nil {
		_, err = embed.CheckVectors(qv, 1)
	}
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	q := qv[0]
	qn := vecmath.Norm32(q)
	out := make([]float64, len(texts))
	if s.vecs != nil {
		s.mu.RLock()
		defer s.mu.RUnlock()
	}
	for i, t := range texts {
		v := vecOf(i)
		if v == nil {
			var ok bool
			if v, ok = fresh[t]; !ok {
				v = s.vecs[t]
			}
		}
		if len(v) != len(q) {
			return nil, fmt.Errorf("passage %d: vector dimension %d, query %d", i, len(v), len(q))
		}
		out[i] = vecmath.CosineNorm32(q, qn, v)
	}
	return out, nil
}
