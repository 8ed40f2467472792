package chunk_test

import (
	"context"
	"errors"
	"testing"
	"unicode"
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

// FuzzSplitSentences checks the splitter's contract on any string, invalid
// UTF-8 included: spans lie inside the text, in order, never overlap, never
// start or end with white space, and their union holds every non-space
// byte of the text.
func FuzzSplitSentences(f *testing.F) {
	for _, s := range []string{
		"", "One. Two! Three?", "U.S. Army. Dr. Who at 3.14 p.m. Next.", "Title\nBody text. More.\n\n# Head\n1. a\n2. b\n- c",
		"“Quoted.” 'Go!' she said.", "你好。世界！好的", "यह है। हाँ؟ ok።", "\n\n\n", "a\xffb. \xc3", " \t\r\n x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		spans := chunk.SplitSentences(text)
		covered := make([]bool, len(text))
		prev := 0
		for _, s := range spans {
			if s[0] < prev || s[1] <= s[0] || s[1] > len(text) {
				t.Fatalf("span %v after %d in %d bytes: %v", s, prev, len(text), spans)
			}
			if isSpaceByte(text[s[0]]) || isSpaceByte(text[s[1]-1]) {
				t.Fatalf("span %v %q starts or ends with white space", s, text[s[0]:s[1]])
			}
			for i := s[0]; i < s[1]; i++ {
				covered[i] = true
			}
			prev = s[1]
		}
		for i := 0; i < len(text); i++ {
			if !covered[i] && !isSpaceByte(text[i]) && !inSpaceRune(text, i) {
				t.Fatalf("byte %d (%q) of %q is in no span: %v", i, text[i], text, spans)
			}
		}
	})
}

func isSpaceByte(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\v' || b == '\f'
}

// inSpaceRune reports that byte i belongs to a multi-byte white-space rune
// (U+00A0, U+2028, …), which the splitter may also leave out.
func inSpaceRune(text string, i int) bool {
	for j := max(0, i-3); j <= i; j++ {
		r, w := utf8.DecodeRuneInString(text[j:])
		if r != utf8.RuneError && j+w > i && unicode.IsSpace(r) {
			return true
		}
	}
	return false
}
