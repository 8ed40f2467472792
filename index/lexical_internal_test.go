package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/chunk"
	"github.com/ctxsel/ctxsel/internal/lexref"
	"github.com/ctxsel/ctxsel/lexical"
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

// TestBM25Workers: splitting the rows across goroutines changes nothing,
// bit for bit, and still equals lexical.Default.Score over the live rows
// (some rows dead, several segments).
func TestBM25Workers(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(8, 9))
	z := rand.NewZipf(r, 1.1, 1, 500)
	s := &snapshot{man: &manifest{}}
	var texts []string // live rows' texts
	for si := range 3 {
		seg := &segment{name: fmt.Sprintf("s%d", si), mat: matrix{format: F32, dim: 1}}
		for d := range 900 {
			var sb strings.Builder
			var spans [][5]int
			for range 10 {
				lo := sb.Len()
				for range 5 + r.IntN(20) {
					fmt.Fprintf(&sb, "w%d ", z.Uint64())
				}
				spans = append(spans, [5]int{lo, sb.Len(), 0, 0, 0})
			}
			seg.docs = append(seg.docs, segDoc{ID: fmt.Sprintf("d%d-%d", si, d), Text: sb.String(), Chunks: spans})
			for k := range spans {
				seg.rowDoc = append(seg.rowDoc, int32(d))
				seg.rowIdx = append(seg.rowIdx, int32(k))
			}
		}
		seg.mat.n = len(seg.rowDoc)
		seg.mat.f32 = make([]float32, seg.mat.n)
		live := make([]bool, seg.mat.n)
		for row := range live {
			live[row] = seg.rowDoc[row]%7 != 3
			if live[row] {
				d := seg.docs[seg.rowDoc[row]]
				c := d.Chunks[seg.rowIdx[row]]
				texts = append(texts, d.Text[c[0]:c[1]])
			}
		}
		s.segs, s.live, s.rows = append(s.segs, seg), append(s.live, live), s.rows+seg.mat.n
		s.man.Segments = append(s.man.Segments, segInfo{Name: seg.name})
	}
	d := &Dir{}
	if err := d.loadLexical(s); err != nil {
		t.Fatal(err)
	}
	if s.rows < 3*minRowsPerWorker {
		t.Fatalf("%d rows: too few to split", s.rows)
	}
	docs := make([][]string, len(texts))
	for i, x := range texts {
		docs[i] = lexical.Terms(x)
	}
	for _, q := range []string{"w1 w2 w3", "w7 w400 w1", "w499"} {
		terms := lexical.QueryTerms(q)
		one, h1, err := s.bm25(ctx, terms, 1)
		if err != nil {
			t.Fatal(err)
		}
		four, h4, _ := s.bm25(ctx, terms, 4)
		if !reflect.DeepEqual(one, four) || len(h1) != len(h4) {
			t.Fatalf("%q: 4 workers differ from 1", q)
		}
		want := lexical.Default.Score(terms, docs)
		var got []float64
		for si, live := range s.live {
			base := s.bases()[si]
			for row, ok := range live {
				if ok {
					got = append(got, four[base+row])
				}
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: scores differ from lexical.Default.Score", q)
		}
	}
}

// refBuildLexical is buildLexical as it was before lexical.Vocab (commit
// be60b0e), with the tokenizer of then (lexref.Terms): the reference the
// lexical files must stay byte-identical to, and the baseline
// BenchmarkLexicalIndex times the builder against.
func refBuildLexical(docs []segDoc) *lexSeg {
	rows := 0
	for _, d := range docs {
		rows += len(d.Chunks)
	}
	lx := &lexSeg{lens: make([]uint32, 0, rows)}
	ids := map[string]int32{}
	var names []string
	var lists []postings
	for _, d := range docs {
		for _, c := range d.Chunks {
			row := uint32(len(lx.lens))
			terms := lexref.Terms(d.Text[c[0]:c[1]])
			lx.lens = append(lx.lens, uint32(len(terms)))
			for _, t := range terms {
				id, ok := ids[t]
				if !ok {
					id = int32(len(lists))
					ids[t] = id
					names = append(names, t)
					lists = append(lists, postings{})
				}
				p := &lists[id]
				if k := len(p.rows) - 1; k >= 0 && p.rows[k] == row {
					p.tfs[k]++
					continue
				}
				p.rows = append(p.rows, row)
				p.tfs = append(p.tfs, 1)
			}
		}
	}
	lx.posts = make(map[string]postings, len(lists))
	for i, t := range names {
		lx.posts[t] = lists[i]
	}
	return lx
}

// TestBuildLexicalReference: the postings and the file bytes equal the
// reference builder's, on random documents mixing cases, stop words,
// non-ASCII chunks, empty chunks and chunks of stop words only.
func TestBuildLexicalReference(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	words := strings.Fields("the The THE of Mars mars MARS moon Moon Phobos deimos orbit orbits Earth earth İstanbul istanbul straße STRASSE Ⅻ café CAFÉ naïve extraordinarily EXTRAORDINARILY a 1889 x7 Kelvin \u212aelvin which")
	seps := []string{" ", ", ", ". ", "-", "\n", "  "}
	for round := range 20 {
		var docs []segDoc
		for d := range 1 + r.IntN(30) {
			var sb strings.Builder
			doc := segDoc{ID: fmt.Sprint(d)}
			for range 1 + r.IntN(6) {
				lo := sb.Len()
				for range r.IntN(40) {
					w := words[r.IntN(len(words))]
					if round%2 == 0 && w[0] >= 0x80 { // half the rounds all ASCII
						w = "ascii"
					}
					sb.WriteString(w)
					sb.WriteString(seps[r.IntN(len(seps))])
				}
				doc.Chunks = append(doc.Chunks, [5]int{lo, sb.Len(), 0, 0, 0})
			}
			doc.Text = sb.String()
			docs = append(docs, doc)
		}
		got, want := buildLexical(docs), refBuildLexical(docs)
		if !reflect.DeepEqual(got.lens, want.lens) || !reflect.DeepEqual(got.posts, want.posts) {
			t.Fatalf("round %d: postings differ:\n%+v\n%+v", round, got, want)
		}
		if !bytes.Equal(got.encode(), want.encode()) {
			t.Fatalf("round %d: lexical file bytes differ", round)
		}
	}
	if !bytes.Equal(buildLexical(nil).encode(), refBuildLexical(nil).encode()) {
		t.Fatal("empty segment differs")
	}
}

// FuzzBuildLexical: for any two texts cut into chunks at any places, the
// lexical file is byte-identical to the reference builder's.
func FuzzBuildLexical(f *testing.F) {
	f.Add("Mars has two moons. Phobos and Deimos", "The Moon İS Earth's; Straße STRASSE", []byte{5, 17})
	f.Add("", "x", []byte{})
	f.Fuzz(func(t *testing.T, a, b string, cuts []byte) {
		var docs []segDoc
		for k, text := range []string{a, b} {
			d := segDoc{ID: fmt.Sprint(k), Text: text}
			lo := 0
			for _, c := range cuts {
				hi := min(len(text), lo+int(c))
				d.Chunks = append(d.Chunks, [5]int{lo, hi, 0, 0, 0})
				lo = hi
			}
			d.Chunks = append(d.Chunks, [5]int{lo, len(text), 0, 0, 0})
			docs = append(docs, d)
		}
		if got, want := buildLexical(docs).encode(), refBuildLexical(docs).encode(); !bytes.Equal(got, want) {
			t.Fatalf("lexical file differs from the reference's:\n%q\n%q", got, want)
		}
	})
}
