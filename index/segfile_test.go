package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/ctxsel/ctxsel/chunk"
)

// versionDocs is a small corpus in three documents, with vectors.
func versionDocs() ([]Document, Config) {
	texts := map[string]string{
		"mars":   "Mars has two moons, Phobos and Deimos. Its red colour comes from iron oxide.",
		"venus":  "Venus has no moons. Its thick atmosphere traps heat. Venus is hot.",
		"saturn": "Saturn has many moons; Titan is the largest of them and has lakes.",
	}
	var docs []Document
	for _, id := range []string{"mars", "saturn", "venus"} {
		text := texts[id]
		d := Document{ID: id, Hash: "h-" + id, Source: "/src/" + id, Text: text}
		half := strings.Index(text, ". ") + 1
		for i, sp := range [][2]int{{0, half}, {half + 1, len(text)}} {
			d.Chunks = append(d.Chunks, chunk.Chunk{Doc: id, Index: i, Start: sp[0], End: sp[1], CharStart: sp[0], CharEnd: sp[1],
				Tokens: 5 + i, Text: text[sp[0]:sp[1]]})
			v := make([]float32, 4)
			v[(len(id)+i)%4] = 1
			v[(len(id)+2*i+1)%4] = 0.5
			d.Vectors = append(d.Vectors, v)
		}
		docs = append(docs, d)
	}
	return docs, Config{Model: "m", Dim: 4, Chunker: "c", Encoding: "e"}
}

// queries runs a dense, a bm25 and a hybrid query.
func queries(t *testing.T, d *Dir) [][]Hit {
	t.Helper()
	var out [][]Hit
	for _, q := range []Query{
		{Vector: []float32{1, 0.2, 0, 0.1}, Limit: 10, Retriever: Dense},
		{Text: "moons of Saturn", Limit: 10, Retriever: BM25},
		{Vector: []float32{0, 1, 0.3, 0}, Text: "hot atmosphere moons", Limit: 10, Retriever: Hybrid},
	} {
		hits, err := d.SearchQuery(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, hits)
	}
	return out
}

// TestReadsVersion1Files: an index whose segment and lexical files are
// version 1 (written before version 2) answers exactly as the same index
// in version 2, and its files pass the checks.
func TestReadsVersion1Files(t *testing.T) {
	ctx := context.Background()
	docs, cfg := versionDocs()
	for _, f := range []Format{F32, F16, I8} {
		t.Run(f.String(), func(t *testing.T) {
			dir := t.TempDir()
			d, _ := OpenDir(dir, DirOptions{Create: true, Vectors: f.String()})
			if err := d.Add(ctx, cfg, docs); err != nil {
				t.Fatal(err)
			}
			want := queries(t, d)
			// rewrite every file in version 1, as an older build wrote them
			m, _, err := readManifest(dir)
			if err != nil {
				t.Fatal(err)
			}
			for i := range m.Segments {
				si := &m.Segments[i]
				seg, err := readSegment(filepath.Join(dir, si.Name), si.Name, si.Size, si.CRC)
				if err != nil {
					t.Fatal(err)
				}
				sdocs := seg.allDocs()
				mat := seg.mat
				os.Remove(filepath.Join(dir, si.Name))
				if si.Size, si.CRC, err = writeSegment1(filepath.Join(dir, si.Name), f, cfg.Dim, sdocs, mat); err != nil {
					t.Fatal(err)
				}
				data := buildLexical(sdocs).encode1()
				if err := os.WriteFile(filepath.Join(dir, lexName(si.Name)), data, 0o644); err != nil {
					t.Fatal(err)
				}
				si.LexSize, si.LexCRC = int64(len(data)), binary.LittleEndian.Uint32(data[len(data)-4:])
				if b, _ := os.ReadFile(filepath.Join(dir, si.Name)); string(b[:8]) != segMagic {
					t.Fatal("not rewritten in version 1")
				}
			}
			m.Generation++
			if err := writeManifest(dir, m); err != nil {
				t.Fatal(err)
			}
			old, _ := OpenDir(dir, DirOptions{})
			if got := queries(t, old); !reflect.DeepEqual(got, want) {
				t.Fatalf("version 1 files answer\n%+v\nversion 2\n%+v", got, want)
			}
			for _, full := range []bool{false, true} {
				if rep, err := old.Check(ctx, full); err != nil || !rep.OK() {
					t.Fatalf("check full=%v: %+v %v", full, rep, err)
				}
			}
			// the next commit rewrites them in version 2, answering the same
			extra := Document{ID: "zz", Hash: "h-zz", Text: "Nothing about planets."}
			if err := old.Add(ctx, cfg, []Document{extra}); err != nil {
				t.Fatal(err)
			}
			m, _, _ = readManifest(dir)
			for _, si := range m.Segments {
				if b, _ := os.ReadFile(filepath.Join(dir, si.Name)); string(b[:8]) != segMagic2 {
					t.Fatalf("%s still in version 1 after a commit", si.Name)
				}
			}
			fresh, _ := OpenDir(dir, DirOptions{})
			if got := queries(t, fresh); !reflect.DeepEqual(got, want) {
				t.Fatalf("after the rewrite\n%+v\nwant\n%+v", got, want)
			}
		})
	}
}

