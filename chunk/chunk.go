// Package chunk splits documents into passages ("chunks") for retrieval, with
// exact token counts and the provenance an answer needs to cite them: the
// document id, the chunk's position in the document and its byte and
// character offsets, so that text[c.Start:c.End] == c.Text always holds.
//
// Three chunkers are provided, all behind the Chunker interface and all
// nameable by a spec string, the same syntax as strategy specs:
//
//	tokens:size=600,overlap=100           fixed token windows (the LaRA / LDAR setting)
//	sentences:max_tokens=600              whole sentences packed up to a token limit
//	semantic:threshold=0.75,max_tokens=600  split where adjacent sentences stop being similar (Context-Picker)
//
// Beside them, what a chunk needs from its document to be read: Above (the
// heading path and a cut table's header over a chunk's start), and the
// readers of the text it is cut from that Above and package evidence share:
// SplitSentences, IsTableRule and TableReader (the space-aligned tables and
// statements of PDF and filing exports).
//
// Token counts use a Tokenizer, normally token.New("") (tiktoken cl100k_base).
// Input must be valid UTF-8; anything else is rejected with an error wrapping
// ctxsel.ErrInvalidInput (callers that read files should clean text first,
// e.g. strings.ToValidUTF8).
package chunk

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/embed"
	"github.com/ctxsel/ctxsel/token"
)

// Chunk is one passage of a document.
type Chunk struct {
	// Doc is the id of the document the chunk comes from.
	Doc string `json:"doc"`
	// Index is the chunk's position among its document's chunks (0, 1, …).
	Index int `json:"index"`
	// Start and End are byte offsets into the document text: Text is
	// text[Start:End].
	Start int `json:"start"`
	End   int `json:"end"`
	// CharStart and CharEnd are the same offsets counted in Unicode code
	// points, for callers whose strings are not byte-indexed.
	CharStart int `json:"char_start"`
	CharEnd   int `json:"char_end"`
	// Tokens is the exact token count of Text under the chunker's encoding.
	Tokens int    `json:"tokens"`
	Text   string `json:"text"`
}

// ID is the chunk's identifier, unique within an index: "doc#index".
func (c Chunk) ID() string { return ChunkID(c.Doc, c.Index) }

// ChunkID builds the identifier of chunk index of document doc.
func ChunkID(doc string, index int) string { return doc + "#" + strconv.Itoa(index) }

// Chunker splits one document into chunks. Implementations are safe for
// concurrent use.
type Chunker interface {
	// Chunk splits text, the full text of document doc. An empty or
	// all-whitespace text gives no chunks and no error.
	Chunk(ctx context.Context, doc, text string) ([]Chunk, error)
	// Spec names the chunker and all its settings, e.g.
	// "tokens:overlap=100,size=600"; Parse(Spec()) rebuilds it.
	Spec() string
}

// Tokenizer is what chunkers need from a token encoding. *token.Tiktoken
// implements it.
type Tokenizer interface {
	Count(text string) int
	Encode(text string) ([]uint, error)
	Decode(ids []uint) (string, error)
	Encoding() string
}

var _ Tokenizer = (*token.Tiktoken)(nil)

// Defaults of the chunkers.
const (
	DefaultSize      = 600
	DefaultOverlap   = 100
	DefaultThreshold = 0.75
	// DefaultSpec is the chunker an index uses unless told otherwise.
	DefaultSpec = "tokens:overlap=100,size=600"
)

// invalidf is ctxsel.Invalidf: invalid input, described in words.
var invalidf = ctxsel.Invalidf

// maxSize bounds every chunker's token counts.
const maxSize = 1 << 30

// Names are the chunkers, each under its main name (Chunkers also holds
// their aliases: token, window, windows, sentence).
func Names() []string { return []string{"tokens", "sentences", "semantic"} }

// Chunkers are the chunker names a spec may use, each with its
// parameters; aliases have their chunker's. Each call returns a new map.
func Chunkers() map[string][]ctxsel.ParamDef {
	m := map[string][]ctxsel.ParamDef{}
	for _, name := range []string{"tokens", "token", "window", "windows", "sentences", "sentence", "semantic"} {
		m[name], _ = chunkerParams(name)
	}
	return m
}

// chunkerParams are the parameters of the chunker name (or alias), new
// on every call.
func chunkerParams(name string) ([]ctxsel.ParamDef, bool) {
	switch name {
	case "tokens", "token", "window", "windows":
		return []ctxsel.ParamDef{
			{Name: "size", Kind: ctxsel.IntegerParam, Default: DefaultSize, Max: maxSize, Doc: "tokens per chunk"},
			{Name: "overlap", Kind: ctxsel.IntegerParam, Default: DefaultOverlap, Max: maxSize, Doc: "tokens each chunk shares with the one before (less than size)"},
		}, true
	case "sentences", "sentence":
		return []ctxsel.ParamDef{
			{Name: "max_tokens", Kind: ctxsel.IntegerParam, Default: DefaultSize, Max: maxSize, Doc: "whole sentences are packed into chunks of at most this many tokens"},
		}, true
	case "semantic":
		return []ctxsel.ParamDef{
			{Name: "threshold", Default: DefaultThreshold, Min: -1, Max: 1, Doc: "a new chunk starts where the cosine similarity of neighbouring sentences falls below this"},
			{Name: "max_tokens", Kind: ctxsel.IntegerParam, Default: DefaultSize, Max: maxSize, Doc: "tokens per chunk at most (0: no limit, else at least 8)"},
		}, true
	}
	return nil, false
}

