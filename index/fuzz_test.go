package index

import (
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
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
