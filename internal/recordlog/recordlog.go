// Package recordlog is a checksummed, append-only file of keyed records
// shared by several processes: the storage under ctxsel's on-disk caches.
//
//	file   = header record*
//	header = "ctxselRL" idLen:u32 id:[idLen]byte crc:u32
//	record = magic:u32 key:[32]byte len:u32 payload:[len]byte crc:u32
//
// Integers are little-endian; each crc is CRC-32C over every preceding byte
// of its header or record; id names what the file holds (a model, an
// endpoint) and must match on open.
//
// Guarantees:
//
//   - Torn tail: bytes at the end that do not decode and are followed by no
//     intact record are what an interrupted append leaves (or damage that
//     looks like it); they are truncated away (counted in
//     Stats.RecoveredBytes), after a copy of them is kept in
//     "<path>.cut-<unixnano>" and Options.Note is told, once.
//   - A file whose start is not this log's header, with no intact record
//     in it (garbage written over it), is not a torn write: it is moved
//     aside like damage in the middle, not truncated to nothing.
//   - Damage in the middle (a bad record followed by an intact one) cannot
//     come from a crash. By default the file is renamed aside to
//     "<path>.corrupt-<unixnano>", rebuilt from every intact record in it,
//     and Options.Note is told; with Options.FailOnCorrupt it is a
//     *CorruptError instead.
//   - Several processes: every read of new bytes, truncation and append runs
//     under an exclusive flock(2) on "<path>.lock". Before appending, a Log
//     reads what others appended since it last looked, and Append skips the
//     records whose keys it now has, so concurrent writers of the same
//     results do not duplicate them.
//   - Every Append is one write(2) followed by fsync.
package recordlog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

const (
	fileMagic   = "ctxselRL"
	recMagic    = 0x5E1EC7ED
	recHeadSize = 4 + KeySize + 4
	crcSize     = 4
	hdrFixed    = len(fileMagic) + 4
	maxIDLen    = 1 << 16

	// DefaultMaxPayload bounds a record's payload when Options.MaxPayload is 0.
	DefaultMaxPayload = 64 << 20
)

// KeySize is the length of a record key (a SHA-256 digest, typically).
const KeySize = 32

// Key identifies a record.
type Key [KeySize]byte

// Record is one keyed payload.
type Record struct {
	Key     Key
	Payload []byte
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is matched by every *CorruptError.
var ErrCorrupt = errors.New("corrupt record log")

// ErrClosed is returned after Close.
var ErrClosed = errors.New("record log is closed")

// CorruptError reports damage in the middle of a file (Options.FailOnCorrupt).
type CorruptError struct {
	Path   string
	Offset int64
	Reason string
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("%s: corrupt at offset %d: %s", e.Path, e.Offset, e.Reason)
}

// Unwrap makes errors.Is(err, ErrCorrupt) hold.
func (e *CorruptError) Unwrap() error { return ErrCorrupt }

var (
	errShort = errors.New("truncated")
	errMagic = errors.New("bad magic")
	errLen   = errors.New("bad payload length")
	errCRC   = errors.New("checksum mismatch")
	errID    = errors.New("header names another id")
)

// Options tune a Log.
type Options struct {
	// MaxPayload bounds a payload (DefaultMaxPayload when 0); larger
	// lengths on disk count as damage.
	MaxPayload int
	// FailOnCorrupt makes damage in the middle of the file an error instead
	// of quarantining the file and rebuilding it.
	FailOnCorrupt bool
	// Note receives a one-line notice when a file is quarantined or its
	// tail cut away (default: slog.Warn).
	Note func(msg string)
	// Valid, when set, vets each decoded payload; a record it rejects counts
	// as damaged.
	Valid func(payload []byte) bool
}

// Stats describe what a Log found on disk.
type Stats struct {
	Records        int      // records read or appended by this Log (duplicates included)
	Skipped        int      // records Append skipped because their key was present
	RecoveredBytes int64    // torn-tail bytes truncated away
	Quarantined    []string // files renamed aside as corrupt, and copies of torn tails cut away
}

// Log is one record file. It is safe for concurrent use.
type Log struct {
	path, id string
	opts     Options
	add      func(Record)
	lockf    *os.File

	mu    sync.Mutex
	f     *os.File
	end   int64 // bytes known intact and delivered; -1: read from the start
	stats Stats
}

// Open opens (creating directories as needed) the log at path holding id,
// and delivers every intact record in it to add, in file order. add is
// called again, under the Log's lock, for every record other processes
// append later (seen on Refresh and before each Append); Payload must be
// copied if kept beyond the call. Keys may repeat: the last one wins.
func Open(path, id string, opts Options, add func(Record)) (*Log, error) {
	if len(id) > maxIDLen {
		return nil, fmt.Errorf("recordlog: id longer than %d bytes", maxIDLen)
	}
	if opts.MaxPayload <= 0 {
		opts.MaxPayload = DefaultMaxPayload
	}
	if opts.Note == nil {
		opts.Note = func(msg string) { slog.Warn(msg) }
	}
	if add == nil {
		add = func(Record) {}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("recordlog: %w", err)
	}
	lf, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("recordlog: %w", err)
	}
	l := &Log{path: path, id: id, opts: opts, add: add, lockf: lf, end: -1}
	if err := l.locked(func() error { return l.refresh() }); err != nil {
		l.closeFile()
		lf.Close()
		return nil, err
	}
	return l, nil
}