// Parse builds the chunker a spec names. tok counts tokens (nil means
// token.New("")); e embeds sentences and is needed only by "semantic". A
// bad parameter is a *ctxsel.ParamError.
func Parse(spec string, tok Tokenizer, e embed.Embedder) (Chunker, error) {
	if strings.TrimSpace(spec) == "" {
		spec = DefaultSpec
	}
	name, _, err := ctxsel.ParsePart(spec)
	if err != nil {
		return nil, fmt.Errorf("chunker spec: %w", err)
	}
	defs, ok := chunkerParams(name)
	if !ok {
		return nil, invalidf("unknown chunker %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	sp, err := ctxsel.ParseParams(spec, "chunker", defs)
	if err != nil {
		return nil, err
	}
	sp = ctxsel.WithDefaults(sp, defs)
	if tok == nil {
		t, err := token.New("")
		if err != nil {
			return nil, fmt.Errorf("chunker: %w", err)
		}
		tok = t
	}
	switch name {
	case "tokens", "token", "window", "windows":
		return NewTokens(tok, int(sp.Params["size"]), int(sp.Params["overlap"]))
	case "sentences", "sentence":
		return NewSentences(tok, int(sp.Params["max_tokens"]))
	}
	return NewSemantic(tok, e, sp.Params["threshold"], int(sp.Params["max_tokens"]))
}

// checkText validates the input every chunker accepts.
func checkText(doc, text string) error {
	if !utf8.ValidString(text) {
		return invalidf("document %q: text is not valid UTF-8", doc)
	}
	return nil
}

// blank reports whether s holds only white space.
func blank(s string) bool {
	return strings.TrimFunc(s, unicode.IsSpace) == ""
}

// offsets turns byte offsets into character offsets incrementally: chunks
// come in increasing order of Start, so one forward scan serves them all
// (with a restart when a start goes backwards, as overlapping windows do).
type runeCounter struct {
	text      string
	byteAt    int
	charAt    int
	lastStart int
}

func (r *runeCounter) at(b int) int {
	if b < r.byteAt {
		r.byteAt, r.charAt = 0, 0
	}
	r.charAt += utf8.RuneCountInString(r.text[r.byteAt:b])
	r.byteAt = b
	return r.charAt
}

// finish fills in ids, indices, character offsets and texts of spans
// [start, end) of text, dropping all-blank ones.
func finish(doc, text string, spans [][2]int, tok Tokenizer, counts []int) []Chunk {
	rc := &runeCounter{text: text}
	out := make([]Chunk, 0, len(spans))
	for i, sp := range spans {
		t := text[sp[0]:sp[1]]
		if blank(t) {
			continue
		}
		c := Chunk{Doc: doc, Index: len(out), Start: sp[0], End: sp[1], Text: t}
		c.CharStart = rc.at(sp[0])
		c.CharEnd = rc.at(sp[1])
		if counts != nil {
			c.Tokens = counts[i]
		} else {
			c.Tokens = tok.Count(t)
		}
		out = append(out, c)
	}
	return out
}

// tokenOffsets returns the byte offset of every token boundary of text: the
// first 0 and the last len(text). Characters the tokenizer drops (the
// tiktoken-go port drops U+007F) are attached to the token after them, or to
// the last token at the end of the text.
func tokenOffsets(tok Tokenizer, text string) ([]int, error) {
	ids, err := tok.Encode(text)
	if err != nil {
		return nil, fmt.Errorf("chunk: %w", err)
	}
	lens := lengthCache(tok)
	offs := make([]int, 1, len(ids)+1)
	pos := 0
	for _, id := range ids {
		piece, ok := lens.get(id)
		if !ok {
			s, err := tok.Decode([]uint{id})
			if err != nil {
				return nil, fmt.Errorf("chunk: %w", err)
			}
			piece = s
			lens.put(id, piece)
		}
		j := strings.Index(text[pos:], piece)
		if j < 0 {
			return nil, fmt.Errorf("chunk: %s token %d (%q) not found at byte %d", tok.Encoding(), id, piece, pos)
		}
		pos += j + len(piece)
		offs = append(offs, pos)
	}
	if pos < len(text) {
		if len(offs) == 1 {
			offs = append(offs, len(text))
		}
		offs[len(offs)-1] = len(text)
	}
	return offs, nil
}

// tokenLens caches the text of each token id, per encoding.
type tokenLens struct {
	mu sync.RWMutex
	m  map[uint]string
}

func (l *tokenLens) get(id uint) (string, bool) {
	l.mu.RLock()
	n, ok := l.m[id]
	l.mu.RUnlock()
	return n, ok
}

func (l *tokenLens) put(id uint, n string) {
	l.mu.Lock()
	l.m[id] = n
	l.mu.Unlock()
}

var lensByEncoding sync.Map // encoding name → *tokenLens

func lengthCache(tok Tokenizer) *tokenLens {
	v, _ := lensByEncoding.LoadOrStore(tok.Encoding(), &tokenLens{m: map[uint]string{}})
	return v.(*tokenLens)
}
