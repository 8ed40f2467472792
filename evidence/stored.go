package evidence

import (
	"context"
	"fmt"
	"slices"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/score"
)

// sentenceSimilarity is the cosine similarity to the question of the
// sentences texts[i] for i in todo (texts are every sentence of ps, in
// order).
// With a sentence store (Options.Sentences; ask supplies the index's), the
// vectors it stored are used for every passage it holds them for — by the
// selector's embedding model and for exactly the sentences Split gives
// now — and only the rest (another model's, spans that differ, passages
// from elsewhere) are embedded. A store that fails (damage) fails the
// selection: stored vectors are never silently replaced by fresh ones.
func (s *Selector) sentenceSimilarity(ctx context.Context, q ctxsel.TextQuery, ps []passage, texts []string, todo []int) ([]float64, error) {
	sub := make([]string, len(todo))
	for j, i := range todo {
		sub[j] = texts[i]
	}
	emb, ok := s.dense.(*score.Embedding)
	if s.opt.Sentences == nil || !ok {
		return s.dense.Score(ctx, q.Question, sub)
	}
	// only the passages holding a sentence to score are read (in the
	// second pass, the first pass's passages are scored already)
	scoring := make([]bool, len(texts))
	for _, i := range todo {
		scoring[i] = true
	}
	var asked []passage
	var ids, ptexts []string
	for _, p := range ps {
		if slices.Contains(scoring[p.first:p.first+p.n], true) {
			asked = append(asked, p)
			ids, ptexts = append(ids, q.Curve.Candidate(p.input).ID), append(ptexts, p.text)
		}
	}
	stored, err := s.opt.Sentences.StoredSentences(ctx, emb.Embedder().ModelID(), ids, ptexts)
	if err != nil {
		return nil, fmt.Errorf("stored sentence vectors: %w", err)
	}
	if len(stored) != len(asked) {
		return nil, fmt.Errorf("stored sentence vectors: %d answers for %d passages", len(stored), len(asked))
	}
	known := make([][]float32, len(texts))
	for i, p := range asked {
		st := stored[i]
		if st == nil || len(st.Vectors) != len(st.Spans) || !slices.Equal(st.Spans, p.units.Sentences) {
			continue
		}
		copy(known[p.first:p.first+p.n], st.Vectors)
	}
	subKnown := make([][]float32, len(todo))
	for j, i := range todo {
		subKnown[j] = known[i]
	}
	return emb.ScoreKnown(ctx, q.Question, sub, subKnown)
}
