package index

import (
	"slices"
	"testing"
)

func sntRows(f Format) []sntRow {
	vec := func(a, b float32) []float32 { return []float32{a, b, 0.5, -0.25} }
	return []sntRow{
		newSntRow(f, 4, ChunkSentences{Spans: [][2]int{{0, 5}, {6, 12}}, Vectors: [][]float32{vec(1, 0), vec(0, 1)}}),
		newSntRow(f, 4, ChunkSentences{}),
		newSntRow(f, 4, ChunkSentences{Spans: [][2]int{{2, 3}}, Vectors: [][]float32{vec(-1, 2)}}),
	}
}

func TestSentenceFileRoundTrip(t *testing.T) {
	for _, f := range []Format{F32, F16, I8} {
		rows := sntRows(f)
		data, err := encodeSentences(f, 4, "model-x", rows)
		if err != nil {
			t.Fatal(err)
		}
		sf, err := viewSentences("mem", alignedCopy(data), len(rows))
		if err != nil || sf.model != "model-x" {
			t.Fatalf("%s: %v, model %q", f, err, sf.model)
		}
		if err := sf.checkAll(); err != nil {
			t.Fatal(err)
		}
		for r, want := range rows {
			spans, m, err := sf.row(r)
			if err != nil || !slices.Equal(spans, want.spans) || m.n != want.mat.n {
				t.Fatalf("%s row %d: %v %v %v", f, r, spans, m.n, err)
			}
			for k := range m.n {
				if !slices.Equal(m.row(k), want.mat.row(k)) {
					t.Fatalf("%s row %d vector %d: %v, want %v", f, r, k, m.row(k), want.mat.row(k))
				}
			}
		}
		// every byte is covered: a flip anywhere is found by the head
		// checksum, a row's, or the trailer
		for i := range data {
			b := slices.Clone(data)
			b[i] ^= 0x20
			sf, err := viewSentences("mem", alignedCopy(b), len(rows))
			if err == nil {
				err = sf.checkAll()
			}
			if err == nil && i < len(b)-4 && !padding(f, rows, i) {
				t.Fatalf("%s: flip at %d of %d not detected", f, i, len(b))
			}
		}
	}
}

// padding reports whether byte i of the encoded file is alignment padding
// (covered by the trailer only).
func padding(f Format, rows []sntRow, i int) bool {
	l := sntLayout{format: f, dim: 4, rows: int64(len(rows)), modelLen: int64(len("model-x"))}
	for _, r := range rows {
		l.sents += int64(len(r.spans))
	}
	l.layout()
	es := int64(f.elemSize())
	in := func(lo, hi int64) bool { return int64(i) >= lo && int64(i) < hi }
	return !(in(0, sntHeaderSize) || in(l.starts, l.rowCRCs+4*l.rows) || in(l.model, l.model+l.modelLen) ||
		in(l.spans, l.spans+8*l.sents) || in(l.vec, l.vec+es*l.dim*l.sents) || f == I8 && in(l.scl, l.scl+4*l.sents))
}

// FuzzSentenceFile: any bytes are refused or give rows that are checked;
// never a panic.
func FuzzSentenceFile(f *testing.F) {
	for _, fm := range []Format{F32, I8} {
		data, _ := encodeSentences(fm, 4, "m", sntRows(fm))
		f.Add(data, 3)
	}
	f.Add([]byte(sntMagic), 0)
	f.Fuzz(func(t *testing.T, data []byte, rows int) {
		if rows < 0 || rows > 1<<10 {
			return
		}
		sf, err := viewSentences("fuzz", alignedCopy(data), rows)
		if err != nil {
			return
		}
		for r := range rows {
			spans, m, err := sf.row(r)
			if err != nil {
				continue
			}
			if m.n != len(spans) {
				t.Fatalf("row %d: %d vectors for %d spans", r, m.n, len(spans))
			}
			for k := range m.n {
				_ = m.row(k)
			}
		}
	})
}
