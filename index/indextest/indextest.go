// Package indextest holds test helpers for packages that index and search
// text: a deterministic, dependency-free embedder.
package indextest

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"sync/atomic"
	"unicode"

	"github.com/ctxsel/ctxsel/embed"
)

// HashDim is the dimension of HashEmbedder's vectors, the same as the
// embedded model's.
const HashDim = 512

// HashEmbedder is a deterministic bag-of-words embedder for tests: every
// lower-cased word (letters and digits) adds ±1 to one of HashDim
// components chosen by its FNV hash, and the sum is scaled to unit length.
// Texts sharing words are similar; texts without words embed to zero.
type HashEmbedder struct {
	// Calls counts Embed calls when non-nil (tests check caching).
	Calls *atomic.Int64
}

var _ embed.Embedder = HashEmbedder{}

// ModelID implements embed.Embedder.
func (HashEmbedder) ModelID() string { return "test-hash-512" }

// Embed implements embed.Embedder.
func (h HashEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if h.Calls != nil {
		h.Calls.Add(1)
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = HashVector(t)
	}
	return out, nil
}

// HashVector is the vector HashEmbedder gives text.
func HashVector(text string) []float32 {
	v := make([]float32, HashDim)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		f := fnv.New64a()
		f.Write([]byte(w))
		s := f.Sum64()
		if s>>63 == 1 {
			v[s%HashDim]--
		} else {
			v[s%HashDim]++
		}
	}
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n > 0 {
		inv := float32(1 / math.Sqrt(n))
		for i := range v {
			v[i] *= inv
		}
	}
	return v
}
