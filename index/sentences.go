package index

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/internal/atomicfile"
)

// A sentence file (seg-NNNNNN.ctxsnt) holds the sentence vectors of one
// vector segment's rows (chunks), for an index that keeps them
// (Config.SentenceModel): row i of the segment is row i here. Like the
// lexical file it is written and fsynced beside its segment before the
// manifest that names it (with its size and checksum) is published, never
// modified, checked by verify, dropped with its segment by repair, carried
// over by compaction and deleted by garbage collection.
//
// It is laid out to be used where it lies. Opening it maps it and checks
// its header; a query reads only the rows of its passages and checks each
// row's own CRC-32C before use, so a question touches kilobytes of a file
// that may hold gigabytes, and damage is still never served.
//
//	[0, 64)   header: magic "CTXSNT1\n", u32 version 1, u32 format, u32 dim,
//	          u32 rows, u64 sentences, u64 model length, u32 head CRC (of
//	          the header with this field zero, the starts, the row CRCs and
//	          the model), the rest zero
//	starts    (rows+1) × u64: row r's sentences are [starts[r], starts[r+1])
//	row CRCs  rows × u32: CRC-32C of row r's spans, then its vectors, then
//	          (i8) its scales
//	model     the sentence embedder's ModelID
//	spans     sentences × 2 u32: byte offsets [start, end) into the chunk text
//	vectors   sentences × dim unit vectors in the index's format
//	scales    i8 only: sentences × f32
//	last 4    CRC-32C of everything before it
//
// Blocks start at multiples of 8, padding zero; numbers little-endian.
const (
	sntMagic      = "CTXSNT1\n"
	sntVersion    = 1
	sntHeaderSize = 64
	sntSuffix     = ".ctxsnt"
)

// sntName is the sentence file of segment name.
func sntName(seg string) string { return strings.TrimSuffix(seg, segSuffix) + sntSuffix }

// ChunkSentences are one chunk's sentences and their vectors, stored
// beside the chunk's vector when the index keeps sentence vectors
// (Config.SentenceModel): Spans[i] are sentence i's byte offsets into the
// chunk's text, Vectors[i] its vector by the sentence model.
type ChunkSentences struct {
	Spans   [][2]int
	Vectors [][]float32
}

type sntLayout struct {
	format                                  Format
	dim, rows, sents, modelLen              int64
	starts, rowCRCs, model, spans, vec, scl int64
	size                                    int64
}

func (l *sntLayout) layout() {
	l.starts = sntHeaderSize
	l.rowCRCs = l.starts + 8*(l.rows+1)
	l.model = align8(l.rowCRCs + 4*l.rows)
	l.spans = align8(l.model + l.modelLen)
	l.vec = align8(l.spans + 8*l.sents)
	l.scl = align8(l.vec + l.sents*l.dim*int64(l.format.elemSize()))
	end := l.scl
	if l.format == I8 {
		end = align8(l.scl + 4*l.sents)
	}
	l.size = end + 4
}

// sntRow is one row to write: its spans and its vectors, encoded.
type sntRow struct {
	spans [][2]int
	mat   matrix // len(spans) rows
}

// newSntRow encodes a chunk's sentences (vectors normalised) in format f.
func newSntRow(f Format, dim int, cs ChunkSentences) sntRow {
	vecs := make([][]float32, len(cs.Vectors))
	for i, v := range cs.Vectors {
		vecs[i] = Normalize(v)
	}
	return sntRow{spans: cs.Spans, mat: newMatrix(f, dim, vecs)}
}

// rowRange is the sub-matrix of rows [lo, hi) (views, no copy).
func (m matrix) rowRange(lo, hi int) matrix {
	out := matrix{format: m.format, dim: m.dim, n: hi - lo}
	switch m.format {
	case F32:
		out.f32 = m.f32[lo*m.dim : hi*m.dim]
	case F16:
		out.f16 = m.f16[lo*m.dim : hi*m.dim]
	case I8:
		out.i8 = m.i8[lo*m.dim : hi*m.dim]
		out.scale = m.scale[lo:hi]
	}
	return out
}