// Path is the log file's path.
func (l *Log) Path() string { return l.path }

// Stats returns a snapshot of l's counters.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stats
	s.Quarantined = append([]string(nil), s.Quarantined...)
	return s
}

// Refresh delivers the records other processes appended since l last looked.
func (l *Log) Refresh() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lockf == nil {
		return ErrClosed
	}
	return l.locked(l.refresh)
}

// Append writes the records whose keys has reports absent, after first
// reading what other processes appended (so has sees their keys too).
// Records are also delivered to add. It returns how many were written.
func (l *Log) Append(recs []Record, has func(Key) bool) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lockf == nil {
		return 0, ErrClosed
	}
	for _, r := range recs {
		if len(r.Payload) > l.opts.MaxPayload {
			return 0, fmt.Errorf("recordlog: payload of %d bytes exceeds %d", len(r.Payload), l.opts.MaxPayload)
		}
	}
	written := 0
	err := l.locked(func() error {
		if err := l.refresh(); err != nil {
			return err
		}
		if err := l.ensureFile(); err != nil {
			return err
		}
		var buf []byte
		var out []Record
		seen := map[Key]bool{}
		for _, r := range recs {
			if seen[r.Key] || has != nil && has(r.Key) {
				l.stats.Skipped++
				continue
			}
			seen[r.Key] = true
			buf = appendRecord(buf, r)
			out = append(out, r)
		}
		if len(out) == 0 {
			return nil
		}
		if l.end == 0 {
			buf = append(encodeHeader(l.id), buf...)
		}
		if _, err := l.f.Write(buf); err != nil {
			// Roll back a partial append so nothing follows damage.
			_ = l.f.Truncate(max(l.end, 0))
			return fmt.Errorf("recordlog: appending to %s: %w", l.path, err)
		}
		if err := l.f.Sync(); err != nil {
			return fmt.Errorf("recordlog: fsync %s: %w", l.path, err)
		}
		if l.end == 0 {
			SyncDir(filepath.Dir(l.path))
		}
		l.end += int64(len(buf))
		for _, r := range out {
			l.add(r)
		}
		l.stats.Records += len(out)
		written = len(out)
		return nil
	})
	return written, err
}

// Close releases the files.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lockf == nil {
		return nil
	}
	l.closeFile()
	err := l.lockf.Close()
	l.lockf = nil
	return err
}

