package chunk_test

import (
	"context"
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/index/indextest"
)

// FuzzChunkers checks, for all three chunkers on any text, that offsets
// always slice the original text back to the chunk text, character offsets
// agree, counts are exact and within the limit, and no non-space character
// is lost. Invalid UTF-8 must be an input error, never a panic.
func FuzzChunkers(f *testing.F) {
	for _, s := range []string{
		"", "One. Two! Three?", "Mr. Smith. e.g. this.\n\nNew para", "😀🎉 日本語の文章です。ẞ𝔘𝔫", " the the the the the the the the the the",
		"a\xffb", "...!!!???", "\n\n\n", "word " + string(rune(0x10FFFF)) + " x.",
	} {
		f.Add(s, uint8(10), uint8(3))
	}
	tk := tok(f)
	f.Fuzz(func(t *testing.T, text string, size, overlap uint8) {
		sz := 8 + int(size)%64
		ov := int(overlap) % sz
		ws, err := chunk.NewTokens(tk, sz, ov)
		if err != nil {
			t.Fatal(err)
		}
		ss, _ := chunk.NewSentences(tk, sz)
		sem, _ := chunk.NewSemantic(tk, indextest.HashEmbedder{}, 0.5, sz)
		for _, c := range []chunk.Chunker{ws, ss, sem} {
			cs, err := c.Chunk(context.Background(), "f", text)
			if !utf8.ValidString(text) {
				if !errors.Is(err, ctxsel.ErrInvalidInput) {
					t.Fatalf("%s: invalid UTF-8 gave %v", c.Spec(), err)
				}
				continue
			}
			if err != nil {
				t.Fatalf("%s: %v", c.Spec(), err)
			}
			checkChunks(t, tk, "f", text, cs, sz)
		}
	})
}
