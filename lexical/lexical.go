// Package lexical is ctxsel's one definition of lexical relevance: how text
// becomes terms, and Okapi BM25 over those terms. The eval scorer and the
// index's persistent lexical segments both use it, so a passage scores the
// same wherever it is scored. Everything here is pure and deterministic:
// sums run in the order of the query's terms, never in map order.
package lexical

import (
	"math"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Params are BM25's two knobs.
type Params struct {
	K1 float64 // term-frequency saturation
	B  float64 // document-length normalisation
}

// Default is the usual Okapi setting (k1 = 1.2, b = 0.75).
var Default = Params{K1: 1.2, B: 0.75}

// Terms splits text into lower-cased runs of letters and digits and drops
// English stop words; there is no stemming.
func Terms(text string) []string {
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			return termsUnicode(text)
		}
	}
	return termsASCII(text)
}

// termsASCII is Terms for ASCII text in one pass, without lower-casing
// the whole text first: the bulk of indexing time is tokenizing.
func termsASCII(text string) []string {
	out := make([]string, 0, len(text)/8)
	for i := 0; i < len(text); {
		for i < len(text) && !alnum(text[i]) {
			i++
		}
		start, upper := i, false
		for i < len(text) && alnum(text[i]) {
			upper = upper || 'A' <= text[i] && text[i] <= 'Z'
			i++
		}
		if start == i {
			break
		}
		w := text[start:i]
		if upper {
			w = strings.ToLower(w)
		}
		if len(w) > maxStopLen || !stopWords[w] {
			out = append(out, w)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func alnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// termsUnicode is Terms for any text.
func termsUnicode(text string) []string {
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

// QueryTerms is Terms with repeats removed, first occurrence first: a query
// term counts once however often the question repeats it.
func QueryTerms(text string) []string {
	ts := Terms(text)
	seen := make(map[string]bool, len(ts))
	out := ts[:0]
	for _, t := range ts {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// IDF is BM25's smoothed inverse document frequency of a term found in df of
// n documents (always positive).
func IDF(n, df int) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// Weight is one term's contribution: idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avgLen)).
func (p Params) Weight(idf float64, tf, docLen int, avgLen float64) float64 {
	if tf <= 0 {
		return 0
	}
	norm := p.K1 * (1 - p.B + p.B*float64(docLen)/max(avgLen, 1))
	f := float64(tf)
	return idf * f * (p.K1 + 1) / (f + norm)
}

// Score is BM25 of the query terms (see QueryTerms) against each document,
// with the documents themselves as the corpus: document frequencies describe
// the candidate set being cut. docs are term lists (see Terms).
func (p Params) Score(query []string, docs [][]string) []float64 {
	scores := make([]float64, len(docs))
	if len(query) == 0 || len(docs) == 0 {
		return scores
	}
	slot := make(map[string]int, len(query))
	for i, t := range query {
		if _, dup := slot[t]; !dup {
			slot[t] = i
		}
	}
	df := make([]int, len(query))
	tf := make([][]int32, len(docs)) // tf[d][query term]
	total := 0
	for d, terms := range docs {
		total += len(terms)
		var row []int32
		for _, t := range terms {
			if i, ok := slot[t]; ok {
				if row == nil {
					row = make([]int32, len(query))
				}
				if row[i] == 0 {
					df[i]++
				}
				row[i]++
			}
		}
		tf[d] = row
	}
	avg := float64(total) / float64(len(docs))
	idf := make([]float64, len(query))
	for i := range query {
		idf[i] = IDF(len(docs), df[i])
	}
	for d, row := range tf {
		if row == nil {
			continue
		}
		for i, f := range row { // query order: the same sum on every run
			scores[d] += p.Weight(idf[i], int(f), len(docs[d]), avg)
		}
	}
	return scores
}

// maxStopLen is the longest stop word's length: longer words skip the
// lookup.
var maxStopLen = func() int {
	n := 0
	for w := range stopWords {
		n = max(n, len(w))
	}
	return n
}()

var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be but by for from has have he her his how i in into is it its
		of on or she that the their them there these they this to was were what when where which who whom why will with
		would you your did does do than then so if not no can could also been being had may might our we us`) {
		m[w] = true
	}
	return m
}()
