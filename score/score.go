// Package score gives texts a similarity to a query: the one Scorer
// interface of the module and its three implementations — Okapi BM25 over
// the texts themselves (BM25), cosine similarity of embeddings from any
// embed.Embedder (Embedding) and their fusion (Hybrid) — with the ranking
// that follows ("score, then rank best first"). Evaluation scores pooled
// passages with it, rerank scores a request's documents, lengthest scores
// documents, mining and the picker's export rank passages with RankBM25,
// and index retrieval fuses its two lists with FuseLists.
//
// A Scorer takes any set of texts: whole passages, or the sentences of a
// candidate set scored against a question (BM25 then counts document
// frequencies over those sentences).
package score

import (
	"context"
	"fmt"

	"github.com/ctxsel/ctxsel"
)

// Scorer gives each text a similarity to the query; higher is more
// relevant. Score returns one score per text, in order. Implementations
// are safe for concurrent use.
type Scorer interface {
	Name() string
	Score(ctx context.Context, query string, texts []string) ([]float64, error)
}

// Preparer is implemented by scorers that do better with every text up
// front (an embedding scorer that remembers vectors embeds them in large
// batches, once). Callers that score many queries over one pool call
// Prepare first; progress may be nil.
type Preparer interface {
	Prepare(ctx context.Context, texts []string, progress func(done, total int)) error
}

// ChannelScorer is a scorer whose score fuses several component curves (a
// dense and a lexical one). ScoreChannels returns the fused scores and each
// component's, in Channels() order, so that a selector can read every
// curve (ctxsel.Candidate.Channels).
type ChannelScorer interface {
	Scorer
	Channels() []string
	ScoreChannels(ctx context.Context, query string, texts []string) (fused []float64, channels [][]float64, err error)
}

// Rank scores texts against query with s and returns their indices best
// first (ctxsel.Ranking: ties in input order) and the scores by input
// position.
func Rank(ctx context.Context, s Scorer, query string, texts []string) (order []int, scores []float64, err error) {
	scores, err = s.Score(ctx, query, texts)
	if err != nil {
		return nil, nil, err
	}
	if len(scores) != len(texts) {
		return nil, nil, fmt.Errorf("scorer %s gave %d scores for %d texts", s.Name(), len(scores), len(texts))
	}
	return ctxsel.Ranking(scores), scores, nil
}
