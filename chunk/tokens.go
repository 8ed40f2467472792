package chunk

import (
	"context"
	"fmt"
	"unicode/utf8"
)

// Tokens cuts fixed windows of Size tokens, each starting Size−Overlap tokens
// after the previous one, on the document's own token stream; the last
// window may be shorter. This is the LaRA / LDAR setting (600 tokens, 100
// overlap) and LangChain's TokenTextSplitter.
//
// Window boundaries that would fall inside a multi-byte character (tiktoken
// has byte-level tokens) move outwards to the character's edges, and a
// window whose text re-encodes to more than Size tokens (a boundary inside a
// word can change how its pieces merge) gives up its last tokens, so every
// chunk's exact Tokens is at most Size. Windows of only white space are
// dropped.
type Tokens struct {
	tok           Tokenizer
	size, overlap int
}

// NewTokens returns a token-window chunker. size must be at least 8 and
// overlap in [0, size).
func NewTokens(tok Tokenizer, size, overlap int) (*Tokens, error) {
	if tok == nil {
		return nil, invalidf("token chunker: no tokenizer")
	}
	if size < 8 {
		return nil, invalidf("token chunker: size=%d, want at least 8", size)
	}
	if overlap < 0 || overlap >= size {
		return nil, invalidf("token chunker: overlap=%d, want 0 <= overlap < size=%d", overlap, size)
	}
	return &Tokens{tok: tok, size: size, overlap: overlap}, nil
}

// Spec implements Chunker.
func (t *Tokens) Spec() string { return fmt.Sprintf("tokens:overlap=%d,size=%d", t.overlap, t.size) }

// Chunk implements Chunker.
func (t *Tokens) Chunk(ctx context.Context, doc, text string) ([]Chunk, error) {
	if err := checkText(doc, text); err != nil {
		return nil, err
	}
	if blank(text) {
		return nil, nil
	}
	offs, err := tokenOffsets(t.tok, text)
	if err != nil {
		return nil, fmt.Errorf("document %q: %w", doc, err)
	}
	spans, counts, err := windows(ctx, t.tok, text, offs, 0, len(offs)-1, t.size, t.overlap)
	if err != nil {
		return nil, err
	}
	return finish(doc, text, spans, t.tok, counts), nil
}

// windows cuts the token range [from, to) of text (offs are token
// boundaries) into windows of at most size tokens advancing by size−overlap,
// returning byte spans and their exact token counts.
func windows(ctx context.Context, tok Tokenizer, text string, offs []int, from, to, size, overlap int) ([][2]int, []int, error) {
	// safe(p): token boundary p falls on a character boundary.
	safe := func(p int) bool { o := offs[p]; return o == len(text) || utf8.RuneStart(text[o]) }
	// down and up move a token position to the nearest safe one.
	down := func(p int) int {
		for p > from && !safe(p) {
			p--
		}
		return p
	}
	up := func(p int) int {
		for p < to && !safe(p) {
			p++
		}
		return p
	}
	step := size - overlap
	var spans [][2]int
	var counts []int
	for start := from; start < to; {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		s := down(start)
		e := down(min(start+size, to))
		if e <= s { // a single character spans the window: take it whole
			e = up(s + 1)
		}
		n := tok.Count(text[offs[s]:offs[e]])
		for n > size && e > s+1 {
			ne := down(e - 1)
			if ne <= s {
				break
			}
			e = ne
			n = tok.Count(text[offs[s]:offs[e]])
		}
		spans = append(spans, [2]int{offs[s], offs[e]})
		counts = append(counts, n)
		if e >= to {
			break
		}
		// The next window starts step tokens on, but never after this
		// one's end (a shrunk window must not leave a gap).
		start = max(start+1, min(start+step, e))
	}
	return spans, counts, nil
}