// encodeSentences lays out a sentence file (checksum trailer included).
func encodeSentences(f Format, dim int, model string, rows []sntRow) ([]byte, error) {
	l := sntLayout{format: f, dim: int64(dim), rows: int64(len(rows)), modelLen: int64(len(model))}
	for _, r := range rows {
		if r.mat.n != len(r.spans) || r.mat.n > 0 && (r.mat.dim != dim || r.mat.format != f) {
			return nil, fmt.Errorf("sentence row: %d spans, %d vectors", len(r.spans), r.mat.n)
		}
		l.sents += int64(len(r.spans))
	}
	l.layout()
	buf := make([]byte, l.size)
	le := binary.LittleEndian
	copy(buf, sntMagic)
	le.PutUint32(buf[8:], sntVersion)
	le.PutUint32(buf[12:], uint32(f))
	le.PutUint32(buf[16:], uint32(dim))
	le.PutUint32(buf[20:], uint32(l.rows))
	le.PutUint64(buf[24:], uint64(l.sents))
	le.PutUint64(buf[32:], uint64(l.modelLen))
	copy(buf[l.model:], model)
	es := int64(f.elemSize())
	s := int64(0)
	for r, row := range rows {
		le.PutUint64(buf[l.starts+8*int64(r):], uint64(s))
		for k, sp := range row.spans {
			if sp[0] < 0 || sp[0] > sp[1] || sp[1] > math.MaxUint32 {
				return nil, fmt.Errorf("sentence row %d: bad span %v", r, sp)
			}
			le.PutUint32(buf[l.spans+8*(s+int64(k)):], uint32(sp[0]))
			le.PutUint32(buf[l.spans+8*(s+int64(k))+4:], uint32(sp[1]))
		}
		putVectors(buf, l.vec+s*l.dim*es, l.scl+4*s, row.mat)
		le.PutUint32(buf[l.rowCRCs+4*int64(r):], l.rowCRC(buf, s, s+int64(len(row.spans))))
		s += int64(len(row.spans))
	}
	le.PutUint64(buf[l.starts+8*l.rows:], uint64(s))
	le.PutUint32(buf[40:], l.headCRC(buf))
	le.PutUint32(buf[len(buf)-4:], crc32.Checksum(buf[:len(buf)-4], castagnoli))
	return buf, nil
}

// rowCRC is the checksum of sentences [lo, hi): spans, vectors, scales.
func (l *sntLayout) rowCRC(data []byte, lo, hi int64) uint32 {
	es := l.dim * int64(l.format.elemSize())
	c := crc32.Update(0, castagnoli, data[l.spans+8*lo:l.spans+8*hi])
	c = crc32.Update(c, castagnoli, data[l.vec+es*lo:l.vec+es*hi])
	if l.format == I8 {
		c = crc32.Update(c, castagnoli, data[l.scl+4*lo:l.scl+4*hi])
	}
	return c
}

// headCRC is the checksum of the header (its CRC field zero), the starts,
// the row CRCs and the model.
func (l *sntLayout) headCRC(data []byte) uint32 {
	var h [sntHeaderSize]byte
	copy(h[:], data[:sntHeaderSize])
	binary.LittleEndian.PutUint32(h[40:], 0)
	c := crc32.Update(0, castagnoli, h[:])
	c = crc32.Update(c, castagnoli, data[l.starts:l.rowCRCs+4*l.rows])
	return crc32.Update(c, castagnoli, data[l.model:l.model+l.modelLen])
}

