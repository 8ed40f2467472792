package index

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/ctxsel/ctxsel/internal/atomicfile"
	"github.com/ctxsel/ctxsel/lexical"
)

// A lexical file holds the BM25 postings of one vector segment's rows
// (chunks), so that chunk i of the segment is row i of both. It is written
// beside the segment (seg-NNNNNN.ctxlex), fsynced before the manifest that
// names it is published, never modified, and recorded in the manifest with
// its size and checksum: a document's postings and its vectors become
// visible in the same manifest commit or not at all.
//
// Only per-row facts are stored (each term's rows and term frequencies, each
// row's length in terms); the corpus statistics BM25 needs (N, average
// length, document frequencies) are summed over the live rows at query time,
// so removed documents never count.
//
//	"CTXLEX1\n" | u32 version | u32 rows | u32 terms | u32 reserved
//	rows × uvarint  row length (terms)
//	terms × { uvarint len, term bytes, uvarint n, n × (uvarint row delta, uvarint tf) }
//	  terms strictly increasing; rows strictly increasing within a term
//	last 4 bytes    CRC-32C of everything before it
const (
	lexMagic      = "CTXLEX1\n"
	lexVersion    = 1
	lexHeaderSize = 24
	lexSuffix     = ".ctxlex"
)

// lexSeg is a loaded lexical file: decoded (posts) or, for version 2,
// its dictionary where it lies (dict); lookup serves both.
type lexSeg struct {
	size  int64
	crc   uint32
	lens  []uint32            // terms per row
	total int64               // lens summed
	posts map[string]postings // term → rows holding it
	dict  *lexDict
}

// postings are one term's rows, increasing, with the term's frequency in
// each.
type postings struct {
	rows []uint32
	tfs  []uint32
}

// lexName is the lexical file beside segment seg.
func lexName(seg string) string { return strings.TrimSuffix(seg, segSuffix) + lexSuffix }

// buildLexical tokenizes the chunks of docs (rows in document and chunk
// order, as in the segment) with lexical.Terms, through a lexical.Vocab so
// that terms are hashed once per occurrence into dense ids and nothing
// else is: per chunk, an id's entry is found through the row it was last
// seen in; the (id, tf) entries, appended in row order, are then placed
// into one array ordered by term by a counting sort, which keeps each
// term's rows increasing.
func buildLexical(docs []segDoc) *lexSeg {
	rows, size := 0, 0
	for _, d := range docs {
		rows += len(d.Chunks)
		size += len(d.Text)
	}
	lx := &lexSeg{lens: make([]uint32, 0, rows)}
	type entry struct{ id, tf uint32 }
	type seen struct{ row, at int32 } // an id's last row (-1: none yet) and its entry there
	var (
		voc     lexical.Vocab
		ids     []uint32
		last    []seen
		counts  []uint32                   // rows holding each term
		ents    = make([]entry, 0, size/8) // as many bytes as the texts: a word and its separator take ≥ 2
		rowEnds = make([]int, 0, rows)     // ents[rowEnds[r-1]:rowEnds[r]] are row r's
	)
	for _, d := range docs {
		for _, c := range d.Chunks {
			row := int32(len(lx.lens))
			ids = voc.AppendIDs(ids[:0], d.Text[c[0]:c[1]])
			lx.lens = append(lx.lens, uint32(len(ids)))
			for len(last) < voc.Len() {
				last = append(last, seen{row: -1})
				counts = append(counts, 0)
			}
			for _, id := range ids {
				s := &last[id]
				if s.row == row {
					ents[s.at].tf++
					continue
				}
				s.row, s.at = row, int32(len(ents))
				counts[id]++
				ents = append(ents, entry{id, 1})
			}
			rowEnds = append(rowEnds, len(ents))
		}
	}
	// counts become each term's first slot in the term-ordered arrays
	start := make([]int, len(counts)+1)
	for id, n := range counts {
		start[id+1] = start[id] + int(n)
	}
	at := slices.Clone(start[:len(counts)])
	prows, ptfs := make([]uint32, len(ents)), make([]uint32, len(ents))
	lo := 0
	for r, hi := range rowEnds {
		for _, e := range ents[lo:hi] {
			k := at[e.id]
			prows[k], ptfs[k] = uint32(r), e.tf
			at[e.id]++
		}
		lo = hi
	}
	lx.posts = make(map[string]postings, voc.Len())
	for id := range voc.Len() {
		a, b := start[id], start[id+1]
		lx.posts[voc.Term(uint32(id))] = postings{rows: prows[a:b:b], tfs: ptfs[a:b:b]}
	}
	for _, n := range lx.lens {
		lx.total += int64(n)
	}
	return lx
}