func (l *Log) closeFile() {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	l.end = -1
}

func (l *Log) locked(fn func() error) error {
	if err := LockFile(l.lockf); err != nil {
		return fmt.Errorf("recordlog: locking %s: %w", l.lockf.Name(), err)
	}
	err := fn()
	if uerr := UnlockFile(l.lockf); uerr != nil && err == nil {
		err = fmt.Errorf("recordlog: unlocking: %w", uerr)
	}
	return err
}

// ensureFile opens (creating) the file for appending. Lock held.
func (l *Log) ensureFile() error {
	if l.f != nil {
		return nil
	}
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("recordlog: %w", err)
	}
	l.f, l.end = f, -1
	return l.refresh()
}

// refresh reads bytes appended since l.end, truncates a torn tail and
// quarantines a damaged file. Lock held.
func (l *Log) refresh() error {
	if l.f != nil {
		// Another process may have quarantined (renamed) the file.
		pi, perr := os.Stat(l.path)
		fi, ferr := l.f.Stat()
		if perr != nil || ferr != nil || !os.SameFile(pi, fi) {
			l.closeFile()
		}
	}
	if l.f == nil {
		f, err := os.OpenFile(l.path, os.O_RDWR|os.O_APPEND, 0)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("recordlog: %w", err)
		}
		l.f, l.end = f, -1
	}
	fi, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("recordlog: %w", err)
	}
	size := fi.Size()
	if size == l.end {
		return nil
	}
	start := l.end
	if start < 0 || size < start {
		hs, herr := l.readHeader(size)
		if herr != nil {
			if !formatError(herr) {
				return fmt.Errorf("recordlog: %s: %w", l.path, herr)
			}
			if p, found, err := l.findRecord(0, size); err != nil {
				return fmt.Errorf("recordlog: reading %s: %w", l.path, err)
			} else if found || errors.Is(herr, errID) {
				return l.corrupt(&CorruptError{Path: l.path, Offset: 0, Reason: fmt.Sprintf("bad header: %v (record at %d)", herr, p)})
			}
			if torn, err := l.tornHeader(size); err != nil {
				return err
			} else if !torn {
				return l.corrupt(&CorruptError{Path: l.path, Offset: 0, Reason: fmt.Sprintf("not a record log of its kind (bad header: %v, no intact record)", herr)})
			}
			return l.truncate(0, size) // a torn header: no record yet
		}
		start = hs
	}
	end, damage, err := l.scan(start, size, l.deliver)
	if err != nil {
		return err
	}
	if damage != nil {
		return l.corrupt(damage)
	}
	if end < size {
		return l.truncate(end, size)
	}
	l.end = end
	return nil
}

func (l *Log) deliver(r Record) {
	l.stats.Records++
	l.add(r)
}

// tornHeader reports whether the file's size bytes are the start of this
// log's header: all an interrupted first append can leave short of one.
func (l *Log) tornHeader(size int64) (bool, error) {
	want := encodeHeader(l.id)
	if size >= int64(len(want)) {
		return false, nil
	}
	b := make([]byte, size)
	if _, err := l.f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("recordlog: reading %s: %w", l.path, err)
	}
	return bytes.Equal(b, want[:size]), nil
}

