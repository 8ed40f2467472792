package score

import (
	"context"
	"sync"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/lexical"
)

// BM25 is the lexical scorer: Okapi BM25 (package lexical) with the texts
// being scored as the corpus, so document frequencies describe the set
// being cut (a question's pooled passages, a candidate set's sentences).
// Scores are deterministic.
//
// The zero value scores with lexical.Default and tokenises every text
// afresh; NewBM25's scorer also remembers each text's terms, which pays
// when the same texts are scored against many queries (a pooled
// evaluation). Both are safe for concurrent use.
type BM25 struct {
	// Params are the BM25 parameters; the zero value means lexical.Default.
	Params lexical.Params

	memo *termMemo
}

// termMemo keeps tokenised texts by text, cleared when it grows past
// maxMemo entries.
type termMemo struct {
	mu    sync.RWMutex
	terms map[string][]string
}

const maxMemo = 1 << 18

// NewBM25 returns a BM25 scorer with the usual parameters that remembers
// the terms of the texts it has scored.
func NewBM25() *BM25 {
	return &BM25{Params: lexical.Default, memo: &termMemo{terms: map[string][]string{}}}
}

// Name implements Scorer.
func (s *BM25) Name() string { return "bm25" }

func (s *BM25) tokens(text string) []string {
	m := s.memo
	if m == nil {
		return lexical.Terms(text)
	}
	m.mu.RLock()
	t, ok := m.terms[text]
	m.mu.RUnlock()
	if ok {
		return t
	}
	t = lexical.Terms(text)
	m.mu.Lock()
	if len(m.terms) > maxMemo {
		clear(m.terms)
	}
	m.terms[text] = t
	m.mu.Unlock()
	return t
}

// Score implements Scorer.
func (s *BM25) Score(ctx context.Context, query string, texts []string) ([]float64, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	docs := make([][]string, len(texts))
	for i, t := range texts {
		docs[i] = s.tokens(t)
	}
	p := s.Params
	if p == (lexical.Params{}) {
		p = lexical.Default
	}
	return p.Score(lexical.QueryTerms(query), docs), nil
}

// BM25Scores scores texts against query with lexical.Default, the texts as
// the corpus: what a BM25 scorer's Score returns, without a context or a
// scorer to keep.
func BM25Scores(query string, texts []string) []float64 {
	docs := make([][]string, len(texts))
	for i, t := range texts {
		docs[i] = lexical.Terms(t)
	}
	return lexical.Default.Score(lexical.QueryTerms(query), docs)
}

// RankBM25 returns the indices of texts best first by BM25 against query
// (BM25Scores), ties in input order.
func RankBM25(query string, texts []string) []int {
	return ctxsel.Ranking(BM25Scores(query, texts))
}
