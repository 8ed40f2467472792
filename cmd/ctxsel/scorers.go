package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ctxsel/ctxsel/eval"
)

const defaultScorer = "bm25"

var scorers = map[string]func() (eval.Scorer, error){
	"bm25": func() (eval.Scorer, error) { return eval.NewBM25(), nil },
}

func scorerNames() []string {
	var names []string
	for n := range scorers {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func newScorer(name string) (eval.Scorer, error) {
	mk, ok := scorers[name]
	if !ok {
		return nil, usageError{fmt.Errorf("unknown scorer %q (known: %s)", name, strings.Join(scorerNames(), ", "))}
	}
	s, err := mk()
	if err != nil {
		return nil, fmt.Errorf("scorer %s: %w", name, err)
	}
	return s, nil
}
