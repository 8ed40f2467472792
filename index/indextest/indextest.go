// Package indextest holds test helpers for packages that index and search
// text: a deterministic, dependency-free embedder, and the chunker,
// documents and search the index and ingestion tests share.
package indextest

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/lexical"
	"github.com/ctxsel/ctxsel/token"
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

// Chunker is the chunker the index tests use: sentences, 40 tokens.
func Chunker(t testing.TB) chunk.Chunker {
	t.Helper()
	tk, err := token.New("")
	if err != nil {
		t.Fatal(err)
	}
	c, err := chunk.NewSentences(tk, 40)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Config is the index config of documents made with c and HashEmbedder.
func Config(c chunk.Chunker) index.Config {
	return index.Config{Model: HashEmbedder{}.ModelID(), Chunker: c.Spec(), Encoding: "cl100k_base"}
}

// Doc chunks text with c and embeds it with HashEmbedder.
func Doc(t testing.TB, c chunk.Chunker, id, text string) index.Document {
	t.Helper()
	cs, err := c.Chunk(context.Background(), id, text)
	if err != nil {
		t.Fatal(err)
	}
	d := index.Document{ID: id, Source: "/src/" + id, SourceHash: "sh-" + id, Hash: index.Hash([]byte(text)), Text: text, Chunks: cs}
	for _, ch := range cs {
		d.Vectors = append(d.Vectors, HashVector(ch.Text))
	}
	return d
}

// Search searches s for q's HashVector.
func Search(t testing.TB, s index.Store, q string, limit int) []index.Hit {
	t.Helper()
	hits, err := s.Search(context.Background(), HashVector(q), limit)
	if err != nil {
		t.Fatal(err)
	}
	return hits
}

// IDs lists the ids of the documents s holds, in order.
func IDs(t testing.TB, s index.Store) []string {
	t.Helper()
	list, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range list {
		ids = append(ids, d.ID)
	}
	return ids
}

// LiveChunks returns every live chunk of s (through a dense search for all
// of them), by chunk id.
func LiveChunks(t testing.TB, s *index.Dir) map[string]index.Hit {
	t.Helper()
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]index.Hit{}
	if st.Chunks == 0 {
		return out
	}
	hits, err := s.Search(context.Background(), HashVector("anything"), st.Chunks+10)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hits {
		out[h.ID()] = h
	}
	if len(out) != st.Chunks {
		t.Fatalf("%d chunks searchable, stats say %d", len(out), st.Chunks)
	}
	return out
}

// WantBM25 is lexical.Default.Score with the live chunks as the corpus,
// ranked as the index ranks (score, document, chunk), positive scores only.
func WantBM25(live map[string]index.Hit, q string) []index.Hit {
	var all []index.Hit
	for _, h := range live {
		all = append(all, h)
	}
	index.SortHits(all) // any fixed order
	docs := make([][]string, len(all))
	for i, h := range all {
		docs[i] = lexical.Terms(h.Text)
	}
	scores := lexical.Default.Score(lexical.QueryTerms(q), docs)
	var out []index.Hit
	for i, h := range all {
		if scores[i] > 0 {
			h.Score = scores[i]
			out = append(out, h)
		}
	}
	index.SortHits(out)
	return out
}

// CheckBM25 asserts that the index's BM25 ranking of q over its live
// chunks is exactly lexical.Default.Score's: same chunks, same order,
// bit-identical scores.
func CheckBM25(t testing.TB, s *index.Dir, q string) []index.Hit {
	t.Helper()
	want := WantBM25(LiveChunks(t, s), q)
	got, err := s.SearchQuery(context.Background(), index.Query{Text: q, Limit: 1 << 20, Retriever: index.BM25})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("query %q: %d BM25 hits, want %d", q, len(got), len(want))
	}
	for i := range got {
		if got[i].ID() != want[i].ID() || got[i].Score != want[i].Score || got[i].Text != want[i].Text {
			t.Fatalf("query %q hit %d: %s %v, want %s %v", q, i, got[i].ID(), got[i].Score, want[i].ID(), want[i].Score)
		}
	}
	return got
}

// SentenceDoc is Doc with every chunk's sentence vectors
// (chunk.SplitSentences, HashVector): for an index that keeps them.
func SentenceDoc(t testing.TB, c chunk.Chunker, id, text string) index.Document {
	t.Helper()
	d := Doc(t, c, id, text)
	for _, ch := range d.Chunks {
		var cs index.ChunkSentences
		for _, sp := range chunk.SplitSentences(ch.Text) {
			cs.Spans = append(cs.Spans, sp)
			cs.Vectors = append(cs.Vectors, HashVector(ch.Text[sp[0]:sp[1]]))
		}
		d.Sentences = append(d.Sentences, cs)
	}
	return d
}
