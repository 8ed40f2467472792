package index

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Damage is one damaged file of an embedded index.
type Damage struct {
	// File is the file's name in the index directory, Segment the segment
	// it belongs to (the same name for a segment file itself).
	File    string `json:"file"`
	Segment string `json:"segment,omitempty"`
	Reason  string `json:"reason"`
	// Docs are the live documents whose chunks the file holds: what
	// Repair drops and what needs adding again.
	Docs []DocInfo `json:"docs,omitempty"`
}

// CheckReport is what Check found.
type CheckReport struct {
	// Full is true for a full checksum scan, false for the cheap check
	// (sizes, headers and checksum trailers only).
	Full bool `json:"full"`
	// Files and Bytes count the files checked.
	Files int   `json:"files"`
	Bytes int64 `json:"bytes"`
	// Damage is empty for a sound index.
	Damage []Damage `json:"damage,omitempty"`
}

// OK reports whether no damage was found.
func (r CheckReport) OK() bool { return len(r.Damage) == 0 }

// Err is nil for a sound index, else an error wrapping ErrCorrupt that
// names the damaged files.
func (r CheckReport) Err(path string) error {
	if r.OK() {
		return nil
	}
	var parts []string
	for _, d := range r.Damage {
		parts = append(parts, d.File+": "+d.Reason)
	}
	return fmt.Errorf("%w: %s: %d damaged files (%s); run: ctxsel index repair --index %s",
		ErrCorrupt, path, len(r.Damage), strings.Join(parts, "; "), path)
}

// listedFile is a file the manifest lists, with the segment whose
// documents it serves: damage to it takes that segment's documents.
type listedFile struct {
	Name    string
	Size    int64
	CRC     uint32
	Segment string
	Rows    int // the segment's chunks, which a lexical file must hold
}

// listedFiles is every segment file the manifest lists, whatever its kind.
// Every kind follows one convention, checked generically: the file's size
// and CRC-32C are recorded in the manifest, and its last 4 bytes hold the
// CRC-32C (little-endian) of everything before them.
//
// A new kind of file per segment (the lexical postings were the first, the
// chunks' sentence vectors the second) is added here and in
// segFileSuffixes, with its size and checksum fields in segInfo: it is then
// written and fsynced before the manifest that names it (Dir.newSegment),
// checked by verify, dropped with its segment by repair, and deleted by
// garbage collection once no manifest names it, like the others.
// segFileSuffixes are the name suffixes of every kind of segment file.
var segFileSuffixes = []string{segSuffix, lexSuffix, sntSuffix}

func listedFiles(m *manifest) []listedFile {
	out := make([]listedFile, 0, len(m.Segments))
	for _, s := range m.Segments {
		out = append(out, listedFile{Name: s.Name, Size: s.Size, CRC: s.CRC, Segment: s.Name})
		if s.LexSize != 0 { // the segment's BM25 postings, committed with it
			out = append(out, listedFile{Name: lexName(s.Name), Size: s.LexSize, CRC: s.LexCRC, Segment: s.Name, Rows: s.Chunks})
		}
		if s.SntSize != 0 { // the segment's sentence vectors, committed with it
			out = append(out, listedFile{Name: sntName(s.Name), Size: s.SntSize, CRC: s.SntCRC, Segment: s.Name, Rows: s.Chunks})
		}
	}
	return out
}

// Check examines the index's files without taking the writer lock. The
// cheap check (full false) compares each segment file's size and checksum
// trailer with the manifest and checks its header, reading a few bytes per
// file; the full check reads every byte and verifies checksums and
// structure. A damaged
// MANIFEST is reported as damage (its documents are then unknown). The
// error is for failures to check, not for damage.
func (d *Dir) Check(ctx context.Context, full bool) (CheckReport, error) {
	rep := CheckReport{Full: full}
	m, st, err := readManifest(d.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return rep, nil // nothing indexed yet
	case errors.Is(err, ErrCorrupt):
		rep.Damage = append(rep.Damage, Damage{File: manifestName, Reason: strings.TrimPrefix(err.Error(), ErrCorrupt.Error()+": ")})
		return rep, nil
	case err != nil:
		return rep, fmt.Errorf("index %s: %w", d.path, err)
	}
	rep.Files, rep.Bytes = 1, st.Size()
	docsOf := map[string][]DocInfo{}
	for _, e := range m.Docs {
		if e.Segment != "" {
			docsOf[e.Segment] = append(docsOf[e.Segment], e.DocInfo)
		}
	}
	for _, s := range listedFiles(m) {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		rep.Files++
		rep.Bytes += s.Size
		if err := d.checkFile(s, full); err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, fs.ErrNotExist) {
				return rep, err
			}
			reason := strings.TrimPrefix(err.Error(), ErrCorrupt.Error()+": ")
			reason = strings.TrimPrefix(reason, filepath.Join(d.path, s.Name)+": ")
			if errors.Is(err, fs.ErrNotExist) {
				reason = "missing"
			}
			docs := slices.Clone(docsOf[s.Segment])
			slices.SortFunc(docs, func(a, b DocInfo) int { return strings.Compare(a.ID, b.ID) })
			rep.Damage = append(rep.Damage, Damage{File: s.Name, Segment: s.Segment, Reason: reason, Docs: docs})
		}
	}
	return rep, nil
}