// parseSntHeader reads and checks a sentence file's header against the
// file size and its segment's row count.
func parseSntHeader(path string, h []byte, size int64, rows int) (sntLayout, error) {
	le := binary.LittleEndian
	var l sntLayout
	if len(h) < sntHeaderSize || string(h[:8]) != sntMagic {
		return l, corruptf(path, "not a ctxsel sentence file (bad magic)")
	}
	if v := le.Uint32(h[8:]); v != sntVersion {
		return l, corruptf(path, "sentence file version %d, this build reads %d", v, sntVersion)
	}
	l.format, l.dim, l.rows = Format(le.Uint32(h[12:])), int64(le.Uint32(h[16:])), int64(le.Uint32(h[20:]))
	l.sents, l.modelLen = int64(le.Uint64(h[24:])), int64(le.Uint64(h[32:]))
	if l.format.elemSize() == 0 || l.dim <= 0 || l.dim > 1<<16 || l.rows != int64(rows) || l.sents < 0 || l.sents > size ||
		l.modelLen < 0 || l.modelLen > 1<<16 || le.Uint32(h[44:]) != 0 || !allZero(h[48:sntHeaderSize]) {
		return l, corruptf(path, "bad header (format %d, dim %d, %d rows for a segment of %d, %d sentences)", l.format, l.dim, l.rows, rows, l.sents)
	}
	l.layout()
	if l.size != size {
		return l, corruptf(path, "header does not fit the file (%d bytes, the header says %d)", size, l.size)
	}
	return l, nil
}

// sntFile is a sentence file held in memory (mapped, or read), its header,
// starts and model checked; rows are checked as they are read.
type sntFile struct {
	path   string
	l      sntLayout
	data   []byte
	model  string
	starts []uint64
	crcs   []uint32
	spans  []uint32
	mat    matrix
}

// viewSentences checks data's header and head CRC against rows and
// returns views of its blocks.
func viewSentences(path string, data []byte, rows int) (*sntFile, error) {
	l, err := parseSntHeader(path, data, int64(len(data)), rows)
	if err != nil {
		return nil, err
	}
	if !littleEndian || uintptr(unsafe.Pointer(unsafe.SliceData(data)))%8 != 0 {
		return nil, fmt.Errorf("sentence file %s: views need a little-endian machine and an aligned buffer", path)
	}
	if got := binary.LittleEndian.Uint32(data[40:]); got != l.headCRC(data) {
		return nil, corruptf(path, "header checksum mismatch: the file is damaged")
	}
	f := &sntFile{path: path, l: l, data: data, model: string(data[l.model : l.model+l.modelLen]),
		starts: viewOf[uint64](data[l.starts:], rows+1), crcs: viewOf[uint32](data[l.rowCRCs:], rows)}
	if l.sents > 0 {
		f.spans = viewOf[uint32](data[l.spans:], 2*int(l.sents))
	}
	f.mat = matrix{format: l.format, dim: int(l.dim), n: int(l.sents)}
	if n := int(l.sents) * int(l.dim); n > 0 {
		switch l.format {
		case F32:
			f.mat.f32 = viewOf[float32](data[l.vec:], n)
		case F16:
			f.mat.f16 = viewOf[uint16](data[l.vec:], n)
		case I8:
			f.mat.i8 = viewOf[int8](data[l.vec:], n)
			f.mat.scale = viewOf[float32](data[l.scl:], int(l.sents))
		}
	}
	if f.starts[0] != 0 || f.starts[rows] != uint64(l.sents) {
		return nil, corruptf(path, "row starts do not cover the sentences")
	}
	for r := range rows {
		if f.starts[r] > f.starts[r+1] {
			return nil, corruptf(path, "row %d: starts out of order", r)
		}
	}
	return f, nil
}