// encode serialises lx: version 2, or 1 on big-endian machines (version 2
// is used in place).
func (lx *lexSeg) encode() []byte {
	if !littleEndian {
		return lx.encode1()
	}
	return lx.encode2()
}

// encode1 serialises lx in version 1 (checksum trailer included).
func (lx *lexSeg) encode1() []byte {
	terms := make([]string, 0, len(lx.posts))
	size, n := lexHeaderSize+2*len(lx.lens)+4, 0
	for t, p := range lx.posts {
		terms = append(terms, t)
		size += len(t) + 3
		n += len(p.rows)
	}
	slices.Sort(terms)
	le := binary.LittleEndian
	buf := make([]byte, lexHeaderSize, size+3*n) // most deltas take 1 or 2 bytes, tfs 1
	copy(buf, lexMagic)
	le.PutUint32(buf[8:], lexVersion)
	le.PutUint32(buf[12:], uint32(len(lx.lens)))
	le.PutUint32(buf[16:], uint32(len(terms)))
	for _, n := range lx.lens {
		buf = appendUvarint(buf, uint64(n))
	}
	for _, t := range terms {
		p := lx.posts[t]
		buf = appendUvarint(buf, uint64(len(t)))
		buf = append(buf, t...)
		buf = appendUvarint(buf, uint64(len(p.rows)))
		prev := uint32(0)
		for i, r := range p.rows {
			buf = appendUvarint(buf, uint64(r-prev))
			buf = appendUvarint(buf, uint64(p.tfs[i]))
			prev = r
		}
	}
	return le.AppendUint32(buf, crc32.Checksum(buf, castagnoli))
}

// appendUvarint is binary.AppendUvarint with the one-byte case (most
// deltas and term frequencies) inlined.
func appendUvarint(buf []byte, v uint64) []byte {
	if v < 0x80 {
		return append(buf, byte(v))
	}
	return binary.AppendUvarint(buf, v)
}

// writeLexical writes lx to path and fsyncs it. path is derived from a
// segment name no manifest names yet, so a file already there is an orphan
// of a crashed writer and is replaced.
func writeLexical(path string, lx *lexSeg) (size int64, crc uint32, err error) {
	data := lx.encode()
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, 0, err
	}
	if err := atomicfile.WriteNew(path, data); err != nil {
		return 0, 0, err
	}
	return int64(len(data)), binary.LittleEndian.Uint32(data[len(data)-4:]), nil
}

// readLexical loads and verifies a lexical file against the size and
// checksum the manifest recorded and the row count of its segment. A
// missing file is an os.ErrNotExist error; anything damaged is ErrCorrupt.
func readLexical(path string, wantSize int64, wantCRC uint32, rows int) (*lexSeg, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() != wantSize {
		return nil, corruptf(path, "size %d bytes, the manifest recorded %d (truncated or overwritten)", st.Size(), wantSize)
	}
	data := make([]byte, wantSize)
	if _, err := io.ReadFull(bufio.NewReader(f), data); err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return decodeLexical(path, data, wantCRC, rows)
}

