package evidence

import (
	"context"
	"fmt"
	"math"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/lexical"
)

// TextScorer scores texts against a query, higher meaning more relevant,
// one score per text in order. It is the seam through which sentences are
// scored (BM25 and dense similarity); implementations must be safe for
// concurrent use.
type TextScorer interface {
	Score(ctx context.Context, query string, texts []string) ([]float64, error)
}

// BM25 scores texts by Okapi BM25 (package lexical) with the texts
// themselves as the corpus: over a candidate set's sentences, the
// document frequencies are those of that set. Pure.
type BM25 struct{}

// Score implements TextScorer.
func (BM25) Score(_ context.Context, query string, texts []string) ([]float64, error) {
	docs := make([][]string, len(texts))
	for i, t := range texts {
		docs[i] = lexical.Terms(t)
	}
	return lexical.Default.Score(lexical.QueryTerms(query), docs), nil
}

// Dense scores texts by the cosine similarity of their embeddings to the
// query's (embed.Queries for the query), all texts in one Embed call, so a
// batching backend batches them and a cache (embed/cache) answers what it
// has seen.
type Dense struct{ Embedder embed.Embedder }

// Score implements TextScorer.
func (d Dense) Score(ctx context.Context, query string, texts []string) ([]float64, error) {
	if d.Embedder == nil {
		return nil, fmt.Errorf("dense sentence scores: no embedder")
	}
	q, err := embed.Queries(ctx, d.Embedder, []string{query})
	if err != nil {
		return nil, fmt.Errorf("embed question: %w", err)
	}
	if _, err := embed.CheckVectors(q, 1); err != nil {
		return nil, fmt.Errorf("embed question: %w", err)
	}
	out := make([]float64, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	vs, err := d.Embedder.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed sentences: %w", err)
	}
	dim, err := embed.CheckVectors(vs, len(texts))
	if err != nil {
		return nil, fmt.Errorf("embed sentences: %w", err)
	}
	if dim != len(q[0]) {
		return nil, fmt.Errorf("embed sentences: %d dimensions, the question has %d", dim, len(q[0]))
	}
	qn := norm(q[0])
	for i, v := range vs {
		out[i] = cosine(q[0], v, qn)
	}
	return out, nil
}

func norm(v []float32) float64 {
	s := 0.0
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func cosine(q, v []float32, qn float64) float64 {
	dot := 0.0
	for i := range q {
		dot += float64(q[i]) * float64(v[i])
	}
	d := qn * norm(v)
	if d == 0 {
		return 0
	}
	return dot / d
}