// TestMappedFileTruncated: a segment truncated while a reader has it
// mapped makes that reader's next search fail with ErrCorrupt (not crash
// the process), and the one after it maps again and fails its checks.
func TestMappedFileTruncated(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("mapping is checked on Linux")
	}
	ctx := context.Background()
	docs, cfg := versionDocs()
	dir := t.TempDir()
	d, _ := OpenDir(dir, DirOptions{Create: true})
	if err := d.Add(ctx, cfg, docs); err != nil {
		t.Fatal(err)
	}
	queries(t, d) // maps the files
	segs, _ := filepath.Glob(filepath.Join(dir, "seg-*"+segSuffix))
	if len(segs) != 1 {
		t.Fatalf("%d segments", len(segs))
	}
	if err := os.Truncate(segs[0], 0); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		_, err := d.SearchQuery(ctx, Query{Vector: []float32{1, 0, 0, 0}, Text: "moons", Limit: 10})
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), dir) {
			t.Fatalf("search %d after truncation: %v", i, err)
		}
		t.Log(err)
	}
}

// TestSegmentViewsMatchDecoded: a mapped segment and the decoded one agree
// on every row.
func TestSegmentViewsMatchDecoded(t *testing.T) {
	docs, cfg := versionDocs()
	var sdocs []segDoc
	var vecs [][]float32
	for _, d := range docs {
		sd := segDoc{ID: d.ID, Source: d.Source, Text: d.Text}
		for i, c := range d.Chunks {
			sd.Chunks = append(sd.Chunks, [5]int{c.Start, c.End, c.CharStart, c.CharEnd, c.Tokens})
			vecs = append(vecs, Normalize(d.Vectors[i]))
		}
		sdocs = append(sdocs, sd)
	}
	for _, f := range []Format{F32, F16, I8} {
		p := filepath.Join(t.TempDir(), "seg")
		size, crc, err := writeSegment(p, f, cfg.Dim, sdocs, newMatrix(f, cfg.Dim, vecs))
		if err != nil {
			t.Fatal(err)
		}
		dec, err := readSegment(p, "seg", size, crc)
		if err != nil {
			t.Fatal(err)
		}
		mapped, err := openSegment(p, "seg", size, crc)
		if err != nil {
			t.Fatal(err)
		}
		if mapped.docs != nil || mapped.views == nil {
			t.Fatalf("%s: not used in place", f)
		}
		if !reflect.DeepEqual(dec.docs, sdocs) || !reflect.DeepEqual(mapped.allDocs(), sdocs) {
			t.Fatalf("%s: documents differ", f)
		}
		for r := range dec.mat.n {
			id1, text1, span1 := dec.chunk(int32(r))
			id2, text2, span2 := mapped.chunk(int32(r))
			if id1 != id2 || text1 != text2 || span1 != span2 || !reflect.DeepEqual(dec.mat.row(r), mapped.mat.row(r)) {
				t.Fatalf("%s: row %d differs", f, r)
			}
		}
	}
}

// FuzzOpenSegment: a version-2 segment file with any content and a valid
// checksum is refused or opened in place consistently; never a panic.
func FuzzOpenSegment(f *testing.F) {
	docs, cfg := versionDocs()
	var sdocs []segDoc
	var vecs [][]float32
	for _, d := range docs[:2] {
		sd := segDoc{ID: d.ID, Source: d.Source, Text: d.Text}
		for i, c := range d.Chunks {
			sd.Chunks = append(sd.Chunks, [5]int{c.Start, c.End, c.CharStart, c.CharEnd, c.Tokens})
			vecs = append(vecs, d.Vectors[i])
		}
		sdocs = append(sdocs, sd)
	}
	for _, fm := range []Format{F32, I8} {
		data, err := encodeSegment2(fm, cfg.Dim, sdocs, newMatrix(fm, cfg.Dim, vecs))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:len(data)-4])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sum := crc32.Checksum(body, castagnoli)
		// what openSegment does with the file's bytes once mapped
		data := alignedCopy(binary.LittleEndian.AppendUint32(append([]byte(nil), body...), sum))
		if checkCRC("seg", data, sum) != nil {
			t.Fatal("checksum")
		}
		s, err := viewSegment2("seg", "seg", data, sum)
		if err != nil {
			return
		}
		for r := range s.mat.n {
			_, text, sp := s.chunk(int32(r))
			_ = text[sp[0]:sp[1]]
			_ = s.mat.row(r)
			_ = s.rowDocID(int32(r))
		}
		_ = s.allDocs()
	})
}

