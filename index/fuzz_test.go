package index

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/token"
)

// FuzzDecodeManifest: any bytes either decode to a consistent manifest or
// give an error; never a panic.
func FuzzDecodeManifest(f *testing.F) {
	good, _ := encodeManifest(&manifest{Version: 1, Vectors: "f32", NextSegment: 2,
		Segments: []segInfo{{Name: "seg-000001.ctxseg", Size: 100, Chunks: 2, Docs: 1}},
		Docs:     []docEntry{{DocInfo: DocInfo{ID: "a", Chunks: 2}, Segment: "seg-000001.ctxseg"}}})
	f.Add(good)
	f.Add([]byte("ctxsel-index 1 crc32c=00000000 bytes=2\n{}"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeManifest("MANIFEST", data)
		if err == nil {
			if err := m.check(); err != nil {
				t.Fatalf("decoded an inconsistent manifest: %v", err)
			}
		}
	})
}

// FuzzReadSegment: a segment file with any content (and a valid checksum,
// so the parser itself is exercised) loads consistently or errors; never a
// panic.
func FuzzReadSegment(f *testing.F) {
	dir := f.TempDir()
	mat := newMatrix(I8, 8, [][]float32{{1, 0, 0, 0, 0, 0, 0, 0}, {0, 1, 0, 0, 0, 0, 0, 0}})
	p := filepath.Join(dir, "seed")
	if _, _, err := writeSegment(p, I8, 8, []segDoc{{ID: "d", Text: "ab", Chunks: [][5]int{{0, 1, 0, 1, 1}, {1, 2, 1, 2, 1}}}}, mat); err != nil {
		f.Fatal(err)
	}
	seed, _ := os.ReadFile(p)
	f.Add(seed[:len(seed)-4])
	f.Add([]byte(segMagic))
	f.Fuzz(func(t *testing.T, body []byte) {
		data := binary.LittleEndian.AppendUint32(append([]byte(nil), body...), crc32.Checksum(body, castagnoli))
		path := filepath.Join(t.TempDir(), "seg")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := readSegment(path, "seg", int64(len(data)), crc32.Checksum(body, castagnoli))
		if err != nil {
			return
		}
		if len(s.rowDoc) != s.mat.n {
			t.Fatalf("%d rows, %d chunk rows", s.mat.n, len(s.rowDoc))
		}
		for r := range s.mat.n {
			d := s.docs[s.rowDoc[r]]
			c := d.Chunks[s.rowIdx[r]]
			_ = d.Text[c[0]:c[1]]
			_ = s.mat.row(r)
		}
	})
}

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
	f.Add("a.txt", []byte("Caf\xe9"))
	f.Fuzz(func(t *testing.T, name string, raw []byte) {
		if !supported(name) || strings.HasSuffix(strings.ToLower(name), ".gz") {
			return
		}
		docs, err := parse(SourceFile{Path: name, ID: name}, raw)
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
