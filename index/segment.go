package index

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/ctxsel/ctxsel/internal/atomicfile"
)

// A segment file holds a batch of documents: their texts, chunk spans and
// vectors. Segments are written once, fsynced, and never modified; the
// manifest says which exist and which of their documents are live.
//
// New segments are written in version 2 (segfile.go), laid out to be
// searched where they lie. Version 1, below, is still read (decoded into
// memory): indexes written before version 2 keep working.
//
//	[0, 64)        header: magic "CTXSEG1\n", version, format, dim, n (rows),
//	               offsets of the vector, scale and metadata blocks, metadata length
//	[64, …)        n×dim components (little-endian f32, f16 or i8)
//	…              i8 only: n float32 scales
//	…              metadata: JSON {"docs":[{"id","source","text","chunks":[[start,end,char_start,char_end,tokens],…]}]}
//	last 4 bytes   CRC-32C (Castagnoli) of everything before it
const (
	segMagic      = "CTXSEG1\n"
	segVersion    = 1
	segHeaderSize = 64
	segSuffix     = ".ctxseg"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type segDoc struct {
	ID     string   `json:"id"`
	Source string   `json:"source,omitempty"`
	Text   string   `json:"text"`
	Chunks [][5]int `json:"chunks"` // start, end, char_start, char_end, tokens
}

type segMeta struct {
	Docs []segDoc `json:"docs"`
}

// segment is a loaded segment file: decoded (docs set) or, for version 2,
// views of the file's blocks (views set; readSegment sets both).
type segment struct {
	name   string
	size   int64
	crc    uint32
	mat    matrix
	docs   []segDoc
	views  *segViews
	rowDoc []int32 // document (index into docs) of each row
	rowIdx []int32 // chunk index within its document of each row

	// the segment's sentence file, opened on first use (snapshot.sentences)
	sntOnce sync.Once
	snt     *sntFile
	sntErr  error
}

// docID is document di's id. With views it points into the segment's
// memory: use it while the segment is in use, clone it to keep it.
func (s *segment) docID(di int32) string {
	if s.views != nil {
		return s.views.docID(di)
	}
	return s.docs[di].ID
}

// rowDocID is the id of row r's document (see docID).
func (s *segment) rowDocID(r int32) string { return s.docID(s.rowDoc[r]) }

// chunk returns row r's document id, that document's text and the row's
// span (start, end, char_start, char_end, tokens); the strings as docID.
func (s *segment) chunk(r int32) (id, text string, span [5]int) {
	di := s.rowDoc[r]
	if v := s.views; v != nil {
		for k, x := range v.spans[5*r : 5*r+5] {
			span[k] = int(x)
		}
		return v.docID(di), v.docText(di), span
	}
	d := &s.docs[di]
	return d.ID, d.Text, d.Chunks[s.rowIdx[r]]
}

// allDocs returns the segment's documents, decoded (strings copied out of
// a mapped segment, so they may outlive it).
func (s *segment) allDocs() []segDoc {
	if s.docs != nil || s.views == nil {
		return s.docs
	}
	v := s.views
	docs := make([]segDoc, 0, len(v.docTab)/6)
	for r := range s.mat.n {
		di := s.rowDoc[r]
		if int(di) == len(docs) {
			docs = append(docs, segDoc{ID: strings.Clone(v.docID(di)), Source: strings.Clone(v.docSource(di)), Text: strings.Clone(v.docText(di))})
		}
		_, _, span := s.chunk(int32(r))
		docs[di].Chunks = append(docs[di].Chunks, span)
	}
	return docs
}

// crcWriter counts and checksums what passes through it.
type crcWriter struct {
	w   io.Writer
	crc uint32
	n   int64
}

func (c *crcWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.crc = crc32.Update(c.crc, castagnoli, p[:n])
	c.n += int64(n)
	return n, err
}

// writeSegment writes docs and their unit vectors (row-major, in document
// and chunk order) to path as a version-2 segment, fsyncs it, and returns
// its size and checksum. The file must not exist.
func writeSegment(path string, f Format, dim int, docs []segDoc, mat matrix) (size int64, crc uint32, err error) {
	if !littleEndian {
		return writeSegment1(path, f, dim, docs, mat) // version 2 is used in place: little-endian only
	}
	data, err := encodeSegment2(f, dim, docs, mat)
	if err != nil {
		return 0, 0, fmt.Errorf("encode segment: %w", err)
	}
	if err := atomicfile.WriteNew(path, data); err != nil {
		return 0, 0, err
	}
	return int64(len(data)), binary.LittleEndian.Uint32(data[len(data)-4:]), nil
}

// writeSegment1 writes a version-1 segment (big-endian machines; tests of
// old indexes).
func writeSegment1(path string, f Format, dim int, docs []segDoc, mat matrix) (size int64, crc uint32, err error) {
	meta, err := json.Marshal(segMeta{Docs: docs})
	if err != nil {
		return 0, 0, fmt.Errorf("encode segment metadata: %w", err)
	}
	n := mat.n
	vecLen := int64(n) * int64(dim) * int64(f.elemSize())
	scaleOff := int64(segHeaderSize) + vecLen
	scaleLen := int64(0)
	if f == I8 {
		scaleLen = int64(n) * 4
	}
	metaOff := scaleOff + scaleLen

	var out bytes.Buffer
	cw := &crcWriter{w: &out}

	var h [segHeaderSize]byte
	copy(h[:8], segMagic)
	le := binary.LittleEndian
	le.PutUint32(h[8:], segVersion)
	le.PutUint32(h[12:], uint32(f))
	le.PutUint32(h[16:], uint32(dim))
	le.PutUint64(h[24:], uint64(n))
	le.PutUint64(h[32:], segHeaderSize)
	le.PutUint64(h[40:], uint64(scaleOff))
	le.PutUint64(h[48:], uint64(metaOff))
	le.PutUint64(h[56:], uint64(len(meta)))
	if _, err := cw.Write(h[:]); err != nil {
		return 0, 0, err
	}
	buf := make([]byte, 0, 1<<16)
	switch f {
	case F32:
		for _, x := range mat.f32 {
			buf = le.AppendUint32(buf, math.Float32bits(x))
		}
	case F16:
		for _, x := range mat.f16 {
			buf = le.AppendUint16(buf, x)
		}
	case I8:
		for _, x := range mat.i8 {
			buf = append(buf, byte(x))
		}
		for _, s := range mat.scale {
			buf = le.AppendUint32(buf, math.Float32bits(s))
		}
	}
	if _, err := cw.Write(buf); err != nil {
		return 0, 0, err
	}
	if _, err := cw.Write(meta); err != nil {
		return 0, 0, err
	}
	sum := cw.crc
	out.Write(binary.LittleEndian.AppendUint32(nil, sum))
	if err := atomicfile.WriteNew(path, out.Bytes()); err != nil {
		return 0, 0, err
	}
	return cw.n + 4, sum, nil
}

// corruptf reports a damaged file.
func corruptf(path, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrCorrupt, path, fmt.Sprintf(format, args...))
}

