package index

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"runtime"
	"unsafe"
)

// Segment files, version 2: everything a search reads is laid out to be
// used where it lies, so opening a segment is mapping it and checking its
// CRC-32C (hardware speed), not decoding it.
//
//	[0, 128)   header: magic "CTXSEG2\n", u32 version 2, u32 format, u32 dim,
//	           u32 0, u64 rows, u64 docs, and the offsets of the blocks below
//	           (vectors, scales, rows, spans, docs, strings) and the strings'
//	           length; the rest zero
//	vectors    rows×dim components (f32, f16 or i8), at offset 128
//	scales     i8 only: rows float32 scales
//	rows       rows × i32 document (index into docs), then rows × i32 chunk
//	           index within it
//	spans      rows × 5 u32: start, end, char_start, char_end, tokens
//	docs       docs × 6 u64: id, source and text as (offset, length) into
//	           the strings block
//	strings    every document's id, source and text
//	last 4     CRC-32C (Castagnoli) of everything before it
//
// Blocks start at multiples of 8 (vectors at 128), padding zero; all
// numbers little-endian. Documents appear in order, each with at least one
// chunk, their rows consecutive.
const (
	segMagic2      = "CTXSEG2\n"
	segVersion2    = 2
	segHeaderSize2 = 128
)

// seg2Layout is where a version-2 segment's blocks lie.
type seg2Layout struct {
	format                                      Format
	dim, rows, docs                             int64
	vec, scale, rowsOff, spans, docTab, strings int64
	stringsLen                                  int64
}

func align8(x int64) int64 { return (x + 7) &^ 7 }

// layout computes the block offsets from the counts.
func (l *seg2Layout) layout() {
	l.vec = segHeaderSize2
	l.scale = align8(l.vec + l.rows*l.dim*int64(l.format.elemSize()))
	l.rowsOff = l.scale
	if l.format == I8 {
		l.rowsOff = align8(l.scale + 4*l.rows)
	}
	l.spans = align8(l.rowsOff + 8*l.rows)
	l.docTab = align8(l.spans + 20*l.rows)
	l.strings = align8(l.docTab + 48*l.docs)
}

func (l *seg2Layout) size() int64 { return l.strings + l.stringsLen + 4 }

// putVectors writes m's components at vec and (i8) its scales at scl of buf.
func putVectors(buf []byte, vec, scl int64, m matrix) {
	le := binary.LittleEndian
	switch m.format {
	case F32:
		for i, x := range m.f32 {
			le.PutUint32(buf[vec+4*int64(i):], math.Float32bits(x))
		}
	case F16:
		for i, x := range m.f16 {
			le.PutUint16(buf[vec+2*int64(i):], x)
		}
	case I8:
		for i, x := range m.i8 {
			buf[vec+int64(i)] = byte(x)
		}
		for i, s := range m.scale {
			le.PutUint32(buf[scl+4*int64(i):], math.Float32bits(s))
		}
	}
}

// encodeSegment2 lays out a version-2 segment (checksum trailer included).
func encodeSegment2(f Format, dim int, docs []segDoc, mat matrix) ([]byte, error) {
	l := seg2Layout{format: f, dim: int64(dim), rows: int64(mat.n), docs: int64(len(docs))}
	for _, d := range docs {
		l.stringsLen += int64(len(d.ID) + len(d.Source) + len(d.Text))
	}
	l.layout()
	buf := make([]byte, l.size())
	le := binary.LittleEndian
	copy(buf, segMagic2)
	le.PutUint32(buf[8:], segVersion2)
	le.PutUint32(buf[12:], uint32(f))
	le.PutUint32(buf[16:], uint32(dim))
	for i, v := range []int64{l.rows, l.docs, l.vec, l.scale, l.rowsOff, l.spans, l.docTab, l.strings, l.stringsLen} {
		le.PutUint64(buf[24+8*i:], uint64(v))
	}
	putVectors(buf, l.vec, l.scale, mat)
	row, at := int64(0), l.strings
	put := func(slot int64, s string) {
		le.PutUint64(buf[slot:], uint64(at-l.strings))
		le.PutUint64(buf[slot+8:], uint64(len(s)))
		copy(buf[at:], s)
		at += int64(len(s))
	}
	for di, d := range docs {
		if len(d.Chunks) == 0 {
			return nil, fmt.Errorf("document %q has no chunks", d.ID)
		}
		slot := l.docTab + 48*int64(di)
		put(slot, d.ID)
		put(slot+16, d.Source)
		put(slot+32, d.Text)
		for ci, c := range d.Chunks {
			le.PutUint32(buf[l.rowsOff+4*row:], uint32(di))
			le.PutUint32(buf[l.rowsOff+4*l.rows+4*row:], uint32(ci))
			for k, v := range c {
				if v < 0 || v > math.MaxUint32 {
					return nil, fmt.Errorf("document %q chunk %d: offset %d out of range", d.ID, ci, v)
				}
				le.PutUint32(buf[l.spans+20*row+4*int64(k):], uint32(v))
			}
			row++
		}
	}
	if row != l.rows {
		return nil, fmt.Errorf("%d chunks for %d vectors", row, l.rows)
	}
	le.PutUint32(buf[len(buf)-4:], crc32.Checksum(buf[:len(buf)-4], castagnoli))
	return buf, nil
}

