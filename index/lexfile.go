package index

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"runtime"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Lexical files, version 2: a term dictionary searched where it lies, so
// opening one is mapping it and checking its CRC-32C; a query decodes only
// its own terms' postings.
//
//	[0, 80)   "CTXLEX2\n" | u32 version 2 | u32 rows | u32 terms | u32 0 |
//	          u64 total terms (the rows' lengths summed) | u64 offsets of
//	          lens, dfs, term offsets, posting offsets | u64 term bytes |
//	          u64 posting bytes
//	lens      rows × u32: each row's length in terms
//	dfs       terms × u32: rows holding each term
//	termOffs  (terms+1) × u32: term i is termBytes[termOffs[i]:termOffs[i+1]]
//	postOffs  (terms+1) × u64: term i's postings in postBytes
//	termBytes the terms, strictly increasing
//	postBytes per term, dfs[i] × (uvarint row delta, uvarint tf)
//	last 4    CRC-32C of everything before it
//
// Blocks start at multiples of 8, padding zero, numbers little-endian.
const (
	lexMagic2      = "CTXLEX2\n"
	lexVersion2    = 2
	lexHeaderSize2 = 80
)

// lexLayout is where a version-2 lexical file's blocks lie.
type lexLayout struct {
	rows, terms                      int64
	total                            int64
	lens, dfs, termOffs, postOffs    int64
	termBytes, postBytes             int64
	termBytesLen, postBytesLen, size int64
}

func (l *lexLayout) layout() {
	l.lens = lexHeaderSize2
	l.dfs = align8(l.lens + 4*l.rows)
	l.termOffs = align8(l.dfs + 4*l.terms)
	l.postOffs = align8(l.termOffs + 4*(l.terms+1))
	l.termBytes = l.postOffs + 8*(l.terms+1)
	l.postBytes = align8(l.termBytes + l.termBytesLen)
	l.size = l.postBytes + l.postBytesLen + 4
}

// lexDict is a version-2 file's dictionary, views into its memory.
type lexDict struct {
	path      string
	dfs       []uint32
	termOffs  []uint32
	postOffs  []uint64
	termBytes []byte
	postBytes []byte
}

func (d *lexDict) term(i int) string {
	a, b := d.termOffs[i], d.termOffs[i+1]
	if a == b {
		return ""
	}
	return unsafe.String(&d.termBytes[a], int(b-a))
}

// encode2 serialises lx in version 2 (checksum trailer included).
func (lx *lexSeg) encode2() []byte {
	terms := make([]string, 0, len(lx.posts))
	l := lexLayout{rows: int64(len(lx.lens))}
	npost := 0
	for t, p := range lx.posts {
		terms = append(terms, t)
		l.termBytesLen += int64(len(t))
		npost += len(p.rows)
	}
	slices.Sort(terms)
	l.terms = int64(len(terms))
	for _, n := range lx.lens {
		l.total += int64(n)
	}
	// postings first, to know their length
	post := make([]byte, 0, 3*npost)
	postOffs := make([]uint64, 0, len(terms)+1)
	for _, t := range terms {
		postOffs = append(postOffs, uint64(len(post)))
		p := lx.posts[t]
		prev := uint32(0)
		for i, r := range p.rows {
			post = appendUvarint(post, uint64(r-prev))
			post = appendUvarint(post, uint64(p.tfs[i]))
			prev = r
		}
	}
	postOffs = append(postOffs, uint64(len(post)))
	l.postBytesLen = int64(len(post))
	l.layout()
	buf := make([]byte, l.size)
	le := binary.LittleEndian
	copy(buf, lexMagic2)
	le.PutUint32(buf[8:], lexVersion2)
	le.PutUint32(buf[12:], uint32(l.rows))
	le.PutUint32(buf[16:], uint32(l.terms))
	for i, v := range []int64{l.total, l.lens, l.dfs, l.termOffs, l.postOffs, l.termBytesLen, l.postBytesLen} {
		le.PutUint64(buf[24+8*i:], uint64(v))
	}
	for i, n := range lx.lens {
		le.PutUint32(buf[l.lens+4*int64(i):], n)
	}
	at := uint32(0)
	for i, t := range terms {
		le.PutUint32(buf[l.dfs+4*int64(i):], uint32(len(lx.posts[t].rows)))
		le.PutUint32(buf[l.termOffs+4*int64(i):], at)
		copy(buf[l.termBytes+int64(at):], t)
		at += uint32(len(t))
	}
	le.PutUint32(buf[l.termOffs+4*l.terms:], at)
	for i, o := range postOffs {
		le.PutUint64(buf[l.postOffs+8*int64(i):], o)
	}
	copy(buf[l.postBytes:], post)
	le.PutUint32(buf[len(buf)-4:], crc32.Checksum(buf[:len(buf)-4], castagnoli))
	return buf
}

