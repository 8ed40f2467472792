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
	if !isASCII(text) {
		return termsAny(text)
	}
	var out []string
	for i := 0; ; {
		a, b, _, upper := nextWord(text, i)
		if a == b {
			break
		}
		if out == nil {
			out = make([]string, 0, len(text)/8)
		}
		w := text[a:b]
		if upper {
			w = strings.ToLower(w)
		}
		out = append(out, w)
		i = b
	}
	return out
}

// isASCII reports whether text is all ASCII, eight bytes at a time.
func isASCII(text string) bool {
	i := 0
	for ; i+8 <= len(text); i += 8 {
		if load64(text[i:i+8])&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// load64 reads the first eight bytes of s little-endian (one load).
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// asciiClass classifies bytes for the ASCII scanner: letters and digits
// are classAlnum, upper-case letters also classUpper, all else 0.
const (
	classAlnum = 1
	classUpper = 2
)

var asciiClass = func() (t [256]uint8) {
	for c := '0'; c <= '9'; c++ {
		t[c] = classAlnum
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = classAlnum
		t[c-'a'+'A'] = classAlnum | classUpper
	}
	return t
}()

// nextWord is the ASCII tokenizer, shared by Terms and Vocab: the first
// run of letters and digits in text[i:] (ASCII text) that is not a stop
// word, as text[start:end], with whether it holds upper case and, when it
// is at most 8 bytes, its lower-cased bytes packed little-endian (see
// packLower). start == end: no word is left.
func nextWord(text string, i int) (start, end int, key uint64, upper bool) {
	for {
		for i < len(text) && asciiClass[text[i]] == 0 {
			i++
		}
		start = i
		var cl uint8
		for i < len(text) {
			c := asciiClass[text[i]]
			if c == 0 {
				break
			}
			cl |= c
			i++
		}
		n := i - start
		if n == 0 {
			return i, i, 0, false
		}
		key = 0
		if n <= 8 {
			key = packLower(text, start, n)
			if n <= maxStopLen && isStopKey(key, n) {
				continue
			}
		}
		return start, i, key, cl&classUpper != 0
	}
}

// packLower packs the n (1 to 8) letters and digits text[start:start+n],
// lower-cased, into a word little-endian: setting bit 5 lower-cases an
// ASCII letter and leaves a digit unchanged. No term holds a zero byte, so
// distinct terms of up to 8 bytes get distinct, non-zero keys (the same as
// packRaw of the lower-cased term).
func packLower(text string, start, n int) uint64 {
	var k uint64
	if start+8 <= len(text) {
		k = load64(text[start : start+8])
	} else {
		for j := n - 1; j >= 0; j-- {
			k = k<<8 | uint64(text[start+j])
		}
	}
	mask := ^uint64(0) >> (64 - 8*n)
	return (k | 0x2020202020202020) & mask
}

// packRaw packs a term of 1 to 8 bytes little-endian.
func packRaw[T string | []byte](w T) uint64 {
	var k uint64
	for j := len(w) - 1; j >= 0; j-- {
		k = k<<8 | uint64(w[j])
	}
	return k
}

// termsAny is Terms for any text (see nextWordAny).
func termsAny(text string) []string {
	var out []string
	var buf []byte
	for i := 0; ; {
		a, b, low := nextWordAny(text, i, buf)
		if a == b {
			return out
		}
		w := text[a:b]
		if low != nil {
			w, buf = string(low), low
		}
		out = append(out, w)
		i = b
	}
}

// nextWordAny is nextWord for any text, rune by rune, and the definition
// the ASCII scanner agrees with: the terms are the fields of
// strings.ToLower(text) split at every rune that is neither a letter nor a
// digit. strings.ToLower maps each rune of text to unicode.ToLower of it
// (an invalid byte to U+FFFD, a separator) and keeps the bytes of a rune
// it does not change, so a rune of text belongs to a term iff its lower
// case is a letter or digit, and a term is text[start:end] itself unless
// lowering changes one of its runes; then low is the lower-cased term,
// appended to buf[:0]. Stop words are skipped; start == end: no term is
// left.
func nextWordAny(text string, i int, buf []byte) (start, end int, low []byte) {
	for {
		start = -1
		changed := false
	scan:
		for i < len(text) {
			c := text[i]
			if c < utf8.RuneSelf {
				cl := asciiClass[c]
				if cl == 0 {
					if start >= 0 {
						break scan
					}
				} else {
					if start < 0 {
						start = i
					}
					changed = changed || cl&classUpper != 0
				}
				i++
				continue
			}
			r, n := utf8.DecodeRuneInString(text[i:])
			if lr := unicode.ToLower(r); unicode.IsLetter(lr) || unicode.IsDigit(lr) {
				if start < 0 {
					start = i
				}
				changed = changed || lr != r
			} else if start >= 0 {
				break scan
			}
			i += n
		}
		if start < 0 {
			return i, i, nil
		}
		w := text[start:i]
		low = nil
		if changed {
			low = buf[:0]
			for _, r := range w {
				low = utf8.AppendRune(low, unicode.ToLower(r))
			}
		}
		if low == nil {
			if len(w) <= maxStopLen && isStopKey(packRaw(w), len(w)) {
				continue
			}
		} else if len(low) <= maxStopLen && isStopKey(packRaw(low), len(low)) {
			continue
		}
		return start, i, low
	}
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

// The ASCII tokenizer tests stop words with a perfect hash instead of the
// map (a map lookup per word was the largest cost of indexing): each stop
// word's packed bytes with its length in the top byte, placed by a
// multiplicative hash whose multiplier is searched at start-up so that no
// two stop words share a slot. One multiply, one load, one compare.
const stopBits = 9

var stopMul, stopTable = func() (uint64, *[1 << stopBits]uint64) {
	var keys []uint64
	for w := range stopWords {
		if len(w) > 7 || !isASCII(w) || strings.ToLower(w) != w {
			panic("lexical: stop word " + w + " is not short lower-case ASCII")
		}
		keys = append(keys, packRaw(w)|uint64(len(w))<<56)
	}
	x := uint64(0x9e3779b97f4a7c15)
	for {
		x += 0x9e3779b97f4a7c15 // splitmix64: a fixed, deterministic sequence
		m := x
		m = (m ^ m>>30) * 0xbf58476d1ce4e5b9
		m = (m ^ m>>27) * 0x94d049bb133111eb
		m = (m ^ m>>31) | 1
		t := new([1 << stopBits]uint64)
		ok := true
		for _, k := range keys {
			s := &t[k*m>>(64-stopBits)]
			if *s != 0 {
				ok = false
				break
			}
			*s = k
		}
		if ok {
			return m, t
		}
	}
}()

// isStopKey reports whether the word of n ≤ 7 bytes packed as key is a
// stop word.
func isStopKey(key uint64, n int) bool {
	k := key | uint64(n)<<56
	return stopTable[k*stopMul>>(64-stopBits)] == k
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