// parseHeader2 reads and checks a version-2 header against the file size.
func parseHeader2(path string, h []byte, size int64) (seg2Layout, error) {
	le := binary.LittleEndian
	var l seg2Layout
	if len(h) < segHeaderSize2 || string(h[:8]) != segMagic2 {
		return l, corruptf(path, "not a ctxsel segment (bad magic)")
	}
	if v := le.Uint32(h[8:]); v != segVersion2 {
		return l, corruptf(path, "segment version %d, this build reads 1 and 2", v)
	}
	l.format, l.dim = Format(le.Uint32(h[12:])), int64(le.Uint32(h[16:]))
	l.rows, l.docs = int64(le.Uint64(h[24:])), int64(le.Uint64(h[32:]))
	got := [7]uint64{}
	for i := range got {
		got[i] = le.Uint64(h[40+8*i:])
	}
	l.stringsLen = int64(got[6])
	if l.format.elemSize() == 0 || l.dim <= 0 || l.dim > 1<<16 || l.rows < 0 || l.rows > 1<<31 || l.docs < 0 || l.docs > l.rows ||
		(l.rows > 0) != (l.docs > 0) || l.stringsLen < 0 || l.stringsLen > size {
		return l, corruptf(path, "bad header (format %d, dim %d, rows %d, docs %d)", l.format, l.dim, l.rows, l.docs)
	}
	if le.Uint32(h[20:]) != 0 || !allZero(h[96:segHeaderSize2]) {
		return l, corruptf(path, "bad header (reserved bytes set)")
	}
	l.layout()
	if want := [6]int64{l.vec, l.scale, l.rowsOff, l.spans, l.docTab, l.strings}; [6]int64{int64(got[0]), int64(got[1]), int64(got[2]), int64(got[3]), int64(got[4]), int64(got[5])} != want || l.size() != size {
		return l, corruptf(path, "block offsets do not fit the file")
	}
	return l, nil
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// segViews are a version-2 segment's blocks where they lie (in a mapping
// or a buffer the segment keeps).
type segViews struct {
	spans   []uint32 // rows × 5
	docTab  []uint64 // docs × 6
	strings []byte
}

// str returns the string at (off, n) of the strings block, which must have
// been checked to fit.
func (v *segViews) str(off, n uint64) string {
	if n == 0 {
		return ""
	}
	return unsafe.String(&v.strings[off], int(n))
}

func (v *segViews) docID(di int32) string   { return v.str(v.docTab[6*di], v.docTab[6*di+1]) }
func (v *segViews) docText(di int32) string { return v.str(v.docTab[6*di+4], v.docTab[6*di+5]) }
func (v *segViews) docSource(di int32) string {
	return v.str(v.docTab[6*di+2], v.docTab[6*di+3])
}

// viewSegment2 checks a version-2 segment held in data (its checksum
// already verified) and returns it with its blocks as views into data:
// nothing is decoded or copied. The checks are structural (every offset,
// span and row fits), so no content makes later use of the views fail; the
// texts' UTF-8 validity is left to the full check (readSegment).
func viewSegment2(path, name string, data []byte, crc uint32) (*segment, error) {
	size := int64(len(data))
	l, err := parseHeader2(path, data, size)
	if err != nil {
		return nil, err
	}
	if !littleEndian || uintptr(unsafe.Pointer(unsafe.SliceData(data)))%8 != 0 {
		return nil, fmt.Errorf("segment %s: views need a little-endian machine and an aligned buffer", path)
	}
	n, dim := int(l.rows), int(l.dim)
	mat := matrix{format: l.format, dim: dim, n: n}
	if n > 0 {
		switch l.format {
		case F32:
			mat.f32 = viewOf[float32](data[l.vec:], n*dim)
		case F16:
			mat.f16 = viewOf[uint16](data[l.vec:], n*dim)
		case I8:
			mat.i8 = viewOf[int8](data[l.vec:], n*dim)
			mat.scale = viewOf[float32](data[l.scale:], n)
		}
	}
	s := &segment{name: name, size: size, crc: crc, mat: mat}
	v := &segViews{strings: data[l.strings : l.strings+l.stringsLen : l.strings+l.stringsLen]}
	if n > 0 {
		s.rowDoc = viewOf[int32](data[l.rowsOff:], n)
		s.rowIdx = viewOf[int32](data[l.rowsOff+4*l.rows:], n)
		v.spans = viewOf[uint32](data[l.spans:], 5*n)
		v.docTab = viewOf[uint64](data[l.docTab:], 6*int(l.docs))
	}
	s.views = v
	// documents: strings inside the block, ids not empty
	sl := uint64(l.stringsLen)
	for di := range int(l.docs) {
		e := v.docTab[6*di : 6*di+6]
		for k := 0; k < 6; k += 2 {
			if e[k] > sl || e[k+1] > sl-e[k] {
				return nil, corruptf(path, "document %d: strings outside the file", di)
			}
		}
		if e[1] == 0 {
			return nil, corruptf(path, "document %d: empty id", di)
		}
	}
	// rows: documents in order, each's chunks numbered from 0, spans inside
	// its text
	for r := range n {
		d, c := s.rowDoc[r], s.rowIdx[r]
		switch {
		case r == 0 && (d != 0 || c != 0),
			r > 0 && !(d == s.rowDoc[r-1] && c == s.rowIdx[r-1]+1 || d == s.rowDoc[r-1]+1 && c == 0),
			int64(d) >= l.docs:
			return nil, corruptf(path, "row %d: rows out of order", r)
		}
		sp := v.spans[5*r : 5*r+5]
		if sp[0] > sp[1] || uint64(sp[1]) > v.docTab[6*d+5] || sp[2] > sp[3] {
			return nil, corruptf(path, "document %d chunk %d: bad span", d, c)
		}
	}
	if n > 0 && int64(s.rowDoc[n-1]) != l.docs-1 {
		return nil, corruptf(path, "%d documents, rows name %d", l.docs, s.rowDoc[n-1]+1)
	}
	return s, nil
}

// viewOf views the first n elements of b as T (b aligned for T).
func viewOf[T float32 | uint16 | int8 | int32 | uint32 | uint64](b []byte, n int) []T {
	if n == 0 {
		return nil
	}
	var z T
	_ = b[n*int(unsafe.Sizeof(z))-1]
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n)
}