// row returns row r's spans and vectors (views) after checking the row's
// checksum and its spans' order.
func (f *sntFile) row(r int) ([][2]int, matrix, error) {
	lo, hi := int64(f.starts[r]), int64(f.starts[r+1])
	if got := f.l.rowCRC(f.data, lo, hi); got != f.crcs[r] {
		return nil, matrix{}, corruptf(f.path, "row %d: checksum mismatch (stored %08x, computed %08x): the file is damaged", r, f.crcs[r], got)
	}
	spans := make([][2]int, hi-lo)
	prev := uint32(0)
	for i := range spans {
		a, b := f.spans[2*(lo+int64(i))], f.spans[2*(lo+int64(i))+1]
		if a > b || a < prev {
			return nil, matrix{}, corruptf(f.path, "row %d: sentence %d: bad span", r, i)
		}
		spans[i], prev = [2]int{int(a), int(b)}, b
	}
	return spans, f.mat.rowRange(int(lo), int(hi)), nil
}

// checkAll checks every row (the full check, compaction).
func (f *sntFile) checkAll() error {
	for r := range int(f.l.rows) {
		if _, _, err := f.row(r); err != nil {
			return err
		}
	}
	return nil
}

// openSentences maps a sentence file for queries: its size, checksum
// trailer (against the manifest's), header and head checksum are checked
// now, each row's checksum when the row is read.
func openSentences(path string, wantSize int64, wantCRC uint32, rows int) (*sntFile, error) {
	data, release, err := mapFile(path, wantSize)
	if err != nil {
		return nil, err
	}
	if len(data) < 4 || binary.LittleEndian.Uint32(data[len(data)-4:]) != wantCRC {
		release()
		return nil, corruptf(path, "checksum trailer does not match the manifest: the file is damaged")
	}
	f, err := viewSentences(path, data, rows)
	if err != nil {
		release()
		return nil, err
	}
	runtime.AddCleanup(f, func(release func()) { release() }, release)
	return f, nil
}

// readSentences reads a whole sentence file and checks all of it against
// the manifest's size and checksum (the full check, compaction).
func readSentences(path string, wantSize int64, wantCRC uint32, rows int) (*sntFile, error) {
	data, err := readFileSized(path, wantSize)
	if err != nil {
		return nil, err
	}
	if err := checkCRC(path, data, wantCRC); err != nil {
		return nil, err
	}
	f, err := viewSentences(path, data, rows)
	if err != nil {
		return nil, err
	}
	return f, f.checkAll()
}

// writeSentences writes a segment's sentence file and records it in si.
func (d *Dir) writeSentences(si *segInfo, f Format, model string, rows []sntRow) error {
	dim := 0
	for _, r := range rows {
		if r.mat.n > 0 {
			dim = r.mat.dim
			break
		}
	}
	if dim == 0 {
		dim = 1 // no sentence at all: any dimension describes it
	}
	data, err := encodeSentences(f, dim, model, rows)
	if err != nil {
		return fmt.Errorf("index %s: encode sentence vectors: %w", d.path, err)
	}
	if err := atomicfile.WriteNew(filepath.Join(d.path, sntName(si.Name)), data); err != nil {
		return fmt.Errorf("index %s: write sentence vectors: %w", d.path, err)
	}
	si.SntSize, si.SntCRC = int64(len(data)), binary.LittleEndian.Uint32(data[len(data)-4:])
	return nil
}

// readSegmentSentences reads and fully checks segment v's sentence file
// (compaction).
func (d *Dir) readSegmentSentences(v segInfo) (*sntFile, error) {
	path := filepath.Join(d.path, sntName(v.Name))
	if v.SntSize == 0 {
		return nil, corruptf(path, "the index keeps sentence vectors, segment %s has none", v.Name)
	}
	return readSentences(path, v.SntSize, v.SntCRC, v.Chunks)
}

// clone copies m's views into memory of its own.
func (m matrix) clone() matrix {
	m.f32, m.f16, m.i8, m.scale = append([]float32(nil), m.f32...), append([]uint16(nil), m.f16...),
		append([]int8(nil), m.i8...), append([]float32(nil), m.scale...)
	return m
}