// truncate cuts the file at end. What is cut is first copied aside and
// the cut noted: a crash leaves a torn tail, but so may damage to the last
// record, and neither is dropped unseen.
func (l *Log) truncate(end, size int64) error {
	q, err := KeepTail(l.f, l.path, end, size)
	if err != nil {
		return fmt.Errorf("recordlog: keeping the torn tail of %s: %w", l.path, err)
	}
	if err := l.f.Truncate(end); err != nil {
		return fmt.Errorf("recordlog: dropping torn tail of %s: %w", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("recordlog: fsync %s: %w", l.path, err)
	}
	l.stats.RecoveredBytes += size - end
	l.stats.Quarantined = append(l.stats.Quarantined, q)
	l.end = end
	l.opts.Note(fmt.Sprintf("file %s ended in %d bytes that are not an intact record (an interrupted write, or damage); cut them away, a copy is in %s",
		l.path, size-end, filepath.Base(q)))
	return nil
}

// KeepTail copies bytes [end, size) of f to "<path>.cut-<unixnano>" and
// returns that name: what a file about to be truncated at end would lose.
func KeepTail(f *os.File, path string, end, size int64) (string, error) {
	q := fmt.Sprintf("%s.cut-%d", path, time.Now().UnixNano())
	out, err := os.OpenFile(q, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	_, err = io.Copy(out, io.NewSectionReader(f, end, size-end))
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(q)
		return "", err
	}
	return q, nil
}

// corrupt fails (FailOnCorrupt), or renames the file aside and rebuilds it
// from every intact record in it. Intact records after the damage were
// delivered by scan already.
func (l *Log) corrupt(ce *CorruptError) error {
	if l.opts.FailOnCorrupt {
		l.closeFile()
		return fmt.Errorf("recordlog: %w", ce)
	}
	fi, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("recordlog: %w", err)
	}
	// With a damaged header nobody can tell what the records belong to:
	// nothing is salvaged.
	var buf []byte
	if hs, herr := l.readHeader(fi.Size()); herr == nil {
		if _, _, err := l.scan(hs, fi.Size(), func(r Record) { buf = appendRecord(buf, r) }); err != nil {
			return err
		}
	}
	q := fmt.Sprintf("%s.corrupt-%d", l.path, time.Now().UnixNano())
	if err := os.Rename(l.path, q); err != nil {
		return fmt.Errorf("recordlog: quarantining %s: %w", l.path, err)
	}
	l.closeFile()
	l.stats.Quarantined = append(l.stats.Quarantined, q)
	tmp := l.path + ".rebuild"
	data := append(encodeHeader(l.id), buf...)
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return fmt.Errorf("recordlog: rebuilding %s: %w", l.path, err)
	}
	if f, err := os.Open(tmp); err == nil {
		_ = f.Sync()
		f.Close()
	}
	if err := os.Rename(tmp, l.path); err != nil {
		return fmt.Errorf("recordlog: rebuilding %s: %w", l.path, err)
	}
	SyncDir(filepath.Dir(l.path))
	l.opts.Note(fmt.Sprintf("file %s was damaged (%s); moved aside to %s and rebuilt from its intact records", l.path, ce.Reason, filepath.Base(q)))
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("recordlog: %w", err)
	}
	l.f, l.end = f, int64(len(data))
	return nil
}

// scan decodes records in [start, size), calling fn for each intact one.
// end is where a torn tail begins (size if none); damage is the first bad
// span followed by an intact record, whose records after it are still
// delivered.
func (l *Log) scan(start, size int64, fn func(Record)) (end int64, damage *CorruptError, err error) {
	off := start
	for off < size {
		r, n, derr := l.readRecord(off, size)
		if derr == nil {
			fn(r)
			off += int64(n)
			continue
		}
		if !formatError(derr) {
			return off, nil, fmt.Errorf("recordlog: reading %s at %d: %w", l.path, off, derr)
		}
		p, found, ferr := l.findRecord(off+1, size)
		if ferr != nil {
			return off, nil, fmt.Errorf("recordlog: reading %s: %w", l.path, ferr)
		}
		if !found {
			return off, damage, nil
		}
		if damage == nil {
			damage = &CorruptError{Path: l.path, Offset: off, Reason: fmt.Sprintf("%v at offset %d, intact record at %d", derr, off, p)}
		}
		off = p
	}
	return off, damage, nil
}