// readSegment loads and fully verifies a segment file against the size and
// checksum the manifest recorded: checksum, structure and the texts' UTF-8,
// its documents decoded (compaction, the full check). A missing file is
// returned as an os.ErrNotExist error; anything damaged as ErrCorrupt.
func readSegment(path, name string, wantSize int64, wantCRC uint32) (*segment, error) {
	if v2, err := isSegment2(path); err != nil {
		return nil, err
	} else if v2 {
		return readSegment2(path, name, wantSize, wantCRC)
	}
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	st, err := file.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() != wantSize {
		return nil, corruptf(path, "size %d bytes, the manifest recorded %d (truncated or overwritten)", st.Size(), wantSize)
	}
	if wantSize < segHeaderSize+4 {
		return nil, corruptf(path, "too short (%d bytes)", wantSize)
	}
	r := bufio.NewReaderSize(file, 1<<20)
	crc := uint32(0)
	read := func(p []byte) error {
		if _, err := io.ReadFull(r, p); err != nil {
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				return corruptf(path, "truncated")
			}
			return fmt.Errorf("read %s: %w", path, err)
		}
		crc = crc32.Update(crc, castagnoli, p)
		return nil
	}
	var h [segHeaderSize]byte
	if err := read(h[:]); err != nil {
		return nil, err
	}
	le := binary.LittleEndian
	if string(h[:8]) != segMagic {
		return nil, corruptf(path, "not a ctxsel segment (bad magic)")
	}
	if v := le.Uint32(h[8:]); v != segVersion {
		return nil, corruptf(path, "segment version %d, this build reads %d", v, segVersion)
	}
	f := Format(le.Uint32(h[12:]))
	dim := int64(le.Uint32(h[16:]))
	n := le.Uint64(h[24:])
	vecOff, scaleOff, metaOff, metaLen := le.Uint64(h[32:]), le.Uint64(h[40:]), le.Uint64(h[48:]), le.Uint64(h[56:])
	es := int64(f.elemSize())
	if es == 0 || dim <= 0 || dim > 1<<16 || n > 1<<31 {
		return nil, corruptf(path, "bad header (format %d, dim %d, rows %d)", f, dim, n)
	}
	if n > uint64(wantSize) || vecOff > uint64(wantSize) || scaleOff > uint64(wantSize) || metaOff > uint64(wantSize) || metaLen > uint64(wantSize) {
		return nil, corruptf(path, "block offsets do not fit the file")
	}
	vecLen := int64(n) * dim * es
	scaleLen := int64(0)
	if f == I8 {
		scaleLen = int64(n) * 4
	}
	if vecOff != segHeaderSize || int64(scaleOff) != int64(vecOff)+vecLen || int64(metaOff) != int64(scaleOff)+scaleLen ||
		int64(metaOff)+int64(metaLen)+4 != wantSize {
		return nil, corruptf(path, "block offsets do not fit the file")
	}
	rows := int(n) * int(dim)
	mat := matrix{format: f, dim: int(dim), n: int(n)}
	switch f {
	case F32:
		mat.f32 = make([]float32, rows)
		if err := read(bytesOf(mat.f32)); err != nil {
			return nil, err
		}
		fixEndianF32(mat.f32)
	case F16:
		mat.f16 = make([]uint16, rows)
		if err := read(bytesOf(mat.f16)); err != nil {
			return nil, err
		}
		fixEndian16(mat.f16)
	case I8:
		mat.i8 = make([]int8, rows)
		if err := read(bytesOf(mat.i8)); err != nil {
			return nil, err
		}
		mat.scale = make([]float32, n)
		if err := read(bytesOf(mat.scale)); err != nil {
			return nil, err
		}
		fixEndianF32(mat.scale)
	}
	meta := make([]byte, metaLen)
	if err := read(meta); err != nil {
		return nil, err
	}
	var tr [4]byte
	if _, err := io.ReadFull(r, tr[:]); err != nil {
		return nil, corruptf(path, "truncated")
	}
	if got := le.Uint32(tr[:]); got != crc || got != wantCRC {
		return nil, corruptf(path, "checksum mismatch (stored %08x, computed %08x, manifest %08x): the file is damaged", got, crc, wantCRC)
	}
	var sm segMeta
	if err := json.Unmarshal(meta, &sm); err != nil {
		return nil, corruptf(path, "metadata: %v", err)
	}
	s := &segment{name: name, size: wantSize, crc: wantCRC, mat: mat, docs: sm.Docs,
		rowDoc: make([]int32, 0, n), rowIdx: make([]int32, 0, n)}
	for di, d := range sm.Docs {
		if d.ID == "" || !utf8.ValidString(d.Text) {
			return nil, corruptf(path, "document %d: empty id or invalid text", di)
		}
		for ci, c := range d.Chunks {
			if c[0] < 0 || c[0] > c[1] || c[1] > len(d.Text) || c[2] < 0 || c[3] < c[2] || c[4] < 0 {
				return nil, corruptf(path, "document %q chunk %d: bad span", d.ID, ci)
			}
			s.rowDoc = append(s.rowDoc, int32(di))
			s.rowIdx = append(s.rowIdx, int32(ci))
		}
	}
	if uint64(len(s.rowDoc)) != n {
		return nil, corruptf(path, "%d chunks for %d vectors", len(s.rowDoc), n)
	}
	return s, nil
}

