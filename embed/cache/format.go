package cache

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
)

// On-disk format. All integers little-endian.
//
//	file   = header record*
//	header = "ctxselV1" kind:u8 idLen:u32 id:[idLen]byte crc:u32
//	record = magic:u32 key:[32]byte dim:u32 vec:[dim]f32 crc:u32
//
// kind is 'P' (passages, Embed) or 'Q' (queries, EmbedQuery); id is the
// embedder's ModelID; key is sha256 of the text; each crc is CRC-32C
// (Castagnoli) over every preceding byte of its header or record.
const (
	fileMagic   = "ctxselV1"
	recMagic    = 0xC7E1A5D3
	keySize     = sha256.Size
	recHeadSize = 4 + keySize + 4
	crcSize     = 4
	hdrFixed    = len(fileMagic) + 1 + 4
	maxDim      = 1 << 16
	maxIDLen    = 1 << 16

	kindPassage byte = 'P'
	kindQuery   byte = 'Q'

	fileExt = ".log"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

type key [keySize]byte

// ns names one cache namespace: a model, and whether its vectors embed
// passages or queries.
type ns struct {
	kind byte
	id   string
}

// fileName is the namespace's log file name: a hash of kind and ModelID.
func (n ns) fileName() string {
	h := sha256.New()
	h.Write([]byte{n.kind, 0})
	h.Write([]byte(n.id))
	return hex.EncodeToString(h.Sum(nil)[:16]) + fileExt
}

var (
	errShort    = errors.New("truncated")
	errMagic    = errors.New("bad magic")
	errDim      = errors.New("bad dimension")
	errCRC      = errors.New("checksum mismatch")
	errValue    = errors.New("non-finite component")
	errKind     = errors.New("bad kind")
	errIDLength = errors.New("bad model ID length")
)

func encodeHeader(n ns) []byte {
	b := make([]byte, 0, hdrFixed+len(n.id)+crcSize)
	b = append(b, fileMagic...)
	b = append(b, n.kind)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(n.id)))
	b = append(b, n.id...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// headerSize is the header's full length given its first hdrFixed bytes.
func headerSize(b []byte) (int, error) {
	if len(b) < hdrFixed {
		return 0, errShort
	}
	if string(b[:len(fileMagic)]) != fileMagic {
		return 0, errMagic
	}
	l := binary.LittleEndian.Uint32(b[len(fileMagic)+1:])
	if l > maxIDLen {
		return 0, errIDLength
	}
	return hdrFixed + int(l) + crcSize, nil
}

func decodeHeader(b []byte) (n ns, size int, err error) {
	size, err = headerSize(b)
	if err != nil {
		return ns{}, 0, err
	}
	if len(b) < size {
		return ns{}, 0, errShort
	}
	body := b[:size-crcSize]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[size-crcSize:]) {
		return ns{}, 0, errCRC
	}
	n = ns{kind: b[len(fileMagic)], id: string(body[hdrFixed:])}
	if n.kind != kindPassage && n.kind != kindQuery {
		return ns{}, 0, errKind
	}
	return n, size, nil
}

func recordSize(dim int) int { return recHeadSize + 4*dim + crcSize }

func appendRecord(dst []byte, k key, vec []float32) []byte {
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, recMagic)
	dst = append(dst, k[:]...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(vec)))
	for _, x := range vec {
		dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(x))
	}
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// recordLen validates a record's fixed head and returns its full length.
func recordLen(b []byte) (int, error) {
	if len(b) < recHeadSize {
		return 0, errShort
	}
	if binary.LittleEndian.Uint32(b) != recMagic {
		return 0, errMagic
	}
	dim := binary.LittleEndian.Uint32(b[4+keySize:])
	if dim == 0 || dim > maxDim {
		return 0, errDim
	}
	return recordSize(int(dim)), nil
}

