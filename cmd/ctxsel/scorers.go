package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ctxsel/ctxsel/eval"
)

// defaultScorer is the embedded model: offline, no keys, the papers' kind of
// retriever (cosine similarity of sentence embeddings).
const defaultScorer = "use-lite"

func scorerNames() []string { return append([]string{"bm25"}, embedderNames...) }

// newScorer returns a named scorer and a function that releases it.
func newScorer(name string) (eval.Scorer, func() error, error) {
	if name == "bm25" {
		return eval.NewBM25(), func() error { return nil }, nil
	}
	if !slices.Contains(embedderNames, name) {
		return nil, nil, usageError{fmt.Errorf("unknown scorer %q (known: %s)", name, strings.Join(scorerNames(), ", "))}
	}
	e, closeFn, err := newEmbedder(name)
	if err != nil {
		return nil, nil, fmt.Errorf("scorer %s: %w", name, err)
	}
	return eval.NewEmbedScorer(name, e), closeFn, nil
}