// checkFile checks one listed file: size, trailer and header, and with full every
// byte's checksum and (for vector segments) the structure readers rely on.
func (d *Dir) checkFile(s listedFile, full bool) error {
	path := filepath.Join(d.path, s.Name)
	if full && strings.HasSuffix(s.Name, segSuffix) {
		_, err := readSegment(path, s.Name, s.Size, s.CRC)
		return err
	}
	if full && strings.HasSuffix(s.Name, sntSuffix) {
		_, err := readSentences(path, s.Size, s.CRC, s.Rows)
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("check %s: %w", path, err)
	}
	if st.Size() != s.Size {
		return corruptf(path, "size %d bytes, the manifest recorded %d (truncated or overwritten)", st.Size(), s.Size)
	}
	if s.Size < 4 {
		return corruptf(path, "too short (%d bytes)", s.Size)
	}
	var tr [4]byte
	if _, err := f.ReadAt(tr[:], s.Size-4); err != nil {
		return fmt.Errorf("check %s: %w", path, err)
	}
	if got := binary.LittleEndian.Uint32(tr[:]); got != s.CRC {
		return corruptf(path, "checksum trailer %08x, the manifest recorded %08x: the file is damaged", got, s.CRC)
	}
	if !full {
		// Every kind of segment file has its header checked, as stats and
		// ls promise: a trailer matching the manifest says nothing of the
		// bytes before it.
		switch {
		case strings.HasSuffix(s.Name, segSuffix):
			return checkSegmentHeader(f, path, s.Size)
		case strings.HasSuffix(s.Name, lexSuffix):
			return checkLexHeader(f, path, s.Size, s.Rows)
		case strings.HasSuffix(s.Name, sntSuffix):
			var h [sntHeaderSize]byte
			if _, err := f.ReadAt(h[:], 0); err != nil {
				return corruptf(path, "too short (%d bytes)", s.Size)
			}
			_, err := parseSntHeader(path, h[:], s.Size, s.Rows)
			return err
		}
		return nil
	}
	h := crc32.New(castagnoli)
	if _, err := io.Copy(h, bufio.NewReaderSize(io.NewSectionReader(f, 0, s.Size-4), 1<<20)); err != nil {
		return fmt.Errorf("check %s: %w", path, err)
	}
	if got := h.Sum32(); got != s.CRC {
		return corruptf(path, "checksum mismatch (computed %08x, manifest %08x): the file is damaged", got, s.CRC)
	}
	return nil
}

// RepairReport says what Repair did.
type RepairReport struct {
	// Dropped lists the damaged files whose segments were removed from the
	// index, with the documents they held.
	Dropped []Damage `json:"dropped,omitempty"`
	// Docs counts the documents dropped; add their sources again.
	Docs int `json:"docs"`
}

// Repair makes a damaged index consistent: under the writer lock it runs
// the full check and drops every segment with a damaged file, with the
// documents whose chunks it held, then publishes the manifest. The documents dropped
// are listed so they can be added again. A damaged MANIFEST cannot be
// repaired (it alone says what the index holds): Repair then returns an
// error wrapping ErrCorrupt.
func (d *Dir) Repair(ctx context.Context) (RepairReport, error) {
	var rep RepairReport
	release, err := d.lock(ctx)
	if err != nil {
		return rep, err
	}
	defer release()
	m, st, err := d.manifestNow()
	if err != nil {
		if errors.Is(err, ErrCorrupt) {
			return rep, fmt.Errorf("%w; the manifest alone says what the index holds, so it cannot be repaired: move %s away and add the files again", err, d.path)
		}
		return rep, err
	}
	if st == nil {
		return rep, nil
	}
	chk, err := d.Check(ctx, true)
	if err != nil {
		return rep, err
	}
	if chk.OK() {
		return rep, nil
	}
	bad := map[string]bool{}
	for _, dm := range chk.Damage {
		if dm.File == manifestName {
			// replaced by a writer since we read it: the caller retries
			return rep, fmt.Errorf("index %s: the manifest changed during repair; run repair again", d.path)
		}
		rep.Dropped = append(rep.Dropped, dm)
		if !bad[dm.Segment] {
			rep.Docs += len(dm.Docs) // once per segment, however many of its files are damaged
		}
		bad[dm.Segment] = true
	}
	m.Docs = slices.DeleteFunc(m.Docs, func(e docEntry) bool { return bad[e.Segment] })
	m.Segments = slices.DeleteFunc(m.Segments, func(s segInfo) bool { return bad[s.Name] })
	// publish without compaction: it would read the segments again
	if len(m.Docs) == 0 {
		m.Config = Config{}
	}
	m.Generation++
	if err := writeManifest(d.path, m); err != nil {
		return rep, fmt.Errorf("index %s: %w", d.path, err)
	}
	d.collectGarbage(m)
	d.mu.Lock()
	for name := range bad {
		delete(d.loaded, name)
	}
	d.mu.Unlock()
	return rep, nil
}