// decodeRecord decodes the record at the start of b, appending its vector
// to dst[:0]. n is the record's length.
func decodeRecord(b []byte, dst []float32) (k key, vec []float32, n int, err error) {
	n, err = recordLen(b)
	if err != nil {
		return k, nil, 0, err
	}
	if len(b) < n {
		return k, nil, 0, errShort
	}
	body := b[:n-crcSize]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[n-crcSize:]) {
		return k, nil, 0, errCRC
	}
	copy(k[:], b[4:])
	vec = dst[:0]
	for p := recHeadSize; p < len(body); p += 4 {
		x := math.Float32frombits(binary.LittleEndian.Uint32(body[p:]))
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return k, nil, 0, errValue
		}
		vec = append(vec, x)
	}
	return k, vec, n, nil
}

// CorruptError reports damage inside a cache file: a bad record (or header)
// followed by intact records, so it cannot be a torn tail left by a crash.
// It matches ErrCorrupt with errors.Is.
type CorruptError struct {
	Path   string
	Offset int64
	Reason string

	next int64 // offset of the next intact record, 0 if unknown
}

// ErrCorrupt is matched by every *CorruptError.
var ErrCorrupt = errors.New("corrupt cache file")

func (e *CorruptError) Error() string {
	return fmt.Sprintf("cache: %s: corrupt at offset %d: %s", e.Path, e.Offset, e.Reason)
}

func (e *CorruptError) Unwrap() error { return ErrCorrupt }

// readHeader reads and decodes the file header.
func readHeader(r io.ReaderAt, size int64) (ns, int64, error) {
	fixed := make([]byte, hdrFixed)
	if size < int64(hdrFixed) {
		return ns{}, 0, errShort
	}
	if _, err := r.ReadAt(fixed, 0); err != nil {
		return ns{}, 0, fmt.Errorf("reading header: %w", err)
	}
	hs, err := headerSize(fixed)
	if err != nil {
		return ns{}, 0, err
	}
	if int64(hs) > size {
		return ns{}, 0, errShort
	}
	b := make([]byte, hs)
	if _, err := r.ReadAt(b, 0); err != nil {
		return ns{}, 0, fmt.Errorf("reading header: %w", err)
	}
	n, hs, err := decodeHeader(b)
	return n, int64(hs), err
}

// scanRecords decodes the records in [start, size) of r, calling fn for
// each (vec is reused: fn must copy it). *dim is the file's dimension, 0 if
// not yet known; every record must match it.
//
// It returns the end of the last intact record. When end < size the rest
// is a torn tail: it fails to decode and no intact record starts anywhere
// after it, which is what an interrupted append leaves behind. A bad record
// followed by an intact one is reported as a *CorruptError instead.
func scanRecords(r io.ReaderAt, path string, start, size int64, dim *int, fn func(key, []float32)) (end int64, err error) {
	if start >= size {
		return start, nil
	}
	br := newSectionBuffer(r, start, size)
	var (
		buf []byte
		vec []float32
		off = start
	)
	for off < size {
		head, err := br.peek(recHeadSize)
		if errors.Is(err, errShort) {
			return tail(r, path, off, size, err)
		} else if err != nil {
			return off, fmt.Errorf("cache: reading %s at offset %d: %w", path, off, err)
		}
		n, err := recordLen(head)
		if err != nil {
			return tail(r, path, off, size, err)
		}
		if int64(n) > size-off {
			return tail(r, path, off, size, errShort)
		}
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if err := br.read(buf); err != nil {
			return off, fmt.Errorf("cache: reading %s at offset %d: %w", path, off, err)
		}
		k, v, _, err := decodeRecord(buf, vec)
		if err != nil {
			return tail(r, path, off, size, err)
		}
		vec = v
		if *dim == 0 {
			*dim = len(v)
		} else if len(v) != *dim {
			return off, &CorruptError{Path: path, Offset: off, next: off + int64(n),
				Reason: fmt.Sprintf("record has dimension %d, earlier records %d", len(v), *dim)}
		}
		fn(k, v)
		off += int64(n)
	}
	return off, nil
}

