package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/internal/vecmath"
	"github.com/ctxsel/ctxsel/internal/wire"
)

// How candidates get their scores when the request gives none: the cosine
// of given vectors with the query vector, or of embedded texts with the
// embedded query (the same scores rerank's dense scoring gives).

// vectorScores sets each candidate's score to the cosine similarity of its
// vector with the query vector.
func vectorScores(req *selectRequest) error {
	if !req.hasQVec || len(req.queryVec) == 0 {
		return wire.Bad("query_vector", "missing: candidates given as vectors are scored by cosine similarity to query_vector")
	}
	q, ok := vecmath.Unit(req.queryVec)
	if !ok {
		return wire.Bad("query_vector", "zero-norm vector: cosine similarity is undefined")
	}
	for i := range req.Cands {
		v := req.Vector(i)
		field := wire.Path{Name: "candidates", Idx: i, Sub: "vector"}
		if len(v) != len(q) {
			return wire.Bad(field.String(), "dimension %d, but query_vector has %d", len(v), len(q))
		}
		score, ok := vecmath.CosineUnit(q, v)
		if !ok {
			return wire.Bad(field.String(), "zero-norm vector: cosine similarity is undefined")
		}
		req.Cands[i].Score = score
	}
	return nil
}

// textScores embeds the candidates' texts and the query with the configured
// embedder and scores by cosine similarity.
func (s *Server) textScores(ctx context.Context, req *selectRequest) error {
	if s.embedder == nil {
		return wire.Bad("candidates[0].text", `this server has no embedder (started with --embedder none): send a "score" or a "vector" per candidate`)
	}
	if strings.TrimSpace(req.query) == "" {
		return wire.Bad("query", "missing: candidates given as text are scored against the embedded query")
	}
	texts := make([]string, len(req.Cands))
	for i := range texts {
		texts[i] = req.Text(i)
	}
	scores, err := s.embedScores(ctx, req.query, texts)
	if err != nil {
		return err
	}
	for i, sc := range scores {
		req.Cands[i].Score = sc
	}
	return nil
}

// embedScores is the cosine similarity of each text's embedding with the
// query's. The embedder gets copies: it may cache what it is given, and a
// slice of a request body would pin the whole body there. A query that
// embeds to nothing is a 400, the embedder's own failure a 502
// (backendError).
func (s *Server) embedScores(ctx context.Context, query string, texts []string) ([]float64, error) {
	// The query first: a query that embeds to nothing is refused before
	// the passages are embedded, and under load the short query call
	// does not queue again behind other requests' passages (embedlimit.go).
	qv, err := embed.Queries(ctx, s.embedder, []string{strings.Clone(query)})
	if err == nil {
		_, err = embed.CheckVectors(qv, 1)
	}
	if err != nil {
		return nil, embedFailure(err)
	}
	q, ok := vecmath.Unit(vecmath.F64(qv[0]))
	if !ok {
		return nil, wire.Bad("query", "the embedder returned a zero vector for the query")
	}
	own := make([]string, len(texts))
	for i, t := range texts {
		own[i] = strings.Clone(t)
	}
	vecs, err := s.embedder.Embed(ctx, own)
	if err == nil {
		_, err = embed.CheckVectors(vecs, len(own))
	}
	if err != nil {
		return nil, embedFailure(err)
	}
	scores := make([]float64, len(vecs))
	for i, v := range vecs {
		if len(v) != len(q) {
			return nil, &backendError{fmt.Errorf("passage vector dimension %d, query %d", len(v), len(q))}
		}
		score, ok := vecmath.CosineUnit(q, vecmath.F64(v))
		if !ok {
			score = 0 // an empty text embeds to nothing: as unrelated as can be
		}
		scores[i] = score
	}
	return scores, nil
}

func embedFailure(err error) error {
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		// The request's deadline or its client's disconnect, not the
		// embedder's failure: 504 or 499, never 502 (failure).
		return fmt.Errorf("embedder: %w", err)
	case errors.Is(err, ctxsel.ErrInvalidInput):
		return wire.Bad("candidates", "embedder: %v", err)
	}
	return &backendError{err}
}

// backendError is the embedder's own failure, which the client cannot fix:
// its text may name the backend's address, so writeFailure logs it and
// answers 502 with the request id.
type backendError struct{ err error }

func (e *backendError) Error() string { return "embedder failed: " + e.err.Error() }
func (e *backendError) Unwrap() error { return e.err }
