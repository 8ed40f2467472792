package evidence

import (
	"context"
	"fmt"
	"slices"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/score"
)

// sentenceSimilarity is each sentence's cosine similarity to the question.
// With a sentence store (Options.Sentences; ask supplies the index's), the
// vectors it stored are used for every passage it holds them for — by the
// selector's embedding model and for exactly the sentences Split gives
// now — and only the rest (another model's, spans that differ, passages
// from elsewhere) are embedded. A store that fails (damage) fails the
// selection: stored vectors are never silently replaced by fresh ones.
func (s *Selector) sentenceSimilarity(ctx context.Context, q ctxsel.TextQuery, ps []passage, texts []string) ([]float64, error) {
	emb, ok := s.dense.(*score.Embedding)
	if s.opt.Sentences == nil || !ok {
		return s.dense.Score(ctx, q.Question, texts)
	}
	ids, ptexts := make([]string, len(ps)), make([]string, len(ps))
	for i, p := range ps {
		ids[i], ptexts[i] = q.Curve.Candidate(p.input).ID, p.text
	}
	stored, err := s.opt.Sentences.StoredSentences(ctx, emb.Embedder().ModelID(), ids, ptexts)
	if err != nil {
		return nil, fmt.Errorf("stored sentence vectors: %w", err)
	}
	if len(stored) != len(ps) {
		return nil, fmt.Errorf("stored sentence vectors: %d answers for %d passages", len(stored), len(ps))
	}
	known := make([][]float32, len(texts))
	for i, p := range ps {
		st := stored[i]
		if st == nil || len(st.Vectors) != len(st.Spans) || !slices.Equal(st.Spans, p.units.Sentences) {
			continue
		}
		copy(known[p.first:p.first+p.n], st.Vectors)
	}
	return emb.ScoreKnown(ctx, q.Question, texts, known)
}