// FuzzLexicalLookup: a version-2 lexical file with any content and a valid
// checksum is refused, or every lookup returns postings inside the rows or
// ErrCorrupt; never a panic.
func FuzzLexicalLookup(f *testing.F) {
	lx := buildLexical(lexDocs())
	f.Add(lx.encode2()[:len(lx.encode2())-4], "moons")
	f.Fuzz(func(t *testing.T, body []byte, term string) {
		sum := crc32.Checksum(body, castagnoli)
		data := alignedCopy(binary.LittleEndian.AppendUint32(append([]byte(nil), body...), sum))
		if len(data) < 16 {
			return
		}
		rows := int(binary.LittleEndian.Uint32(data[12:]))
		if rows > 1<<16 {
			return
		}
		got, err := viewLexical2("x", data, sum, rows)
		if err != nil {
			return
		}
		for _, q := range []string{term, "moons", "mars", ""} {
			p, err := got.lookup(q)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("lookup %q: %v", q, err)
				}
				continue
			}
			for i, r := range p.rows {
				if int(r) >= rows || p.tfs[i] == 0 {
					t.Fatalf("lookup %q: posting %d = (%d, %d)", q, i, r, p.tfs[i])
				}
			}
		}
		_ = fmt.Sprint(got.total)
	})
}

// TestLexicalViewsMatchDecoded: lookups in a mapped version-2 file give
// the postings of the decoded one, for every term and for absent ones.
func TestLexicalViewsMatchDecoded(t *testing.T) {
	lx := buildLexical(lexDocs())
	data := lx.encode2()
	crc := binary.LittleEndian.Uint32(data[len(data)-4:])
	p := filepath.Join(t.TempDir(), "lex")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	mapped, err := openLexical(p, int64(len(data)), crc, len(lx.lens))
	if err != nil {
		t.Fatal(err)
	}
	if mapped.dict == nil || mapped.total != lx.total || !reflect.DeepEqual(mapped.lens, lx.lens) {
		t.Fatalf("mapped: dict %v, total %d want %d", mapped.dict != nil, mapped.total, lx.total)
	}
	for term, want := range lx.posts {
		got, err := mapped.lookup(term)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %+v %v, want %+v", term, got, err, want)
		}
	}
	for _, absent := range []string{"", "zzzz", "a", "moon"} {
		if _, ok := lx.posts[absent]; ok {
			continue
		}
		if got, err := mapped.lookup(absent); err != nil || len(got.rows) != 0 {
			t.Fatalf("absent %q: %+v %v", absent, got, err)
		}
	}
}

// TestSegmentRowsPastDocuments: rows that name more documents than the
// file holds are refused, not followed (a crafted file with a valid
// checksum).
func TestSegmentRowsPastDocuments(t *testing.T) {
	docs, cfg := versionDocs()
	var sdocs []segDoc
	var vecs [][]float32
	for _, d := range docs {
		sd := segDoc{ID: d.ID, Source: d.Source, Text: d.Text}
		for i, c := range d.Chunks {
			sd.Chunks = append(sd.Chunks, [5]int{c.Start, c.End, c.CharStart, c.CharEnd, c.Tokens})
			vecs = append(vecs, d.Vectors[i])
		}
		sdocs = append(sdocs, sd)
	}
	data, err := encodeSegment2(F32, cfg.Dim, sdocs, newMatrix(F32, cfg.Dim, vecs))
	if err != nil {
		t.Fatal(err)
	}
	l, err := parseHeader2("x", data, int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	// every row its own document (6 rows, 3 documents): consecutive, but past the table
	for r := range l.rows {
		binary.LittleEndian.PutUint32(data[l.rowsOff+4*r:], uint32(r))
		binary.LittleEndian.PutUint32(data[l.rowsOff+4*l.rows+4*r:], 0)
	}
	binary.LittleEndian.PutUint32(data[len(data)-4:], crc32.Checksum(data[:len(data)-4], castagnoli))
	p := filepath.Join(t.TempDir(), "seg")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := binary.LittleEndian.Uint32(data[len(data)-4:])
	if _, err := openSegment(p, "seg", int64(len(data)), sum); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("open: %v, want ErrCorrupt", err)
	}
}
