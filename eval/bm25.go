package eval

import (
	"context"
	"math"
	"strings"
	"sync"
	"unicode"
)

// BM25 is the lexical scorer: Okapi BM25 (k1 = 1.2, b = 0.75) with the
// candidate set of each question as the corpus, so document frequencies
// describe the context being cut. Terms are lower-cased runs of letters and
// digits; English stop words are dropped; no stemming.
type BM25 struct {
	K1, B float64

	mu    sync.RWMutex
	terms map[string][]string // tokenised passages, by text
}

// NewBM25 returns a BM25 scorer with the usual parameters.
func NewBM25() *BM25 { return &BM25{K1: 1.2, B: 0.75, terms: map[string][]string{}} }

// Name implements Scorer.
func (s *BM25) Name() string { return "bm25" }

func (s *BM25) tokens(text string) []string {
	s.mu.RLock()
	t, ok := s.terms[text]
	s.mu.RUnlock()
	if ok {
		return t
	}
	t = Terms(text)
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
	total := 0
	for i, p := range passages {
		docs[i] = s.tokens(p)
		total += len(docs[i])
	}
	q := uniq(Terms(query))
	df := make(map[string]int, len(q))
	for _, t := range q {
		df[t] = 0
	}
	tfs := make([]map[string]int, len(docs))
	for i, d := range docs {
		tf := map[string]int{}
		for _, t := range d {
			if _, want := df[t]; want {
				tf[t]++
			}
		}
		for t := range tf {
			df[t]++
		}
		tfs[i] = tf
	}
	n := float64(len(docs))
	avg := float64(total) / max(n, 1)
	scores := make([]float64, len(docs))
	for i, tf := range tfs {
		norm := s.K1 * (1 - s.B + s.B*float64(len(docs[i]))/max(avg, 1))
		for t, f := range tf {
			idf := math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
			ff := float64(f)
			scores[i] += idf * ff * (s.K1 + 1) / (ff + norm)
		}
	}
	return scores, nil
}

// Terms splits text into lower-cased word terms without stop words.
func Terms(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

func uniq(ts []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be but by for from has have he her his how i in into is it its
		of on or she that the their them there these they this to was were what when where which who whom why will with
		would you your did does do than then so if not no can could also been being had may might our we us`) {
		m[w] = true
	}
	return m
}()