// isSegment2 reports whether the file at path starts as a version-2
// segment.
func isSegment2(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var m [len(segMagic2)]byte
	if _, err := io.ReadFull(f, m[:]); err != nil {
		return false, nil // too short: readSegment reports it
	}
	return string(m[:]) == segMagic2, nil
}

// readSegment2 reads a version-2 segment into memory and checks all of
// it; its documents' strings are views of that memory (kept alive by
// them).
func readSegment2(path, name string, wantSize int64, wantCRC uint32) (*segment, error) {
	data, err := readFileSized(path, wantSize)
	if err != nil {
		return nil, err
	}
	if err := checkCRC(path, data, wantCRC); err != nil {
		return nil, err
	}
	if !littleEndian {
		return nil, fmt.Errorf("segment %s: version 2 is read on little-endian machines only", path)
	}
	s, err := viewSegment2(path, name, data, wantCRC)
	if err != nil {
		return nil, err
	}
	v := s.views
	for di := range len(v.docTab) / 6 {
		if !utf8.ValidString(v.docText(int32(di))) || !utf8.ValidString(v.docID(int32(di))) {
			return nil, corruptf(path, "document %d: invalid UTF-8", di)
		}
	}
	docs := make([]segDoc, 0, len(v.docTab)/6)
	for r := range s.mat.n {
		di := s.rowDoc[r]
		if int(di) == len(docs) {
			docs = append(docs, segDoc{ID: v.docID(di), Source: v.docSource(di), Text: v.docText(di)})
		}
		_, _, span := s.chunk(int32(r))
		docs[di].Chunks = append(docs[di].Chunks, span)
	}
	s.docs = docs
	return s, nil
}

// bytesOf views a numeric slice as its bytes.
func bytesOf[T float32 | uint16 | int8](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&s[0])), len(s)*int(unsafe.Sizeof(z)))
}

var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// fixEndianF32 and fixEndian16 turn little-endian data read in place into
// native values on big-endian machines (no-ops on little-endian ones).
func fixEndianF32(s []float32) {
	if littleEndian {
		return
	}
	b := bytesOf(s)
	for i := range s {
		s[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
}

func fixEndian16(s []uint16) {
	if littleEndian {
		return
	}
	b := bytesOf(s)
	for i := range s {
		s[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
}