// viewLexical2 checks a version-2 file held in data (checksum verified)
// for rows rows and returns it with its blocks as views into data. The
// checks are structural (every table fits and increases), so no content
// makes a lookup fail other than with ErrCorrupt; each term's postings are
// checked when a query decodes them.
func viewLexical2(path string, data []byte, crc uint32, rows int) (*lexSeg, error) {
	le := binary.LittleEndian
	if len(data) < lexHeaderSize2+4 {
		return nil, corruptf(path, "too short (%d bytes)", len(data))
	}
	if v := le.Uint32(data[8:]); v != lexVersion2 {
		return nil, corruptf(path, "lexical version %d, this build reads 1 and 2", v)
	}
	l := lexLayout{rows: int64(le.Uint32(data[12:])), terms: int64(le.Uint32(data[16:]))}
	if l.rows != int64(rows) {
		return nil, corruptf(path, "%d rows, its segment has %d", l.rows, rows)
	}
	var h [7]int64
	for i := range h {
		h[i] = int64(le.Uint64(data[24+8*i:]))
	}
	size := int64(len(data))
	l.total, l.termBytesLen, l.postBytesLen = h[0], h[5], h[6]
	if le.Uint32(data[20:]) != 0 || l.terms > size || l.termBytesLen < 0 || l.termBytesLen > size || l.postBytesLen < 0 || l.postBytesLen > size {
		return nil, corruptf(path, "bad header")
	}
	l.layout()
	if [4]int64{h[1], h[2], h[3], h[4]} != [4]int64{l.lens, l.dfs, l.termOffs, l.postOffs} || l.size != size {
		return nil, corruptf(path, "block offsets do not fit the file")
	}
	if !littleEndian || uintptr(unsafe.Pointer(unsafe.SliceData(data)))%8 != 0 {
		return nil, fmt.Errorf("lexical file %s: views need a little-endian machine and an aligned buffer", path)
	}
	lx := &lexSeg{size: size, crc: crc, total: l.total}
	lx.lens = viewOf[uint32](data[l.lens:], rows)
	d := &lexDict{path: path,
		dfs:       viewOf[uint32](data[l.dfs:], int(l.terms)),
		termOffs:  viewOf[uint32](data[l.termOffs:], int(l.terms)+1),
		postOffs:  viewOf[uint64](data[l.postOffs:], int(l.terms)+1),
		termBytes: data[l.termBytes : l.termBytes+l.termBytesLen : l.termBytes+l.termBytesLen],
		postBytes: data[l.postBytes : l.postBytes+l.postBytesLen : l.postBytes+l.postBytesLen],
	}
	if d.termOffs[0] != 0 || int64(d.termOffs[l.terms]) != l.termBytesLen || d.postOffs[0] != 0 || int64(d.postOffs[l.terms]) != l.postBytesLen {
		return nil, corruptf(path, "tables do not span their blocks")
	}
	for i := range int(l.terms) {
		if d.termOffs[i] >= d.termOffs[i+1] || d.postOffs[i] >= d.postOffs[i+1] || d.dfs[i] == 0 || int(d.dfs[i]) > rows {
			return nil, corruptf(path, "term %d: bad table entry", i)
		}
	}
	var sum int64
	for _, n := range lx.lens {
		sum += int64(n)
	}
	if sum != l.total {
		return nil, corruptf(path, "row lengths sum to %d, the header says %d", sum, l.total)
	}
	lx.dict = d
	return lx, nil
}

