// Package index stores chunked, embedded documents and finds the chunks most
// similar to a query vector. Two back ends implement one small interface,
// Store: the embedded index (Dir: a directory on disk, no server, exact
// brute-force cosine search over every chunk) and, in sub-package weaviate, a
// Weaviate collection for corpora that outgrow one machine.
//
// Back ends only store and score; they never decide how many passages to
// keep. Search returns the best candidates with their scores and ctxsel's
// strategies cut the curve (see package ask).
//
// Ingestion (reading .txt, .md, .html, .jsonl and LaRA folders, chunking,
// embedding, skipping unchanged files) is package index/ingest's job, the
// same for every back end.
package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/chunk"
)

// Errors a Store wraps so callers can tell what went wrong.
var (
	// ErrCorrupt marks an index whose files fail their checks (checksums,
	// sizes, structure). It is never returned for a merely missing index.
	ErrCorrupt = errors.New("index is corrupt")
	// ErrNotFound marks an index location that holds no index.
	ErrNotFound = errors.New("no index")
	// ErrMismatch marks a request that does not fit the index: another
	// embedding model, dimension, chunker or token encoding.
	ErrMismatch = errors.New("does not match the index")
)

// Config says how an index's vectors and chunks were made. Every batch added
// must carry the same Config, and queries must use the same model.
type Config struct {
	// Model is the embedder's ModelID.
	Model string `json:"model"`
	// Dim is the vector dimension.
	Dim int `json:"dim"`
	// Chunker is the chunker's Spec, e.g. "tokens:overlap=100,size=600".
	Chunker string `json:"chunker"`
	// Encoding is the token encoding of the chunks' token counts.
	Encoding string `json:"encoding"`
	// SentenceModel, when set, is the ModelID of the sentence vectors
	// stored beside every chunk's vector (Document.Sentences): the index
	// keeps them, so a query embeds none of its passages' sentences. ""
	// for an index that keeps none. A per-index choice: every batch must
	// agree.
	SentenceModel string `json:"sentence_model,omitempty"`
}

// Compatible reports how c differs from the index's config want, as an
// error wrapping ErrMismatch, or nil.
func (c Config) Compatible(want Config) error {
	var diffs []string
	if c.Model != want.Model {
		diffs = append(diffs, fmt.Sprintf("embedding model %q, the index uses %q", c.Model, want.Model))
	}
	if c.Dim != want.Dim && c.Dim != 0 && want.Dim != 0 {
		diffs = append(diffs, fmt.Sprintf("dimension %d, the index uses %d", c.Dim, want.Dim))
	}
	if c.Chunker != want.Chunker {
		diffs = append(diffs, fmt.Sprintf("chunker %q, the index uses %q", c.Chunker, want.Chunker))
	}
	if c.Encoding != want.Encoding {
		diffs = append(diffs, fmt.Sprintf("token encoding %q, the index uses %q", c.Encoding, want.Encoding))
	}
	switch {
	case c.SentenceModel == want.SentenceModel:
	case want.SentenceModel == "":
		diffs = append(diffs, fmt.Sprintf("sentence vectors by %q, the index keeps none (a per-index choice: a new index for them)", c.SentenceModel))
	case c.SentenceModel == "":
		diffs = append(diffs, fmt.Sprintf("no sentence vectors, the index keeps them by %q", want.SentenceModel))
	default:
		diffs = append(diffs, fmt.Sprintf("sentence vectors by %q, the index keeps them by %q", c.SentenceModel, want.SentenceModel))
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w: %s", ErrMismatch, strings.Join(diffs, "; "))
	}
	return nil
}

// Document is one document ready to store: its chunks and one vector per
// chunk.
type Document struct {
	// ID names the document; adding an ID that exists replaces it.
	ID string `json:"id"`
	// Source is where it was read from (an absolute file path), and
	// SourceHash that file's content hash, so unchanged files can be skipped.
	Source     string `json:"source,omitempty"`
	SourceHash string `json:"source_hash,omitempty"`
	// Hash identifies the document's text.
	Hash string `json:"hash"`
	// Text is the full text the chunks' offsets refer to.
	Text    string        `json:"-"`
	Chunks  []chunk.Chunk `json:"-"`
	Vectors [][]float32   `json:"-"`
	// Sentences are each chunk's sentence vectors, for an index that keeps
	// them (Config.SentenceModel): one per chunk, or nil.
	Sentences []ChunkSentences `json:"-"`
}

// Hash is the content hash ctxsel records for files and document texts
// (Document.Hash, SourceHash).
func Hash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:16])
}

