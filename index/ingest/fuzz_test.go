package ingest

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/token"
)

// FuzzParseOffsets: any file content either is refused or gives documents
// whose chunks slice their text exactly, with character offsets counting
// its code points (for .txt and .md the text is the file itself); never a
// panic.
func FuzzParseOffsets(f *testing.F) {
	tk, err := token.New("")
	if err != nil {
		f.Fatal(err)
	}
	c, err := chunk.NewSentences(tk, 12)
	if err != nil {
		f.Fatal(err)
	}
	f.Add("a.txt", []byte("\ufeffOne line.\r\nTwo lines here. Three\rfour.\n\nFive."))
	f.Add("a.md", []byte("# T\r\n\r\nCafé crème. Déjà vu.\r\n"))
	f.Add("a.jsonl", []byte(`{"id":"x","text":"\ufeffA\r\nB. C."}`+"\n"))
	f.Add("a.html", []byte("\ufeff<p>A.\r\nB.</p><p>C.</p>"))
	f.Add("a.html", []byte("<title>T</title><h1>T</h1><h2>A<br>b</h2><p>C.</p><h3> </h3><pre><h4>x</h4></pre>"))
	f.Add("a.txt", []byte("Caf\xe9"))
	f.Fuzz(func(t *testing.T, name string, raw []byte) {
		if !supported(name) || strings.HasSuffix(strings.ToLower(name), ".gz") {
			return
		}
		docs, err := parse(SourceFile{Path: name, ID: name}, raw, Limits{}.resolved())
		if err != nil {
			return
		}
		plain := !strings.HasSuffix(strings.ToLower(name), ".jsonl") && !strings.HasSuffix(strings.ToLower(name), ".html") && !strings.HasSuffix(strings.ToLower(name), ".htm")
		for _, d := range docs {
			if plain && d.Text != string(raw) {
				t.Fatalf("text file's document is not the file")
			}
			chunks, err := chunkText(context.Background(), c, d.ID, d.Text)
			if err != nil {
				if !utf8.ValidString(d.Text) {
					continue
				}
				t.Fatalf("chunk: %v", err)
			}
			for _, ch := range chunks {
				if ch.Start < 0 || ch.End > len(d.Text) || ch.Start > ch.End || d.Text[ch.Start:ch.End] != ch.Text {
					t.Fatalf("chunk %d [%d, %d) does not slice the text", ch.Index, ch.Start, ch.End)
				}
				if ch.CharStart != utf8.RuneCountInString(d.Text[:ch.Start]) || ch.CharEnd != utf8.RuneCountInString(d.Text[:ch.End]) {
					t.Fatalf("chunk %d characters [%d, %d) do not count the text's code points", ch.Index, ch.CharStart, ch.CharEnd)
				}
			}
		}
	})
}