// checkSegmentHeader is the cheap check of a vector segment's header: magic,
// version, format and block offsets that end where the file does.
// checkLexHeader checks a lexical file's header: magic, version, and a row
// count that is its segment's and, with the term count, fits the file.
func checkLexHeader(f *os.File, path string, size int64, rows int) error {
	if size < lexHeaderSize+4 {
		return corruptf(path, "too short (%d bytes)", size)
	}
	var h [lexHeaderSize2]byte
	n, err := f.ReadAt(h[:], 0)
	if err != nil && n < lexHeaderSize {
		return fmt.Errorf("check %s: %w", path, err)
	}
	le := binary.LittleEndian
	switch {
	case string(h[:8]) == lexMagic2 && le.Uint32(h[8:]) == lexVersion2:
		// Version 2 (lexfile.go): the header names every block's offset;
		// they must be the layout its counts give and end where the file does.
		if n < lexHeaderSize2 {
			return corruptf(path, "too short (%d bytes)", size)
		}
		l := lexLayout{rows: int64(le.Uint32(h[12:])), terms: int64(le.Uint32(h[16:])),
			termBytesLen: int64(le.Uint64(h[64:])), postBytesLen: int64(le.Uint64(h[72:]))}
		if l.rows != int64(rows) || l.terms > size || l.termBytesLen < 0 || l.termBytesLen > size || l.postBytesLen < 0 || l.postBytesLen > size {
			return corruptf(path, "bad header (%d rows for a segment of %d, %d terms in %d bytes)", l.rows, rows, l.terms, size)
		}
		l.layout()
		if l.size != size || [4]int64{int64(le.Uint64(h[32:])), int64(le.Uint64(h[40:])), int64(le.Uint64(h[48:])), int64(le.Uint64(h[56:]))} != [4]int64{l.lens, l.dfs, l.termOffs, l.postOffs} {
			return corruptf(path, "header block offsets do not fit the file")
		}
		return nil
	case string(h[:8]) != lexMagic || le.Uint32(h[8:]) != lexVersion:
		return corruptf(path, "bad header (magic or version)")
	}
	if n, terms := int64(le.Uint32(h[12:])), int64(le.Uint32(h[16:])); n != int64(rows) || n > size || terms > size {
		return corruptf(path, "bad header (%d rows for a segment of %d, %d terms in %d bytes)", n, rows, terms, size)
	}
	return nil
}

func checkSegmentHeader(f *os.File, path string, size int64) error {
	if size < segHeaderSize+4 {
		return corruptf(path, "too short (%d bytes)", size)
	}
	var h [segHeaderSize2]byte
	n, err := f.ReadAt(h[:], 0)
	if err != nil && n < segHeaderSize {
		return fmt.Errorf("check %s: %w", path, err)
	}
	if string(h[:8]) == segMagic2 {
		if n < segHeaderSize2 {
			return corruptf(path, "too short (%d bytes)", size)
		}
		_, err := parseHeader2(path, h[:], size)
		return err
	}
	le := binary.LittleEndian
	if string(h[:8]) != segMagic || le.Uint32(h[8:]) != segVersion || Format(le.Uint32(h[12:])).elemSize() == 0 {
		return corruptf(path, "bad header (magic, version or format)")
	}
	if metaOff, metaLen := le.Uint64(h[48:]), le.Uint64(h[56:]); metaOff > uint64(size) || metaLen > uint64(size) || int64(metaOff+metaLen)+4 != size {
		return corruptf(path, "header block offsets do not fit the file")
	}
	return nil
}
