package eval

import (
	"context"
	"sync"

	"github.com/ctxsel/ctxsel/lexical"
)

// BM25 is the lexical scorer: Okapi BM25 (package lexical) with the
// candidate set of each question as the corpus, so document frequencies
// describe the context being cut. Scores are deterministic.
type BM25 struct {
	Params lexical.Params

	mu    sync.RWMutex
	terms map[string][]string // tokenised passages, by text
}

// NewBM25 returns a BM25 scorer with the usual parameters.
func NewBM25() *BM25 { return &BM25{Params: lexical.Default, terms: map[string][]string{}} }

// Name implements Scorer.
func (s *BM25) Name() string { return "bm25" }

func (s *BM25) tokens(text string) []string {
	s.mu.RLock()
	t, ok := s.terms[text]
	s.mu.RUnlock()
	if ok {
		return t
	}
	t = lexical.Terms(text)
	s.mu.Lock()
	if len(s.terms) > 1<<18 {
		clear(s.terms)
	}
	s.terms[text] = t
	s.mu.Unlock()
	return t
}

// Score implements Scorer.
func (s *BM25) Score(ctx context.Context, query string, passages []string) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	docs := make([][]string, len(passages))
	for i, p := range passages {
		docs[i] = s.tokens(p)
	}
	return s.Params.Score(lexical.QueryTerms(query), docs), nil
}
