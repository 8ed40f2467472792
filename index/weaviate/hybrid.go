//go:build !(386 || arm || mips || mipsle)

package weaviate

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/weaviate/weaviate-go-client/v5/weaviate/graphql"
	"github.com/weaviate/weaviate/entities/models"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/fusion"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/lexical"
)

var _ index.QuerySearcher = (*Store)(nil)

// SearchQuery implements index.QuerySearcher with Weaviate's own queries:
// dense is Search (nearVector), bm25 Weaviate's bm25 over the chunk text,
// hybrid Weaviate's hybrid query with alpha on the vector side and fusion
// minmax (relativeScoreFusion, the default here: Weaviate has no z-score
// fusion) or rrf (rankedFusion). The query text is passed as ctxsel's query
// terms (lexical.QueryTerms), so both back ends search the same words.
// Scores are Weaviate's: its BM25 (which leaves out BM25's constant factor
// k1+1, so its scores are ctxsel's divided by 2.2) and its fused scores.
func (s *Store) SearchQuery(ctx context.Context, q index.Query) ([]index.Hit, error) {
	if q.Fusion == "" {
		q.Fusion = fusion.MinMax
	}
	q, err := q.Resolve()
	if err != nil {
		return nil, err
	}
	if q.Retriever == index.Dense {
		return s.Search(ctx, q.Vector, q.Limit)
	}
	var ft graphql.FusionType
	switch q.Fusion {
	case fusion.MinMax:
		ft = graphql.RelativeScore
	case fusion.RRF:
		ft = graphql.Ranked
	default:
		return nil, fmt.Errorf("%w: weaviate fuses by minmax (relativeScoreFusion) or rrf (rankedFusion), not %s", ctxsel.ErrInvalidInput, q.Fusion)
	}
	cfg, cl, ok, err := s.schema(ctx)
	if err != nil || !ok {
		return nil, err
	}
	if !slices.ContainsFunc(cl.Properties, func(p *models.Property) bool { return p.Name == pTerms }) {
		return nil, fmt.Errorf("%w: weaviate collection %s was created before ctxsel indexed terms for BM25, so it cannot answer %s queries: "+
			"re-create it (ctxsel index add into a new collection) or use retriever dense", ctxsel.ErrInvalidInput, s.class, q.Retriever)
	}
	text := strings.Join(lexical.QueryTerms(q.Text), " ")
	get := s.client.GraphQL().Get().WithClassName(s.class).WithLimit(q.Limit)
	if q.Retriever == index.BM25 {
		get = get.WithBM25(s.client.GraphQL().Bm25ArgBuilder().WithQuery(text).WithProperties(pTerms))
	} else {
		if len(q.Vector) != cfg.Dim {
			return nil, fmt.Errorf("%w: query vector has dimension %d, the index %d", index.ErrMismatch, len(q.Vector), cfg.Dim)
		}
		get = get.WithHybrid(s.client.GraphQL().HybridArgumentBuilder().WithQuery(text).WithVector(index.Normalize(q.Vector)).
			WithAlpha(float32(q.Alpha)).WithProperties([]string{pTerms}).WithFusionType(ft))
	}
	fs := append(fields(pDoc, pChunkIndex, pStart, pEnd, pCharStart, pCharEnd, pTokens, pText, pSource),
		graphql.Field{Name: "_additional", Fields: fields("score")})
	objs, err := s.getObjects(ctx, get.WithFields(fs...))
	if err != nil {
		return nil, err
	}
	hits := make([]index.Hit, 0, len(objs))
	for _, o := range objs {
		sc, ok := score(additional(o)["score"])
		if !ok {
			return nil, fmt.Errorf("weaviate %s: %s search: result without a score", s.location, q.Retriever)
		}
		h := index.Hit{Source: str(o, pSource), Score: sc}
		h.Doc, h.Index, h.Text = str(o, pDoc), num(o, pChunkIndex), str(o, pText)
		h.Start, h.End, h.CharStart, h.CharEnd, h.Tokens = num(o, pStart), num(o, pEnd), num(o, pCharStart), num(o, pCharEnd), num(o, pTokens)
		hits = append(hits, h)
	}
	index.SortHits(hits)
	return hits, nil
}

// score reads _additional.score, which GraphQL returns as a string.
func score(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}
