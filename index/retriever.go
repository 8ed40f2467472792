package index

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/ctxsel/ctxsel/fusion"
	"github.com/ctxsel/ctxsel/lexical"
	"github.com/ctxsel/ctxsel/score"
)

// Retriever names how a query scores chunks.
type Retriever string

const (
	// Dense ranks by cosine similarity to the query vector.
	Dense Retriever = "dense"
	// BM25 ranks by Okapi BM25 (lexical.Default) of the query text, with
	// the live chunks as the corpus.
	BM25 Retriever = "bm25"
	// Hybrid fuses the two as Weaviate's hybrid query does: the best Limit
	// chunks of each, each list normalised over its own members (z-score by
	// default), a chunk missing from a list taking that list's floor, the
	// alpha-weighted sum ranking the union (see fusion.Lists).
	Hybrid Retriever = "hybrid"
)

// Defaults of a Query.
const (
	DefaultRetriever = Hybrid
	// DefaultAlpha and DefaultFusion are the module's hybrid default
	// (score.DefaultAlpha, score.DefaultMethod).
	DefaultAlpha  = score.DefaultAlpha
	DefaultFusion = score.DefaultMethod
)

// ParseRetriever accepts dense, bm25 and hybrid ("" is DefaultRetriever).
func ParseRetriever(s string) (Retriever, error) {
	switch r := Retriever(strings.ToLower(strings.TrimSpace(s))); r {
	case "":
		return DefaultRetriever, nil
	case Dense, BM25, Hybrid:
		return r, nil
	}
	return "", invalidf("unknown retriever %q (want dense, bm25 or hybrid)", s)
}

// Query is a search by vector, text or both.
type Query struct {
	// Vector is the embedded query (dense and hybrid).
	Vector []float32
	// Text is the query text (bm25 and hybrid).
	Text string
	// Limit is how many chunks to return (at least 1).
	Limit int
	// Retriever defaults to DefaultRetriever.
	Retriever Retriever
	// Alpha weights the dense scores in a hybrid query, in (0, 1]; 0 means
	// DefaultAlpha (rank by BM25 alone with Retriever BM25).
	Alpha float64
	// Fusion is the hybrid's fusion rule: "" is the back end's default
	// (z-score for the embedded index; minmax, Weaviate's
	// relativeScoreFusion, for Weaviate), otherwise zscore, minmax or rrf.
	Fusion fusion.Method
}

// Resolve fills q's defaults and checks it (errors wrap
// ctxsel.ErrInvalidInput); back ends call it before running q.
func (q Query) Resolve() (Query, error) {
	var err error
	if q.Retriever, err = ParseRetriever(string(q.Retriever)); err != nil {
		return q, err
	}
	if q.Limit <= 0 {
		return q, invalidf("search limit %d, want at least 1", q.Limit)
	}
	if q.Alpha == 0 {
		q.Alpha = DefaultAlpha
	}
	if !(q.Alpha > 0 && q.Alpha <= 1) {
		return q, invalidf("alpha %v outside (0, 1]", q.Alpha)
	}
	if q.Fusion == "" {
		q.Fusion = DefaultFusion
	}
	if q.Fusion, err = fusion.ParseMethod(string(q.Fusion)); err != nil {
		return q, invalidf("%v", err)
	}
	if q.Retriever != BM25 {
		if len(q.Vector) == 0 {
			return q, invalidf("a %s query needs a query vector", q.Retriever)
		}
		for _, x := range q.Vector {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return q, invalidf("query vector has a non-finite component")
			}
		}
	}
	if q.Retriever == BM25 && len(lexical.QueryTerms(q.Text)) == 0 {
		return q, invalidf("the query text has no searchable terms (only stop words or punctuation)")
	}
	return q, nil
}

// QuerySearcher is a Store that retrieves by text as well as by vector.
// Both back ends implement it.
type QuerySearcher interface {
	SearchQuery(ctx context.Context, q Query) ([]Hit, error)
}

// Retrieve runs q on s: through SearchQuery where s implements it, else
// (dense queries only) through Search. A store that cannot run a bm25 or
// hybrid query says so rather than answer densely.
func Retrieve(ctx context.Context, s Store, q Query) ([]Hit, error) {
	if qs, ok := s.(QuerySearcher); ok {
		return qs.SearchQuery(ctx, q)
	}
	q, err := q.Resolve()
	if err != nil {
		return nil, err
	}
	if q.Retriever != Dense {
		return nil, invalidf("this index (%T) retrieves only by vector: use retriever dense", s)
	}
	return s.Search(ctx, q.Vector, q.Limit)
}

// SearchQuery implements QuerySearcher: dense is Search; bm25 scores the
// live chunks' postings with lexical.Default, corpus statistics summed over
// the live chunks, so scores equal lexical.Default.Score over their texts;
// hybrid fuses the two (see Hybrid).
func (d *Dir) SearchQuery(ctx context.Context, q Query) (hits []Hit, err error) {
	defer d.afterSearch(&err)
	defer catchFault(&err)()
	q, err = q.Resolve()
	if err != nil {
		return nil, err
	}
	s, err := d.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if s.rows == 0 {
		return nil, nil
	}
	if q.Retriever != BM25 && len(q.Vector) != s.man.Config.Dim {
		return nil, fmt.Errorf("%w: query vector has dimension %d, the index %d", ErrMismatch, len(q.Vector), s.man.Config.Dim)
	}
	switch q.Retriever {
	case Dense:
		return s.search(ctx, Normalize(q.Vector), q.Limit, d.opts.Workers)
	case BM25:
		return s.lexSearch(ctx, q.Text, q.Limit, d.opts.Workers)
	}
	return s.hybrid(ctx, Normalize(q.Vector), q.Text, q.Limit, d.opts.Workers, q.Fusion, q.Alpha)
}