// DocInfo describes a stored document.
type DocInfo struct {
	ID         string    `json:"id"`
	Source     string    `json:"source,omitempty"`
	SourceHash string    `json:"source_hash,omitempty"`
	Hash       string    `json:"hash"`
	Chunks     int       `json:"chunks"`
	Tokens     int       `json:"tokens"`
	Bytes      int       `json:"bytes"`
	Added      time.Time `json:"added,omitzero"`
}

// Hit is a chunk found by Search with its cosine similarity to the query.
type Hit struct {
	chunk.Chunk
	Source string  `json:"source,omitempty"`
	Score  float64 `json:"score"`
}

// ID is the chunk's identifier, "doc#index".
func (h Hit) ID() string { return h.Chunk.ID() }

// Stats summarises a store.
type Stats struct {
	Location string `json:"location"`
	Backend  string `json:"backend"`
	// Config is zero for an index that holds nothing yet.
	Config Config `json:"config"`
	// Vectors is the storage format of the embedded index (f32, f16, i8).
	Vectors string `json:"vectors,omitempty"`
	Docs    int    `json:"docs"`
	Chunks  int    `json:"chunks"`
	Tokens  int    `json:"tokens"`
	// DiskBytes is the size of the index files (embedded index only).
	DiskBytes int64 `json:"disk_bytes,omitempty"`
	// SentenceBytes is the part of DiskBytes that holds sentence vectors
	// (Config.SentenceModel).
	SentenceBytes int64 `json:"sentence_bytes,omitempty"`
	// Segments and DeadChunks describe the embedded index's files: chunks
	// of removed documents still on disk until compaction.
	Segments   int `json:"segments,omitempty"`
	DeadChunks int `json:"dead_chunks,omitempty"`
}

// Store is what every back end implements. Implementations are safe for
// concurrent use.
type Store interface {
	// Add stores documents, replacing any with the same ID. cfg must match
	// the index's Config (an empty index takes it). For the embedded index
	// a call is atomic: after a crash either all of docs are stored or none.
	Add(ctx context.Context, cfg Config, docs []Document) error
	// Remove deletes documents by ID and returns how many existed.
	Remove(ctx context.Context, ids []string) (int, error)
	// List describes every stored document, ordered by ID.
	List(ctx context.Context) ([]DocInfo, error)
	// Search returns the limit chunks most similar to vec (cosine), best
	// first, ties broken by document id, then chunk index.
	Search(ctx context.Context, vec []float32, limit int) ([]Hit, error)
	// Stats summarises the store.
	Stats(ctx context.Context) (Stats, error)
	Close() error
}

// OpenOptions configure Open.
type OpenOptions struct {
	// Create makes a missing embedded index (on the first Add); without it
	// opening a location that holds no index fails with ErrNotFound.
	Create bool
	// Vectors is the storage format of a new embedded index: "f32"
	// (default), "f16" or "i8". An existing index keeps its own.
	Vectors string
}

// Opener opens a store at a location URL of a registered scheme.
type Opener func(ctx context.Context, location string, opts OpenOptions) (Store, error)

var backends = struct {
	sync.RWMutex
	m map[string]Opener
}{m: map[string]Opener{}}

// RegisterBackend makes Open handle locations "scheme://…". Back-end
// packages call it from init (import them for effect).
func RegisterBackend(scheme string, open Opener) {
	backends.Lock()
	defer backends.Unlock()
	backends.m[scheme] = open
}

