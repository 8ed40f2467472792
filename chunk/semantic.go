package chunk

import (
	"context"
	"fmt"
	"math"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/internal/vecmath"
)

// Semantic is the semantic chunker of Context-Picker (Zhu et al., 2025): it
// embeds every sentence and starts a new chunk where the cosine similarity of
// two adjacent sentences drops below Threshold (the paper uses 0.75 with
// text-embedding-ada-002). Each resulting group of sentences is then packed
// like Sentences does, so no chunk exceeds MaxTokens (0: no limit).
type Semantic struct {
	tok       Tokenizer
	emb       embed.Embedder
	threshold float64
	maxTok    int
}

// NewSemantic returns a semantic chunker. threshold must lie in [-1, 1];
// maxTokens is 0 (no limit) or at least 8.
func NewSemantic(tok Tokenizer, e embed.Embedder, threshold float64, maxTokens int) (*Semantic, error) {
	switch {
	case tok == nil:
		return nil, invalidf("semantic chunker: no tokenizer")
	case e == nil:
		return nil, invalidf("semantic chunker: no embedder")
	case math.IsNaN(threshold) || threshold < -1 || threshold > 1:
		return nil, invalidf("semantic chunker: threshold=%v, want a cosine similarity in [-1, 1]", threshold)
	case maxTokens != 0 && maxTokens < 8:
		return nil, invalidf("semantic chunker: max_tokens=%d, want 0 (no limit) or at least 8", maxTokens)
	}
	return &Semantic{tok: tok, emb: e, threshold: threshold, maxTok: maxTokens}, nil
}

// Spec implements Chunker.
func (s *Semantic) Spec() string {
	return fmt.Sprintf("semantic:max_tokens=%d,threshold=%g", s.maxTok, s.threshold)
}

// embedBatch bounds how many sentences go to the embedder at once.
const embedBatch = 256

// Chunk implements Chunker.
func (s *Semantic) Chunk(ctx context.Context, doc, text string) ([]Chunk, error) {
	if err := checkText(doc, text); err != nil {
		return nil, err
	}
	sents := SplitSentences(text)
	if len(sents) == 0 {
		return nil, nil
	}
	vecs := make([][]float32, 0, len(sents))
	for lo := 0; lo < len(sents); lo += embedBatch {
		hi := min(lo+embedBatch, len(sents))
		texts := make([]string, hi-lo)
		for i := range texts {
			texts[i] = text[sents[lo+i][0]:sents[lo+i][1]]
		}
		v, err := s.emb.Embed(ctx, texts)
		if err != nil {
			return nil, fmt.Errorf("document %q: embed sentences: %w", doc, err)
		}
		if _, err := embed.CheckVectors(v, len(texts)); err != nil {
			return nil, fmt.Errorf("document %q: embed sentences: %w", doc, err)
		}
		vecs = append(vecs, v...)
	}
	var spans [][2]int
	var counts []int
	a := 0
	for i := 1; i <= len(sents); i++ {
		if i < len(sents) && vecmath.Cosine32(vecs[i-1], vecs[i]) >= s.threshold {
			continue
		}
		sp, c, err := pack(ctx, s.tok, text, sents[a:i], s.maxTok)
		if err != nil {
			return nil, fmt.Errorf("document %q: %w", doc, err)
		}
		spans = append(spans, sp...)
		counts = append(counts, c...)
		a = i
	}
	return finish(doc, text, spans, s.tok, counts), nil
}