func (l *Log) readRecord(off, size int64) (Record, int, error) {
	if size-off < recHeadSize {
		return Record{}, 0, errShort
	}
	head := make([]byte, recHeadSize)
	if _, err := l.f.ReadAt(head, off); err != nil {
		return Record{}, 0, err
	}
	if binary.LittleEndian.Uint32(head) != recMagic {
		return Record{}, 0, errMagic
	}
	plen := binary.LittleEndian.Uint32(head[4+KeySize:])
	if int64(plen) > int64(l.opts.MaxPayload) {
		return Record{}, 0, errLen
	}
	n := recHeadSize + int(plen) + crcSize
	if int64(n) > size-off {
		return Record{}, 0, errShort
	}
	b := make([]byte, n)
	if _, err := l.f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return Record{}, 0, err
	}
	r, err := decodeRecord(b)
	if err == nil && l.opts.Valid != nil && !l.opts.Valid(r.Payload) {
		err = errCRC
	}
	return r, n, err
}

// findRecord returns the offset of the first intact record starting in
// [from, size), reading the file in chunks.
func (l *Log) findRecord(from, size int64) (int64, bool, error) {
	const chunk = 1 << 20
	var magic [4]byte
	binary.LittleEndian.PutUint32(magic[:], recMagic)
	buf := make([]byte, max(0, min(int64(chunk+len(magic)-1), size-from)))
	for pos := from; pos < size; pos += chunk {
		n := int(min(int64(len(buf)), size-pos))
		if _, err := l.f.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, false, err
		}
		for i := 0; i < n; {
			j := bytes.Index(buf[i:n], magic[:])
			if j < 0 {
				break
			}
			p := pos + int64(i+j)
			if _, _, err := l.readRecord(p, size); err == nil {
				return p, true, nil
			} else if !formatError(err) {
				return 0, false, err
			}
			i += j + 1
		}
	}
	return 0, false, nil
}

func (l *Log) readHeader(size int64) (int64, error) {
	if size < int64(hdrFixed) {
		return 0, errShort
	}
	fixed := make([]byte, hdrFixed)
	if _, err := l.f.ReadAt(fixed, 0); err != nil {
		return 0, err
	}
	if string(fixed[:len(fileMagic)]) != fileMagic {
		return 0, errMagic
	}
	n := binary.LittleEndian.Uint32(fixed[len(fileMagic):])
	if n > maxIDLen {
		return 0, errLen
	}
	hs := int64(hdrFixed) + int64(n) + crcSize
	if hs > size {
		return 0, errShort
	}
	b := make([]byte, hs)
	if _, err := l.f.ReadAt(b, 0); err != nil {
		return 0, err
	}
	if crc32.Checksum(b[:hs-crcSize], castagnoli) != binary.LittleEndian.Uint32(b[hs-crcSize:]) {
		return 0, errCRC
	}
	if string(b[hdrFixed:hs-crcSize]) != l.id {
		return 0, errID
	}
	return hs, nil
}

func encodeHeader(id string) []byte {
	b := append([]byte(fileMagic), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[len(fileMagic):], uint32(len(id)))
	b = append(b, id...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func appendRecord(dst []byte, r Record) []byte {
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, recMagic)
	dst = append(dst, r.Key[:]...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(r.Payload)))
	dst = append(dst, r.Payload...)
	return binary.LittleEndian.AppendUint32(dst, crc32.Checksum(dst[start:], castagnoli))
}

// decodeRecord decodes a whole record (length already checked).
func decodeRecord(b []byte) (Record, error) {
	body := b[:len(b)-crcSize]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-crcSize:]) {
		return Record{}, errCRC
	}
	var r Record
	copy(r.Key[:], b[4:])
	r.Payload = body[recHeadSize:]
	return r, nil
}

func formatError(err error) bool {
	for _, e := range []error{errShort, errMagic, errLen, errCRC, errID} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// SyncDir fsyncs a directory so new or renamed entries survive a crash
// (best effort).
func SyncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