// Open opens the store at location: "scheme://…" for a registered back end
// (e.g. weaviate://localhost:8080/Docs once package index/weaviate is
// imported), anything else is a directory holding an embedded index.
func Open(ctx context.Context, location string, opts OpenOptions) (Store, error) {
	if location == "" {
		return nil, fmt.Errorf("%w: empty index location", ctxsel.ErrInvalidInput)
	}
	if scheme, _, ok := strings.Cut(location, "://"); ok && !strings.ContainsAny(scheme, `/\`) {
		backends.RLock()
		open := backends.m[scheme]
		var known []string
		for k := range backends.m {
			known = append(known, k)
		}
		backends.RUnlock()
		if open == nil {
			slices.Sort(known)
			return nil, fmt.Errorf("%w: index location %q: unknown scheme %q (known: %s; a plain path is an embedded index)",
				ctxsel.ErrInvalidInput, location, scheme, strings.Join(known, ", "))
		}
		return open(ctx, location, opts)
	}
	return OpenDir(location, DirOptions{Create: opts.Create, Vectors: opts.Vectors})
}

// CheckDocuments validates documents before any back end stores them: ids,
// chunk provenance, vectors (count, dimension, finite values), and sentence
// vectors where present (one set per chunk, spans in order inside the
// chunk, one dimension, finite values). It returns the vector dimension
// (0 when there are no vectors).
func CheckDocuments(docs []Document) (dim int, err error) {
	sdim := 0
	seen := make(map[string]bool, len(docs))
	for di, d := range docs {
		if d.ID == "" {
			return 0, invalidf("document %d: empty id", di)
		}
		if !utf8.ValidString(d.ID) {
			return 0, invalidf("document %q: id is not valid UTF-8", d.ID)
		}
		if strings.ContainsRune(d.ID, 0) {
			return 0, invalidf("document %q: id contains NUL", d.ID)
		}
		if seen[d.ID] {
			return 0, invalidf("document %q given twice", d.ID)
		}
		seen[d.ID] = true
		if len(d.Vectors) != len(d.Chunks) {
			return 0, invalidf("document %q: %d vectors for %d chunks", d.ID, len(d.Vectors), len(d.Chunks))
		}
		for i, c := range d.Chunks {
			if c.Doc != d.ID || c.Index != i {
				return 0, invalidf("document %q: chunk %d names document %q index %d", d.ID, i, c.Doc, c.Index)
			}
			if c.Start < 0 || c.End > len(d.Text) || c.Start > c.End || d.Text[c.Start:c.End] != c.Text {
				return 0, invalidf("document %q: chunk %d offsets [%d, %d) do not slice the text to the chunk", d.ID, i, c.Start, c.End)
			}
			if c.Tokens < 0 || c.CharStart < 0 || c.CharEnd < c.CharStart {
				return 0, invalidf("document %q: chunk %d has negative counts", d.ID, i)
			}
			v := d.Vectors[i]
			if len(v) == 0 {
				return 0, invalidf("document %q: chunk %d has an empty vector", d.ID, i)
			}
			if dim == 0 {
				dim = len(v)
			} else if len(v) != dim {
				return 0, invalidf("document %q: chunk %d vector has dimension %d, want %d", d.ID, i, len(v), dim)
			}
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return 0, invalidf("document %q: chunk %d vector has a non-finite component", d.ID, i)
				}
			}
		}
		if d.Sentences == nil {
			continue
		}
		if len(d.Sentences) != len(d.Chunks) {
			return 0, invalidf("document %q: sentence vectors for %d chunks, it has %d", d.ID, len(d.Sentences), len(d.Chunks))
		}
		for i, cs := range d.Sentences {
			if err := checkSentences(cs, len(d.Chunks[i].Text), &sdim); err != nil {
				return 0, invalidf("document %q: chunk %d: %v", d.ID, i, err)
			}
		}
	}
	return dim, nil
}

// checkSentences checks one chunk's sentences against its text's length
// and the dimension of the batch's other sentence vectors (*dim, 0 until
// known).
func checkSentences(cs ChunkSentences, textLen int, dim *int) error {
	if len(cs.Vectors) != len(cs.Spans) {
		return fmt.Errorf("%d sentence vectors for %d sentences", len(cs.Vectors), len(cs.Spans))
	}
	prev := 0
	for k, sp := range cs.Spans {
		if sp[0] < prev || sp[0] > sp[1] || sp[1] > textLen {
			return fmt.Errorf("sentence %d: span %v out of order or outside the chunk", k, sp)
		}
		prev = sp[1]
		v := cs.Vectors[k]
		if len(v) == 0 || *dim != 0 && len(v) != *dim {
			return fmt.Errorf("sentence %d: vector of dimension %d, want %d", k, len(v), *dim)
		}
		*dim = len(v)
		for _, x := range v {
			if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
				return fmt.Errorf("sentence %d: vector has a non-finite component", k)
			}
		}
	}
	return nil
}

// invalidf is ctxsel.Invalidf: invalid input, described in words.
var invalidf = ctxsel.Invalidf

// Normalize returns v scaled to unit length (a zero vector stays zero), in
// a new slice.
func Normalize(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	inv := 1 / math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// sortHits orders hits best first, ties by chunk ID.
func sortHits(h []Hit) {
	slices.SortFunc(h, func(a, b Hit) int {
		if a.Score != b.Score {
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		if c := strings.Compare(a.Doc, b.Doc); c != 0 {
			return c
		}
		return a.Index - b.Index
	})
}

// SortHits orders hits best first, ties broken by document id then chunk
// index: the order every Store returns.
func SortHits(h []Hit) { sortHits(h) }