// openSegment opens a segment file for searching, verified against the
// size and checksum the manifest recorded: a version-2 file is mapped into
// memory (where the platform allows) and used in place after its CRC-32C
// and structure are checked; a version-1 file is read and decoded
// (readSegment). A missing file is an os.ErrNotExist error; anything
// damaged is ErrCorrupt.
func openSegment(path, name string, wantSize int64, wantCRC uint32) (*segment, error) {
	data, release, err := mapFile(path, wantSize)
	if err != nil {
		return nil, err
	}
	if len(data) < len(segMagic2) || string(data[:len(segMagic2)]) != segMagic2 || !littleEndian {
		release()
		return readSegment(path, name, wantSize, wantCRC)
	}
	if err := checkCRC(path, data, wantCRC); err != nil {
		release()
		return nil, err
	}
	s, err := viewSegment2(path, name, data, wantCRC)
	if err != nil {
		release()
		return nil, err
	}
	// the views live as long as the segment: unmap when it is unreachable
	runtime.AddCleanup(s, func(release func()) { release() }, release)
	return s, nil
}

// checkCRC verifies data's checksum trailer against its content and the
// manifest's record.
func checkCRC(path string, data []byte, want uint32) error {
	if len(data) < 4 {
		return corruptf(path, "too short (%d bytes)", len(data))
	}
	body := data[:len(data)-4]
	stored := binary.LittleEndian.Uint32(data[len(data)-4:])
	if got := crc32.Checksum(body, castagnoli); got != stored || got != want {
		return corruptf(path, "checksum mismatch (stored %08x, computed %08x, manifest %08x): the file is damaged", stored, got, want)
	}
	return nil
}

// readFileSized reads a whole file that must be size bytes long.
func readFileSized(path string, size int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() != size {
		return nil, corruptf(path, "size %d bytes, the manifest recorded %d (truncated or overwritten)", st.Size(), size)
	}
	// 8-aligned for the views: a []uint64's backing array
	words := make([]uint64, (size+7)/8)
	data := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)[:size:size]
	if size > 0 {
		if _, err := f.ReadAt(data, 0); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	}
	return data, nil
}
