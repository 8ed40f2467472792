package score

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed"
)

// DefaultScorer is what a caller scores with when it names none: the
// embedded model fused with BM25 (DefaultHybrid), which beat both single
// retrievers on every data set held out from its choice (docs/hybrid.md).
const DefaultScorer = "hybrid"

// ErrUnknownScorer is wrapped by the error for a name no scorer of a Set
// answers to, which wraps ctxsel.ErrInvalidInput too.
var ErrUnknownScorer = errors.New("unknown scorer")

// inputError is err, the caller's to fix: it wraps ctxsel.ErrInvalidInput
// as well, its text unchanged.
type inputError struct{ err error }

func (e inputError) Error() string   { return e.err.Error() }
func (e inputError) Unwrap() []error { return []error{e.err, ctxsel.ErrInvalidInput} }

// Set builds scorers by name and keeps them, so that a hybrid scorer and a
// dense baseline share one embedder (and its vectors in memory). The
// names are "bm25", an embedder's name (an Embedding scorer over it,
// remembering vectors) and a hybrid spec (ParseHybrid; its dense half
// Dense unless dense=NAME says otherwise). It is safe for concurrent use.
type Set struct {
	// Embedders are the embedder names the set scores with, each opened
	// by Open on first use; close releases what Open opened.
	Embedders []string
	Open      func(name string) (e embed.Embedder, close func() error, err error)
	// Dense is the embedder name of a hybrid's dense half when its spec
	// names none, and the dense baseline (Baselines).
	Dense string

	mu     sync.Mutex
	byName map[string]Scorer
	closes []func() error
}

// Names describes the names Get takes, for a flag's help.
func (s *Set) Names() []string {
	return append([]string{"bm25", "hybrid[:alpha=0.5,fusion=zscore|minmax|rrf,dense=NAME]"}, s.Embedders...)
}

// Get returns the named scorer, built on first use. An unknown name or a
// bad hybrid spec is an error wrapping ctxsel.ErrInvalidInput.
func (s *Set) Get(name string) (Scorer, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.get(name)
}

func (s *Set) get(name string) (Scorer, error) {
	if sc, ok := s.byName[name]; ok {
		return sc, nil
	}
	var sc Scorer
	switch hs, isHybrid, err := ParseHybrid(name); {
	case err != nil:
		return nil, err
	case isHybrid:
		dense := hs.Dense
		if dense == "" {
			dense = s.Dense
		}
		d, err := s.get(dense)
		if err != nil {
			return nil, err
		}
		if sc, err = NewHybrid(d, hs.Method, hs.Alpha); err != nil {
			return nil, inputError{err}
		}
	case name == "bm25":
		sc = NewBM25()
	case slices.Contains(s.Embedders, name) && s.Open != nil:
		e, closeFn, err := s.Open(name)
		if err != nil {
			return nil, fmt.Errorf("scorer %s: %w", name, err)
		}
		s.closes = append(s.closes, closeFn)
		sc = NewEmbedding(name, e, EmbeddingOptions{Memo: true})
	default:
		return nil, inputError{fmt.Errorf("%w %q (known: %s)", ErrUnknownScorer, name, strings.Join(s.Names(), ", "))}
	}
	if s.byName == nil {
		s.byName = map[string]Scorer{}
	}
	s.byName[name] = sc
	return sc, nil
}

// EmbedderOf returns the embedder of the named embedding scorer, so that
// another user of the model (the evidence selector's sentences) shares
// its cache.
func (s *Set) EmbedderOf(name string) (embed.Embedder, error) {
	sc, err := s.Get(name)
	if err != nil {
		return nil, err
	}
	es, ok := sc.(*Embedding)
	if !ok {
		return nil, fmt.Errorf("scorer %s has no embedder", name)
	}
	return es.Embedder(), nil
}

// Baselines returns the single scorers a report compares main with: the
// dense and the lexical retriever (for a hybrid, its own two halves; for
// an embedding scorer, itself and BM25; else Dense and BM25).
func (s *Set) Baselines(main Scorer) ([]Scorer, error) {
	if h, ok := main.(*Hybrid); ok {
		return []Scorer{h.Dense, h.Lexical}, nil
	}
	dense := s.Dense
	if slices.Contains(s.Embedders, main.Name()) {
		dense = main.Name()
	}
	var out []Scorer
	for _, n := range []string{dense, "bm25"} {
		sc, err := s.Get(n)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

// Close releases every embedder the set opened.
func (s *Set) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, c := range s.closes {
		errs = append(errs, c())
	}
	s.closes = nil
	return errors.Join(errs...)
}
