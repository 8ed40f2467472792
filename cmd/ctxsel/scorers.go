package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/score"
)

// defaultScorer is what eval and train score with when --scorer is not
// given: the embedded model fused with BM25 (z-scores, equal weights),
// which beat both single retrievers on every data set held out from its
// choice (docs/hybrid.md).
// defaultDense is the embedded model: offline, no keys, the papers' kind
// of retriever (cosine similarity of sentence embeddings), and the dense
// half of hybrid unless dense=NAME says otherwise.
const (
	defaultScorer = "hybrid"
	defaultDense  = "use-lite"
)

func scorerNames() []string {
	return append([]string{"bm25", "hybrid[:alpha=0.5,fusion=zscore|minmax|rrf,dense=NAME]"}, embedderNames...)
}

// scorerSet builds scorers by name and keeps them, so that a hybrid scorer
// and a dense baseline share one embedder (and its vectors in memory).
type scorerSet struct {
	byName map[string]score.Scorer
	closes []func() error
}

func newScorerSet() *scorerSet { return &scorerSet{byName: map[string]score.Scorer{}} }

// get returns the named scorer: bm25, an embedder name, or a hybrid spec.
func (ss *scorerSet) get(name string) (score.Scorer, error) {
	if s, ok := ss.byName[name]; ok {
		return s, nil
	}
	var s score.Scorer
	switch hs, isHybrid, err := score.ParseHybrid(name); {
	case err != nil:
		return nil, usageError{err}
	case isHybrid:
		dense := hs.Dense
		if dense == "" {
			dense = defaultDense
		}
		d, err := ss.get(dense)
		if err != nil {
			return nil, err
		}
		if s, err = score.NewHybrid(d, hs.Method, hs.Alpha); err != nil {
			return nil, usageError{err}
		}
	case name == "bm25":
		s = score.NewBM25()
	case slices.Contains(embedderNames, name):
		e, closeFn, err := newEmbedder(name)
		if err != nil {
			return nil, fmt.Errorf("scorer %s: %w", name, err)
		}
		ss.closes = append(ss.closes, closeFn)
		s = score.NewEmbedding(name, e, score.EmbeddingOptions{Memo: true})
	default:
		return nil, usageError{fmt.Errorf("unknown scorer %q (known: %s)", name, strings.Join(scorerNames(), ", "))}
	}
	ss.byName[name] = s
	return s, nil
}

// embedderOf returns the embedder of the named embedding scorer, so that
// another user of the model (the evidence selector's sentences) shares its
// cache.
func (ss *scorerSet) embedderOf(name string) (embed.Embedder, error) {
	s, err := ss.get(name)
	if err != nil {
		return nil, err
	}
	es, ok := s.(*score.Embedding)
	if !ok {
		return nil, fmt.Errorf("scorer %s has no embedder", name)
	}
	return es.Embedder(), nil
}

// baselines returns the single scorers a report compares with: the dense
// and the lexical retriever (for a hybrid, its own two halves).
func (ss *scorerSet) baselines(main score.Scorer) ([]score.Scorer, error) {
	if h, ok := main.(*score.Hybrid); ok {
		return []score.Scorer{h.Dense, h.Lexical}, nil
	}
	dense := defaultDense
	if slices.Contains(embedderNames, main.Name()) {
		dense = main.Name()
	}
	var out []score.Scorer
	for _, n := range []string{dense, "bm25"} {
		s, err := ss.get(n)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (ss *scorerSet) Close() error {
	var errs []error
	for _, c := range ss.closes {
		errs = append(errs, c())
	}
	return errors.Join(errs...)
}

// newScorer returns a named scorer and a function that releases it.
func newScorer(name string) (score.Scorer, func() error, error) {
	ss := newScorerSet()
	s, err := ss.get(name)
	if err != nil {
		ss.Close()
		return nil, nil, err
	}
	return s, ss.Close, nil
}