// sentences returns segment i's sentence file, opened on first use and
// kept with the segment.
func (s *snapshot) sentences(dir string, i int) (*sntFile, error) {
	seg, si := s.segs[i], s.man.Segments[i]
	seg.sntOnce.Do(func() {
		path := filepath.Join(dir, sntName(si.Name))
		if si.SntSize == 0 {
			seg.sntErr = corruptf(path, "the index keeps sentence vectors, segment %s has none", si.Name)
			return
		}
		seg.snt, seg.sntErr = openSentences(path, si.SntSize, si.SntCRC, si.Chunks)
		if errors.Is(seg.sntErr, fs.ErrNotExist) {
			seg.sntErr = corruptf(path, "missing")
		}
	})
	return seg.snt, seg.sntErr
}

// docRow is where a live document's rows lie in a snapshot.
type docRow struct {
	seg, first, n int
}

// docRows maps each live document to its rows, built on first use.
func (s *snapshot) docRows() map[string]docRow {
	s.rowsOnce.Do(func() {
		s.rowsOf = map[string]docRow{}
		for i, seg := range s.segs {
			live := s.live[i]
			for r := 0; r < len(live); {
				di, first := seg.rowDoc[r], r
				for r < len(live) && seg.rowDoc[r] == di {
					r++
				}
				if live[first] {
					s.rowsOf[strings.Clone(seg.docID(di))] = docRow{seg: i, first: first, n: r - first}
				}
			}
		}
	})
	return s.rowsOf
}

var _ ctxsel.SentenceStore = (*Dir)(nil)

// StoredSentences implements ctxsel.SentenceStore: the stored sentences of
// chunks by their ids ("doc#chunk") and texts, for the index's sentence
// model only, and only where the chunk's stored text is the text given.
// Each row read is checked against its checksum first; damage is an error
// wrapping ErrCorrupt.
func (d *Dir) StoredSentences(ctx context.Context, model string, ids, texts []string) (out []*ctxsel.StoredSentences, err error) {
	if len(ids) != len(texts) {
		return nil, invalidf("%d ids for %d texts", len(ids), len(texts))
	}
	defer d.afterSearch(&err)
	defer catchFault(&err)()
	s, err := d.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	out = make([]*ctxsel.StoredSentences, len(ids))
	if s.man.Config.SentenceModel == "" || model != s.man.Config.SentenceModel {
		return out, nil
	}
	rows := s.docRows()
	for i, id := range ids {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cut := strings.LastIndexByte(id, '#')
		if cut < 0 {
			continue
		}
		loc, ok := rows[id[:cut]]
		ci, cerr := strconv.Atoi(id[cut+1:])
		if !ok || cerr != nil || ci < 0 || ci >= loc.n {
			continue
		}
		r := loc.first + ci
		seg := s.segs[loc.seg]
		_, text, span := seg.chunk(int32(r))
		if text[span[0]:span[1]] != texts[i] {
			continue // not the chunk this index holds now
		}
		f, err := s.sentences(d.path, loc.seg)
		if err != nil {
			return nil, err
		}
		spans, m, err := f.row(r)
		if err != nil {
			return nil, err
		}
		st := &ctxsel.StoredSentences{Spans: spans, Vectors: make([][]float32, len(spans))}
		for k, sp := range spans {
			if sp[1] > len(texts[i]) {
				return nil, corruptf(f.path, "row %d: sentence %d ends past its chunk", r, k)
			}
			st.Vectors[k] = m.row(k)
		}
		out[i] = st
	}
	return out, nil
}

// sentenceDim is the dimension of the first sentence vector in docs (1
// when there is none: an empty set has no dimension to keep).
func sentenceDim(docs []Document) int {
	for _, d := range docs {
		for _, cs := range d.Sentences {
			if len(cs.Vectors) > 0 {
				return len(cs.Vectors[0])
			}
		}
	}
	return 1
}