// decodeLexical parses a lexical file's bytes (either version) into
// memory that does not refer to data; every structural rule is checked, so
// no input makes it panic or build an inconsistent index.
func decodeLexical(path string, data []byte, wantCRC uint32, rows int) (*lexSeg, error) {
	if len(data) >= len(lexMagic2) && string(data[:len(lexMagic2)]) == lexMagic2 && littleEndian {
		if err := checkCRC(path, data, wantCRC); err != nil {
			return nil, err
		}
		if uintptr(unsafe.Pointer(unsafe.SliceData(data)))%8 != 0 {
			data = alignedCopy(data)
		}
		lx, err := viewLexical2(path, data, wantCRC, rows)
		if err != nil {
			return nil, err
		}
		if err := lx.decodeAll(); err != nil {
			return nil, err
		}
		return lx, nil
	}
	le := binary.LittleEndian
	if len(data) < lexHeaderSize+4 {
		return nil, corruptf(path, "too short (%d bytes)", len(data))
	}
	body := data[:len(data)-4]
	if got, stored := crc32.Checksum(body, castagnoli), le.Uint32(data[len(data)-4:]); got != stored || got != wantCRC {
		return nil, corruptf(path, "checksum mismatch (stored %08x, computed %08x, manifest %08x): the file is damaged", stored, got, wantCRC)
	}
	if string(body[:8]) != lexMagic {
		return nil, corruptf(path, "not a ctxsel lexical file (bad magic)")
	}
	if v := le.Uint32(body[8:]); v != lexVersion {
		return nil, corruptf(path, "lexical version %d, this build reads %d", v, lexVersion)
	}
	n, nterms := int(le.Uint32(body[12:])), int(le.Uint32(body[16:]))
	if n != rows {
		return nil, corruptf(path, "%d rows, its segment has %d", n, rows)
	}
	if n > len(body) || nterms > len(body) {
		return nil, corruptf(path, "counts do not fit the file")
	}
	p := body[lexHeaderSize:]
	bad := errors.New("bad encoding")
	uv := func() (uint64, error) {
		v, k := binary.Uvarint(p)
		if k <= 0 {
			return 0, bad
		}
		p = p[k:]
		return v, nil
	}
	lx := &lexSeg{size: int64(len(data)), crc: wantCRC, lens: make([]uint32, n), posts: make(map[string]postings, nterms)}
	for i := range lx.lens {
		v, err := uv()
		if err != nil || v > 1<<31 {
			return nil, corruptf(path, "row %d: bad length", i)
		}
		lx.lens[i] = uint32(v)
	}
	seen := make([]uint64, n) // per row, the sum of its terms' frequencies
	prevTerm := ""
	for ti := range nterms {
		l, err := uv()
		if err != nil || l == 0 || l > uint64(len(p)) {
			return nil, corruptf(path, "term %d: bad length", ti)
		}
		t := string(p[:l])
		p = p[l:]
		if ti > 0 && t <= prevTerm || !utf8.ValidString(t) {
			return nil, corruptf(path, "term %d: out of order or invalid UTF-8", ti)
		}
		prevTerm = t
		cnt, err := uv()
		if err != nil || cnt == 0 || cnt > uint64(n) {
			return nil, corruptf(path, "term %q: bad posting count", t)
		}
		ps := postings{rows: make([]uint32, cnt), tfs: make([]uint32, cnt)}
		row := uint64(0)
		for i := range ps.rows {
			d, err1 := uv()
			f, err2 := uv()
			if err1 != nil || err2 != nil || (i > 0 && d == 0) || f == 0 {
				return nil, corruptf(path, "term %q: bad posting %d", t, i)
			}
			row += d
			if row >= uint64(n) || f > uint64(lx.lens[row]) {
				return nil, corruptf(path, "term %q: posting %d outside the rows or longer than its row", t, i)
			}
			seen[row] += f
			ps.rows[i], ps.tfs[i] = uint32(row), uint32(f)
		}
		lx.posts[t] = ps
	}
	if len(p) != 0 {
		return nil, corruptf(path, "%d bytes after the last term", len(p))
	}
	for r, l := range lx.lens {
		if seen[r] != uint64(l) {
			return nil, corruptf(path, "row %d: %d terms recorded, postings hold %d", r, l, seen[r])
		}
		lx.total += int64(l)
	}
	return lx, nil
}

// alignedCopy copies b into 8-aligned memory.
func alignedCopy(b []byte) []byte {
	words := make([]uint64, (len(b)+7)/8)
	out := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)[:len(b):len(b)]
	copy(out, b)
	return out
}
