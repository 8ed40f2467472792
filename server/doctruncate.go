package server

import (
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel/internal/wire"
	"github.com/ctxsel/ctxsel/token"
)

// The rerank routes truncate each document to max_tokens_per_doc tokens
// (Cohere's field and default, 4096) before ranking it, as Cohere does, so
// a pipeline with one long chunk is ranked rather than refused. The
// response says which documents were cut in meta.warnings (Cohere's ApiMeta
// carries warnings as strings). max_text_bytes bounds a document after the
// cut; before it, only the request body's bound (max_body_bytes) does.

// defaultMaxTokensPerDoc is Cohere's default max_tokens_per_doc.
const defaultMaxTokensPerDoc = 4096

// maxTokenBytes bounds the bytes of one token of the server's encodings
// (cl100k_base and o200k_base: long runs of spaces or of one letter are
// the longest), so a document's first n tokens lie in its first
// n*maxTokenBytes bytes and only those are encoded.
const maxTokenBytes = 128

// tokenCodec is what truncation needs of the server's token counter.
type tokenCodec interface {
	Encode(text string) ([]uint, error)
	Decode(ids []uint) (string, error)
}

var _ tokenCodec = (*token.Tiktoken)(nil)

// truncateTokens returns text's first n tokens, cut on a rune boundary,
// and whether it cut anything. A text of at most n bytes has at most n
// tokens and is never encoded.
func truncateTokens(c token.Counter, text string, n int) (string, bool, error) {
	if len(text) <= n {
		return text, false, nil
	}
	codec, ok := c.(tokenCodec)
	if !ok {
		return "", false, fmt.Errorf("truncating documents: the %s counter cannot encode", c.Encoding())
	}
	head := text
	if limit := n * maxTokenBytes; limit < len(head) {
		head = validPrefix(head[:limit])
	}
	count := func(s string) (int, error) {
		ids, err := codec.Encode(s) // not Count: its cache would keep every prefix
		return len(ids), err
	}
	ids, err := codec.Encode(head)
	if err != nil {
		return "", false, fmt.Errorf("truncating documents: %w", err)
	}
	if len(ids) <= n {
		return head, len(head) < len(text), nil
	}
	// Decoding the first n tokens gives the cut at once where it is exact;
	// it is not for every byte (tiktoken-go drops some control
	// characters), so the cut is checked, and found by bisection when it
	// is wrong.
	if kept, err := codec.Decode(ids[:n]); err == nil && strings.HasPrefix(text, kept) {
		kept = validPrefix(kept)
		if c, err := count(kept); err == nil && c <= n {
			return kept, true, nil
		}
	}
	lo, hi := 0, len(head) // head[:lo] has at most n tokens, head[:hi] more
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		for mid > lo && !utf8.RuneStart(head[mid]) {
			mid--
		}
		if mid == lo {
			mid = lo + (hi-lo)/2
			for mid < hi && !utf8.RuneStart(head[mid]) {
				mid++
			}
			if mid == hi {
				break
			}
		}
		c, err := count(head[:mid])
		if err != nil {
			return "", false, fmt.Errorf("truncating documents: %w", err)
		}
		if c <= n {
			lo = mid
		} else {
			hi = mid
		}
	}
	return head[:lo], true, nil
}

// validPrefix drops a partial rune at the end of s.
func validPrefix(s string) string {
	for i := 0; i < utf8.UTFMax && len(s) > 0; i++ {
		r, size := utf8.DecodeLastRuneInString(s)
		if r != utf8.RuneError || size != 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

// truncateDocs cuts each of texts to maxTokens tokens in place and returns
// the indices it cut; a document still over maxText bytes after the cut is
// refused (413) as any text over max_text_bytes is.
func truncateDocs(c token.Counter, texts []string, maxTokens, maxText int) ([]int, error) {
	var cut []int
	for i, t := range texts {
		kept, did, err := truncateTokens(c, t, maxTokens)
		if err != nil {
			return nil, err
		}
		if len(kept) > maxText {
			return nil, &wire.FieldError{Status: http.StatusRequestEntityTooLarge, Path: wire.Path{Name: "documents", Idx: i},
				Msg: fmt.Sprintf("%d bytes after truncation to %d tokens (max_tokens_per_doc), over the limit of %d (max_text_bytes): send a smaller max_tokens_per_doc", len(kept), maxTokens, maxText)}
		}
		if did {
			texts[i] = kept
			cut = append(cut, i)
		}
	}
	return cut, nil
}

// truncationWarning is meta.warnings' sentence for the documents cut.
func truncationWarning(cut []int, maxTokens int) string {
	const listed = 10
	var b strings.Builder
	fmt.Fprintf(&b, "truncated to max_tokens_per_doc (%d tokens) before ranking: document", maxTokens)
	if len(cut) > 1 {
		b.WriteByte('s')
	}
	for j, i := range cut[:min(len(cut), listed)] {
		if j > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, " %d", i)
	}
	if len(cut) > listed {
		fmt.Fprintf(&b, " and %d more", len(cut)-listed)
	}
	return b.String()
}