// lookup returns term t's postings, decoded and checked; a term in no row
// has none.
func (lx *lexSeg) lookup(t string) (postings, error) {
	d := lx.dict
	if d == nil {
		return lx.posts[t], nil
	}
	n := len(d.dfs)
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c := strings.Compare(d.term(m), t); c < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == n || d.term(lo) != t {
		return postings{}, nil
	}
	return d.decode(lo, lx.lens)
}

// decode reads term i's postings, checking each against the rows.
func (d *lexDict) decode(i int, lens []uint32) (postings, error) {
	p := d.postBytes[d.postOffs[i]:d.postOffs[i+1]]
	cnt := int(d.dfs[i])
	ps := postings{rows: make([]uint32, cnt), tfs: make([]uint32, cnt)}
	row := uint64(0)
	for k := range cnt {
		delta, n1 := binary.Uvarint(p)
		if n1 <= 0 {
			return postings{}, corruptf(d.path, "term %d: bad posting %d", i, k)
		}
		tf, n2 := binary.Uvarint(p[n1:])
		if n2 <= 0 || (k > 0 && delta == 0) || delta >= uint64(len(lens)) || tf == 0 {
			return postings{}, corruptf(d.path, "term %d: bad posting %d", i, k)
		}
		p = p[n1+n2:]
		row += delta
		if row >= uint64(len(lens)) || tf > uint64(lens[row]) {
			return postings{}, corruptf(d.path, "term %d: posting %d outside the rows or longer than its row", i, k)
		}
		ps.rows[k], ps.tfs[k] = uint32(row), uint32(tf)
	}
	if len(p) != 0 {
		return postings{}, corruptf(d.path, "term %d: %d bytes after its postings", i, len(p))
	}
	return ps, nil
}

// decodeAll decodes every term into lx.posts, checking the whole file as
// version 1's decoder does: terms strictly increasing and valid UTF-8, and
// each row's length equal to its postings' frequencies summed.
func (lx *lexSeg) decodeAll() error {
	d := lx.dict
	lx.posts = make(map[string]postings, len(d.dfs))
	seen := make([]uint64, len(lx.lens))
	prev := ""
	for i := range d.dfs {
		t := d.term(i)
		if i > 0 && t <= prev || !utf8.ValidString(t) {
			return corruptf(d.path, "term %d: out of order or invalid UTF-8", i)
		}
		prev = t
		ps, err := d.decode(i, lx.lens)
		if err != nil {
			return err
		}
		for k, r := range ps.rows {
			seen[r] += uint64(ps.tfs[k])
		}
		lx.posts[strings.Clone(t)] = ps
	}
	for r, l := range lx.lens {
		if seen[r] != uint64(l) {
			return corruptf(d.path, "row %d: %d terms recorded, postings hold %d", r, l, seen[r])
		}
	}
	lx.lens = slices.Clone(lx.lens) // may outlive d's memory
	lx.dict = nil
	return nil
}

// openLexical opens a lexical file for searching, verified against the
// size and checksum the manifest recorded and its segment's row count: a
// version-2 file is mapped and used in place after its checksum and
// tables are checked; a version-1 file is read and decoded. A missing file
// is an os.ErrNotExist error; anything damaged is ErrCorrupt.
func openLexical(path string, wantSize int64, wantCRC uint32, rows int) (*lexSeg, error) {
	data, release, err := mapFile(path, wantSize)
	if err != nil {
		return nil, err
	}
	if len(data) < len(lexMagic2) || string(data[:len(lexMagic2)]) != lexMagic2 || !littleEndian {
		lx, err := decodeLexical(path, data, wantCRC, rows) // copies what it keeps
		release()
		return lx, err
	}
	if err := checkCRC(path, data, wantCRC); err != nil {
		release()
		return nil, err
	}
	lx, err := viewLexical2(path, data, wantCRC, rows)
	if err != nil {
		release()
		return nil, err
	}
	runtime.AddCleanup(lx, func(release func()) { release() }, release)
	return lx, nil
}
