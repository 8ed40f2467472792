// Package lexref keeps lexical.Terms as it was before the shared ASCII
// scanner, the perfect-hash stop words and lexical.Vocab (commit be60b0e),
// verbatim, with its own copy of the stop words: the reference the faster
// tokenizer is tested and fuzzed against, and the baseline benchmarks time
// it against. Nothing outside tests uses it.
package lexref

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

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

// StopWords lists the stop words, so tests can check that lexical drops
// the same ones.
func StopWords() []string {
	var out []string
	for w := range stopWords {
		out = append(out, w)
	}
	return out
}
