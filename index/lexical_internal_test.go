package index

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/ctxsel/ctxsel/chunk"
)

func lexDocs() []segDoc {
	text := "Mars has two moons. Phobos and Deimos orbit Mars. The Moon orbits the Earth."
	return []segDoc{{ID: "a", Text: text, Chunks: [][5]int{{0, 19, 0, 19, 5}, {20, 50, 20, 50, 7}, {51, len(text), 51, len(text), 6}}},
		{ID: "b", Text: "moons moons moons", Chunks: [][5]int{{0, 17, 0, 17, 3}}}}
}

// TestLexicalRoundTrip: a lexical file decodes to what was encoded.
func TestLexicalRoundTrip(t *testing.T) {
	lx := buildLexical(lexDocs())
	data := lx.encode()
	crc := binary.LittleEndian.Uint32(data[len(data)-4:])
	got, err := decodeLexical("x", data, crc, 4)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.lens, lx.lens) || !reflect.DeepEqual(got.posts, lx.posts) {
		t.Fatalf("round trip differs:\n%+v\n%+v", got, lx)
	}
	if p := got.posts["moons"]; !reflect.DeepEqual(p.rows, []uint32{0, 3}) || !reflect.DeepEqual(p.tfs, []uint32{1, 3}) {
		t.Fatalf("moons postings %+v", p)
	}
	if _, err := decodeLexical("x", data, crc, 5); err == nil {
		t.Fatal("row count mismatch not caught")
	}
}

// FuzzDecodeLexical: any bytes (with a matching checksum, so the structural
// checks are what is exercised) decode to a consistent index or an error.
func FuzzDecodeLexical(f *testing.F) {
	f.Add(buildLexical(lexDocs()).encode()[:0])
	good := buildLexical(lexDocs()).encode()
	f.Add(good[:len(good)-4])
	f.Add([]byte(lexMagic))
	f.Fuzz(func(t *testing.T, body []byte) {
		data := binary.LittleEndian.AppendUint32(append([]byte{}, body...), crc32.Checksum(body, castagnoli))
		crc := binary.LittleEndian.Uint32(data[len(data)-4:])
		for _, rows := range []int{0, 4} {
			lx, err := decodeLexical("x", data, crc, rows)
			if err != nil {
				continue
			}
			sum := make([]uint64, len(lx.lens))
			for _, p := range lx.posts {
				for i, r := range p.rows {
					sum[r] += uint64(p.tfs[i])
				}
			}
			for r, l := range lx.lens {
				if sum[r] != uint64(l) {
					t.Fatalf("row %d inconsistent", r)
				}
			}
		}
	})
}

// TestLexicalMigration: an index written before lexical files existed
// answers BM25 queries (postings built in memory) and gains its lexical
// files on the next commit.
func TestLexicalMigration(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	d, _ := OpenDir(dir, DirOptions{Create: true})
	cfg := Config{Model: "m", Dim: 2}
	doc := Document{ID: "a", Hash: "h", Text: "Mars has two moons."}
	doc.Chunks = append(doc.Chunks, chunkOf("a", doc.Text))
	doc.Vectors = [][]float32{{1, 0}}
	if err := d.Add(ctx, cfg, []Document{doc}); err != nil {
		t.Fatal(err)
	}
	want, err := d.SearchQuery(ctx, Query{Text: "moons", Limit: 5, Retriever: BM25})
	if err != nil || len(want) != 1 {
		t.Fatalf("%+v %v", want, err)
	}
	// make it an old index
	m, _, _ := readManifest(dir)
	for i := range m.Segments {
		os.Remove(filepath.Join(dir, lexName(m.Segments[i].Name)))
		m.Segments[i].LexSize, m.Segments[i].LexCRC = 0, 0
	}
	if err := writeManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	old, _ := OpenDir(dir, DirOptions{})
	got, err := old.SearchQuery(ctx, Query{Text: "moons", Limit: 5, Retriever: BM25})
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("old index: %+v %v, want %+v", got, err, want)
	}
	if lex, _ := filepath.Glob(filepath.Join(dir, "*"+lexSuffix)); len(lex) != 0 {
		t.Fatal("a reader wrote lexical files")
	}
	doc2 := doc
	doc2.ID = "b"
	doc2.Chunks = []chunk.Chunk{chunkOf("b", doc.Text)}
	if err := old.Add(ctx, cfg, []Document{doc2}); err != nil {
		t.Fatal(err)
	}
	m, _, _ = readManifest(dir)
	for _, s := range m.Segments {
		if s.LexSize == 0 {
			t.Fatalf("segment %s still without lexical file after a commit", s.Name)
		}
	}
	fresh, _ := OpenDir(dir, DirOptions{})
	got, err = fresh.SearchQuery(ctx, Query{Text: "moons", Limit: 5, Retriever: BM25})
	if err != nil || len(got) != 2 {
		t.Fatalf("after migration: %+v %v", got, err)
	}
}

func chunkOf(id, text string) chunk.Chunk {
	return chunk.Chunk{Doc: id, Start: 0, End: len(text), CharEnd: len(text), Tokens: 4, Text: text}
}