// tail decides what a decoding failure at off means: a torn tail (returns
// off, nil) unless an intact record starts after off.
func tail(r io.ReaderAt, path string, off, size int64, cause error) (int64, error) {
	p, ok, err := findRecord(r, off+1, size)
	if err != nil {
		return off, fmt.Errorf("cache: reading %s: %w", path, err)
	}
	if ok {
		return off, &CorruptError{Path: path, Offset: off, next: p,
			Reason: fmt.Sprintf("%v (intact record follows at offset %d)", cause, p)}
	}
	return off, nil
}

// findRecord reports the offset of the first intact record starting in
// [from, size).
func findRecord(r io.ReaderAt, from, size int64) (int64, bool, error) {
	const chunk = 1 << 20
	var magic [4]byte
	binary.LittleEndian.PutUint32(magic[:], recMagic)
	buf := make([]byte, max(0, min(int64(chunk+len(magic)-1), size-from)))
	for pos := from; pos < size; pos += chunk {
		n := int(min(int64(len(buf)), size-pos))
		if _, err := r.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, false, err
		}
		for i := 0; i < n; {
			j := bytes.Index(buf[i:n], magic[:])
			if j < 0 {
				break
			}
			ok, err := intactAt(r, pos+int64(i+j), size)
			if err != nil {
				return 0, false, err
			}
			if ok {
				return pos + int64(i+j), true, nil
			}
			i += j + 1
		}
	}
	return 0, false, nil
}

func intactAt(r io.ReaderAt, p, size int64) (bool, error) {
	if size-p < recHeadSize {
		return false, nil
	}
	head := make([]byte, recHeadSize)
	if _, err := r.ReadAt(head, p); err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	n, err := recordLen(head)
	if err != nil || int64(n) > size-p {
		return false, nil
	}
	b := make([]byte, n)
	if _, err := r.ReadAt(b, p); err != nil && !errors.Is(err, io.EOF) {
		return false, err
	}
	_, _, _, err = decodeRecord(b, nil)
	return err == nil, nil
}

// formatError reports whether err means bad bytes rather than failed I/O.
func formatError(err error) bool {
	for _, e := range []error{errShort, errMagic, errDim, errCRC, errValue, errKind, errIDLength} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// sectionBuffer reads [off, size) of r sequentially through a buffer.
type sectionBuffer struct {
	r         io.ReaderAt
	off, size int64
	buf       []byte
	lo, hi    int
}

func newSectionBuffer(r io.ReaderAt, off, size int64) *sectionBuffer {
	return &sectionBuffer{r: r, off: off, size: size, buf: make([]byte, max(0, min(1<<20, size-off)))}
}

// fill makes at least n bytes available, unless the section ends first.
func (s *sectionBuffer) fill(n int) error {
	if s.hi-s.lo >= n {
		return nil
	}
	if n > len(s.buf) {
		nb := make([]byte, n)
		copy(nb, s.buf[s.lo:s.hi])
		s.buf, s.hi, s.lo = nb, s.hi-s.lo, 0
	} else if s.lo > 0 {
		copy(s.buf, s.buf[s.lo:s.hi])
		s.hi, s.lo = s.hi-s.lo, 0
	}
	for s.hi-s.lo < n && s.off < s.size {
		want := int(min(int64(len(s.buf)-s.hi), s.size-s.off))
		m, err := s.r.ReadAt(s.buf[s.hi:s.hi+want], s.off)
		s.hi += m
		s.off += int64(m)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if m == 0 {
			break
		}
	}
	if s.hi-s.lo < n {
		return errShort
	}
	return nil
}

func (s *sectionBuffer) peek(n int) ([]byte, error) {
	if err := s.fill(n); err != nil {
		return nil, err
	}
	return s.buf[s.lo : s.lo+n], nil
}

func (s *sectionBuffer) read(dst []byte) error {
	if err := s.fill(len(dst)); err != nil {
		return err
	}
	copy(dst, s.buf[s.lo:])
	s.lo += len(dst)
	return nil
}
