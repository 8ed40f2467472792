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
//   - Every Append is one write(2), followed by fsync unless
//     Options.SyncEvery spaces the fsyncs out (a crash then loses at most
//     the records since the last one; a new file and its directory entry
//     are always synced).
//
// The magic numbers and the unit of a record's length are a Format:
// recordlog's own by default; a file format of the same layout that
// predates this package (embed/cache's) names its own, so its files are
// read and written as they are.
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

	"github.com/ctxsel/ctxsel/internal/atomicfile"
	"github.com/ctxsel/ctxsel/internal/flock"
)

const (
	fileMagic   = "ctxselRL"
	recMagic    = 0x5E1EC7ED
	recHeadSize = 4 + KeySize + 4
	crcSize     = 4
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

// Format is a log file's magic numbers: the header's magic string, each
// record's magic, and how many payload bytes one unit of a record's length
// field counts. The zero Format is recordlog's own ("ctxselRL",
// 0x5E1EC7ED, bytes).
type Format struct {
	Magic       string
	RecordMagic uint32
	LenUnit     int
}

func (f Format) resolved() Format {
	if f.Magic == "" {
		f.Magic = fileMagic
	}
	if f.RecordMagic == 0 {
		f.RecordMagic = recMagic
	}
	if f.LenUnit <= 0 {
		f.LenUnit = 1
	}
	return f
}

// headFixed is the header's length before the id.
func (f Format) headFixed() int { return len(f.Magic) + 4 }

// Options tune a Log.
type Options struct {
	// Format is the file's magic numbers (zero: recordlog's own).
	Format Format
	// LockPath is the file flocked around every read of new bytes, repair
	// and append (default "<path>.lock"). Several logs may share one.
	LockPath string
	// SyncEvery spaces out the fsyncs after appends: 0 or 1 fsyncs every
	// Append, n > 1 once n records are unsynced, < 0 only on Sync and
	// Close.
	SyncEvery int
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

	mu       sync.Mutex
	f        *os.File
	end      int64 // bytes known intact and delivered; -1: read from the start
	unsynced int   // records appended since the last fsync
	broken   error // a failed append that could not be rolled back
	stats    Stats
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
	opts = opts.resolved(path)
	if add == nil {
		add = func(Record) {}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("recordlog: %w", err)
	}
	lf, err := os.OpenFile(opts.LockPath, os.O_RDWR|os.O_CREATE, 0o644)
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

func (o Options) resolved(path string) Options {
	if o.MaxPayload <= 0 {
		o.MaxPayload = DefaultMaxPayload
	}
	if o.Note == nil {
		o.Note = func(msg string) { slog.Warn(msg) }
	}
	if o.LockPath == "" {
		o.LockPath = path + ".lock"
	}
	o.Format = o.Format.resolved()
	return o
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
	if l.broken != nil {
		return 0, l.broken
	}
	unit := l.opts.Format.LenUnit
	for _, r := range recs {
		if len(r.Payload) > l.opts.MaxPayload {
			return 0, fmt.Errorf("recordlog: payload of %d bytes exceeds %d", len(r.Payload), l.opts.MaxPayload)
		}
		if len(r.Payload)%unit != 0 {
			return 0, fmt.Errorf("recordlog: payload of %d bytes is not a whole number of %d-byte units", len(r.Payload), unit)
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
			buf = l.opts.Format.appendRecord(buf, r)
			out = append(out, r)
		}
		if len(out) == 0 {
			return nil
		}
		created := l.end == 0
		if created {
			buf = append(l.opts.Format.encodeHeader(l.id), buf...)
		}
		if _, err := l.f.Write(buf); err != nil {
			// Roll back a partial append so nothing follows damage.
			if terr := l.f.Truncate(max(l.end, 0)); terr != nil {
				l.broken = fmt.Errorf("recordlog: %s: an append failed and could not be rolled back (%v): %w", l.path, terr, err)
			}
			return fmt.Errorf("recordlog: appending to %s: %w", l.path, err)
		}
		l.end += int64(len(buf))
		l.unsynced += len(out)
		if every := l.opts.SyncEvery; created || every <= 1 && every >= 0 || every > 1 && l.unsynced >= every {
			if err := l.sync(); err != nil {
				return err
			}
		}
		if created {
			// best effort: the entry is only lost with the records since
			_ = atomicfile.SyncDir(filepath.Dir(l.path))
		}
		for _, r := range out {
			l.add(r)
		}
		l.stats.Records += len(out)
		written = len(out)
		return nil
	})
	return written, err
}

// Sync fsyncs the records appended since the last fsync.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lockf == nil {
		return ErrClosed
	}
	return l.sync()
}

func (l *Log) sync() error {
	if l.f == nil || l.unsynced == 0 && l.end != 0 {
		return nil
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("recordlog: fsync %s: %w", l.path, err)
	}
	l.unsynced = 0
	return nil
}

// Close fsyncs what is unsynced and releases the files.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.lockf == nil {
		return nil
	}
	err := l.sync()
	l.closeFile()
	if cerr := l.lockf.Close(); err == nil {
		err = cerr
	}
	l.lockf = nil
	return err
}

func (l *Log) closeFile() {
	if l.f != nil {
		if l.unsynced > 0 {
			_ = l.f.Sync() // a file being replaced: what it holds is read again
		}
		l.f.Close()
		l.f = nil
	}
	l.end, l.unsynced = -1, 0
}

func (l *Log) locked(fn func() error) error { return withLock(l.lockf, fn) }

// withLock runs fn holding the flock on lockf.
func withLock(lockf *os.File, fn func() error) error {
	if err := flock.Lock(lockf); err != nil {
		return fmt.Errorf("recordlog: locking %s: %w", lockf.Name(), err)
	}
	err := fn()
	if uerr := flock.Unlock(lockf); uerr != nil && err == nil {
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
	if size == 0 {
		l.end = 0 // a new file: the next append writes the header
		return nil
	}
	sc := l.scanner()
	start := l.end
	if start < 0 || size < start {
		hs, id, herr := sc.header(size)
		if herr == nil && id != l.id {
			herr = errID
		}
		if herr != nil {
			if !formatError(herr) {
				return fmt.Errorf("recordlog: %s: %w", l.path, herr)
			}
			want := l.opts.Format.encodeHeader(l.id)
			torn, reason, err := headerDamage(l.f, l.path, size, []scanner{sc}, herr, func(b []byte) bool { return bytes.HasPrefix(want, b) })
			if err != nil {
				return err
			}
			if !torn {
				return l.corrupt(&CorruptError{Path: l.path, Offset: 0, Reason: reason})
			}
			return l.truncate(0, size) // a torn header: no record yet
		}
		start = hs
	}
	end, damage, err := sc.scan(start, size, l.deliver)
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

func (l *Log) scanner() scanner {
	return scanner{r: l.f, path: l.path, f: l.opts.Format, max: l.opts.MaxPayload, valid: l.opts.Valid}
}

// headerDamage says what a file whose header does not decode (herr) is:
// torn — its bytes could start a header (isStart) and no intact record
// of any scanner's format follows, all an interrupted first append leaves
// — or damaged, with the reason. A header naming another id is damage.
func headerDamage(r io.ReaderAt, path string, size int64, scs []scanner, herr error, isStart func([]byte) bool) (torn bool, reason string, err error) {
	for _, sc := range scs {
		p, found, err := sc.findRecord(0, size)
		if err != nil {
			return false, "", fmt.Errorf("recordlog: reading %s: %w", path, err)
		}
		if found || errors.Is(herr, errID) {
			return false, fmt.Sprintf("bad header: %v (record at %d)", herr, p), nil
		}
	}
	b := make([]byte, min(size, 1<<16))
	if _, err := r.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return false, "", fmt.Errorf("recordlog: reading %s: %w", path, err)
	}
	if int64(len(b)) == size && isStart(b) {
		return true, "", nil
	}
	return false, fmt.Sprintf("not a record log of its kind (bad header: %v, no intact record)", herr), nil
}

// truncate cuts the file at end. What is cut is first copied aside and
// the cut noted: a crash leaves a torn tail, but so may damage to the last
// record, and neither is dropped unseen.
func (l *Log) truncate(end, size int64) error {
	q, err := keepTail(l.f, l.path, end, size)
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
	l.opts.Note(cutNote(l.path, size-end, q))
	return nil
}

func cutNote(path string, n int64, copyPath string) string {
	return fmt.Sprintf("file %s ended in %d bytes that are not an intact record (an interrupted write, or damage); cut them away, a copy is in %s",
		path, n, filepath.Base(copyPath))
}

// keepTail copies bytes [end, size) of f to "<path>.cut-<unixnano>" and
// returns that name: what a file about to be truncated at end would lose.
func keepTail(f io.ReaderAt, path string, end, size int64) (string, error) {
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
	sc := l.scanner()
	var buf []byte
	if hs, id, herr := sc.header(fi.Size()); herr == nil && id == l.id {
		if _, _, err := sc.scan(hs, fi.Size(), func(r Record) { buf = l.opts.Format.appendRecord(buf, r) }); err != nil {
			return err
		}
	}
	l.closeFile()
	q, err := moveAside(l.path)
	if err != nil {
		return err
	}
	l.stats.Quarantined = append(l.stats.Quarantined, q)
	data := append(l.opts.Format.encodeHeader(l.id), buf...)
	if err := atomicfile.Write(l.path, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		return fmt.Errorf("recordlog: rebuilding %s: %w", l.path, err)
	}
	l.opts.Note(fmt.Sprintf("file %s was damaged (%s); moved aside to %s and rebuilt from its intact records", l.path, ce.Reason, filepath.Base(q)))
	f, err := os.OpenFile(l.path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("recordlog: %w", err)
	}
	l.f, l.end = f, int64(len(data))
	return nil
}

// moveAside renames path to "<path>.corrupt-<unixnano>" durably and
// returns the new name.
func moveAside(path string) (string, error) {
	q := fmt.Sprintf("%s.corrupt-%d", path, time.Now().UnixNano())
	if err := os.Rename(path, q); err != nil {
		return "", fmt.Errorf("recordlog: quarantining %s: %w", path, err)
	}
	_ = atomicfile.SyncDir(filepath.Dir(path)) // best effort: the damage is found again otherwise
	return q, nil
}

// Identity is what a log file's header says: the index of its format in
// the formats Identify was given, and the id it names.
type Identity struct {
	Format int
	ID     string
}

// Identify reads the header of the log file at path, which may be in any
// of formats, holding the lock opts.LockPath names (default
// "<path>.lock"): for a directory of logs whose ids are found in their
// files. A file whose header does not decode is dealt with as Open deals
// with it, except that nothing can be rebuilt, its id being unknown: a
// torn header (the start of one, no intact record) is cut away, anything
// else moved aside whole to "<path>.corrupt-<unixnano>" (with
// opts.FailOnCorrupt, a *CorruptError instead), with a note; the identity
// is then nil and st says what was done. A missing or empty file is a nil
// identity with nothing done.
func Identify(path string, formats []Format, opts Options) (id *Identity, st Stats, err error) {
	opts = opts.resolved(path)
	lf, err := os.OpenFile(opts.LockPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, st, fmt.Errorf("recordlog: %w", err)
	}
	defer lf.Close()
	err = withLock(lf, func() error {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("recordlog: %w", err)
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return fmt.Errorf("recordlog: %w", err)
		}
		size := fi.Size()
		if size == 0 {
			return nil
		}
		scs := make([]scanner, len(formats))
		var herr error
		for i, fm := range formats {
			scs[i] = scanner{r: f, path: path, f: fm.resolved(), max: opts.MaxPayload, valid: opts.Valid}
			_, name, err := scs[i].header(size)
			if err == nil {
				id = &Identity{Format: i, ID: name}
				return nil
			}
			if !formatError(err) {
				return fmt.Errorf("recordlog: %s: %w", path, err)
			}
			if herr == nil || !errors.Is(err, errMagic) {
				herr = err // the most telling: a format whose magic matched
			}
		}
		if herr == nil {
			return fmt.Errorf("recordlog: %s: no format to read it in", path)
		}
		torn, reason, err := headerDamage(f, path, size, scs, herr, func(b []byte) bool {
			for _, sc := range scs {
				if m := sc.f.Magic; bytes.HasPrefix(b, []byte(m)) || bytes.HasPrefix([]byte(m), b) {
					return true
				}
			}
			return false
		})
		if err != nil {
			return err
		}
		if torn {
			q, err := keepTail(f, path, 0, size)
			if err != nil {
				return fmt.Errorf("recordlog: keeping the torn header of %s: %w", path, err)
			}
			if err := f.Truncate(0); err != nil {
				return fmt.Errorf("recordlog: dropping the torn header of %s: %w", path, err)
			}
			st.RecoveredBytes, st.Quarantined = size, []string{q}
			opts.Note(cutNote(path, size, q))
			return nil
		}
		st, err = setAside(path, reason, opts)
		return err
	})
	return id, st, err
}

// Quarantine moves the log file at path aside whole, for the reason given
// (a header naming what does not belong under its name), as Identify does
// with a damaged file: renamed to "<path>.corrupt-<unixnano>" with a note,
// or with opts.FailOnCorrupt a *CorruptError.
func Quarantine(path, reason string, opts Options) (Stats, error) {
	opts = opts.resolved(path)
	lf, err := os.OpenFile(opts.LockPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return Stats{}, fmt.Errorf("recordlog: %w", err)
	}
	defer lf.Close()
	var st Stats
	err = withLock(lf, func() error {
		st, err = setAside(path, reason, opts)
		return err
	})
	return st, err
}

func setAside(path, reason string, opts Options) (Stats, error) {
	if opts.FailOnCorrupt {
		return Stats{}, fmt.Errorf("recordlog: %w", &CorruptError{Path: path, Offset: 0, Reason: reason})
	}
	q, err := moveAside(path)
	if err != nil {
		return Stats{}, err
	}
	opts.Note(fmt.Sprintf("file %s was damaged (%s); moved aside to %s", path, reason, filepath.Base(q)))
	return Stats{Quarantined: []string{q}}, nil
}

// scanner reads the header and records of one format from r.
type scanner struct {
	r     io.ReaderAt
	path  string
	f     Format // resolved
	max   int
	valid func([]byte) bool
}

// scan decodes records in [start, size), calling fn for each intact one
// (its payload valid during the call only). end is where a torn tail
// begins (size if none); damage is the first bad span followed by an
// intact record, whose records after it are still delivered. The file is
// read sequentially through a buffer: a cache of a few hundred megabytes
// is loaded at every start.
func (sc scanner) scan(start, size int64, fn func(Record)) (end int64, damage *CorruptError, err error) {
	br := newSectionBuffer(sc.r, start, size)
	off := start
	for off < size {
		r, n, derr := sc.nextRecord(br, size-off)
		if derr == nil {
			fn(r)
			br.skip(n)
			off += int64(n)
			continue
		}
		if !formatError(derr) {
			return off, nil, fmt.Errorf("recordlog: reading %s at %d: %w", sc.path, off, derr)
		}
		p, found, ferr := sc.findRecord(off+1, size)
		if ferr != nil {
			return off, nil, fmt.Errorf("recordlog: reading %s: %w", sc.path, ferr)
		}
		if !found {
			return off, damage, nil
		}
		if damage == nil {
			damage = &CorruptError{Path: sc.path, Offset: off, Reason: fmt.Sprintf("%v at offset %d, intact record at %d", derr, off, p)}
		}
		off = p
		br.seek(p)
	}
	return off, damage, nil
}

// nextRecord decodes the record at br's position, left bytes before the
// end of the section.
func (sc scanner) nextRecord(br *sectionBuffer, left int64) (Record, int, error) {
	if left < recHeadSize {
		return Record{}, 0, errShort
	}
	head, err := br.peek(recHeadSize)
	if err != nil {
		return Record{}, 0, err
	}
	n, err := sc.recordLen(head, left)
	if err != nil {
		return Record{}, 0, err
	}
	b, err := br.peek(n)
	if err != nil {
		return Record{}, 0, err
	}
	return sc.decode(b, n)
}

// recordLen checks a record's head and returns its whole length, which
// must fit in left bytes.
func (sc scanner) recordLen(head []byte, left int64) (int, error) {
	if binary.LittleEndian.Uint32(head) != sc.f.RecordMagic {
		return 0, errMagic
	}
	plen := int64(binary.LittleEndian.Uint32(head[4+KeySize:])) * int64(sc.f.LenUnit)
	if plen > int64(sc.max) {
		return 0, errLen
	}
	n := recHeadSize + plen + crcSize
	if n > left {
		return 0, errShort
	}
	return int(n), nil
}

func (sc scanner) decode(b []byte, n int) (Record, int, error) {
	r, err := decodeRecord(b)
	if err == nil && sc.valid != nil && !sc.valid(r.Payload) {
		err = errCRC
	}
	return r, n, err
}

func (sc scanner) readRecord(off, size int64) (Record, int, error) {
	if size-off < recHeadSize {
		return Record{}, 0, errShort
	}
	head := make([]byte, recHeadSize)
	if _, err := sc.r.ReadAt(head, off); err != nil {
		return Record{}, 0, err
	}
	n, err := sc.recordLen(head, size-off)
	if err != nil {
		return Record{}, 0, err
	}
	b := make([]byte, n)
	if _, err := sc.r.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return Record{}, 0, err
	}
	return sc.decode(b, n)
}

// findRecord returns the offset of the first intact record starting in
// [from, size), reading the file in chunks.
func (sc scanner) findRecord(from, size int64) (int64, bool, error) {
	const chunk = 1 << 20
	var magic [4]byte
	binary.LittleEndian.PutUint32(magic[:], sc.f.RecordMagic)
	buf := make([]byte, max(0, min(int64(chunk+len(magic)-1), size-from)))
	for pos := from; pos < size; pos += chunk {
		n := int(min(int64(len(buf)), size-pos))
		if _, err := sc.r.ReadAt(buf[:n], pos); err != nil && !errors.Is(err, io.EOF) {
			return 0, false, err
		}
		for i := 0; i < n; {
			j := bytes.Index(buf[i:n], magic[:])
			if j < 0 {
				break
			}
			p := pos + int64(i+j)
			if _, _, err := sc.readRecord(p, size); err == nil {
				return p, true, nil
			} else if !formatError(err) {
				return 0, false, err
			}
			i += j + 1
		}
	}
	return 0, false, nil
}

// header decodes the file's header: its length and the id it names.
func (sc scanner) header(size int64) (int64, string, error) {
	fixed := sc.f.headFixed()
	if size < int64(fixed) {
		return 0, "", errShort
	}
	head := make([]byte, fixed)
	if _, err := sc.r.ReadAt(head, 0); err != nil {
		return 0, "", err
	}
	if string(head[:len(sc.f.Magic)]) != sc.f.Magic {
		return 0, "", errMagic
	}
	n := binary.LittleEndian.Uint32(head[len(sc.f.Magic):])
	if n > maxIDLen {
		return 0, "", errLen
	}
	hs := int64(fixed) + int64(n) + crcSize
	if hs > size {
		return 0, "", errShort
	}
	b := make([]byte, hs)
	if _, err := sc.r.ReadAt(b, 0); err != nil {
		return 0, "", err
	}
	if crc32.Checksum(b[:hs-crcSize], castagnoli) != binary.LittleEndian.Uint32(b[hs-crcSize:]) {
		return 0, "", errCRC
	}
	return hs, string(b[fixed : hs-crcSize]), nil
}

func (f Format) encodeHeader(id string) []byte {
	b := append([]byte(f.Magic), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(b[len(f.Magic):], uint32(len(id)))
	b = append(b, id...)
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// appendRecord encodes r (its payload a whole number of units).
func (f Format) appendRecord(dst []byte, r Record) []byte {
	start := len(dst)
	dst = binary.LittleEndian.AppendUint32(dst, f.RecordMagic)
	dst = append(dst, r.Key[:]...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(r.Payload)/f.LenUnit))
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

// sectionBuffer reads [off, size) of r sequentially through a buffer.
type sectionBuffer struct {
	r         io.ReaderAt
	off, size int64 // the next byte to read into buf, the section's end
	buf       []byte
	lo, hi    int // buf[lo:hi] holds bytes not yet consumed
}

func newSectionBuffer(r io.ReaderAt, off, size int64) *sectionBuffer {
	return &sectionBuffer{r: r, off: off, size: size, buf: make([]byte, max(0, min(1<<20, size-off)))}
}

// peek returns the next n bytes without consuming them (errShort when the
// section ends first); they are valid until the buffer next moves.
func (s *sectionBuffer) peek(n int) ([]byte, error) {
	if s.hi-s.lo < n {
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
				return nil, err
			}
			if m == 0 {
				break
			}
		}
		if s.hi-s.lo < n {
			return nil, errShort
		}
	}
	return s.buf[s.lo : s.lo+n], nil
}

func (s *sectionBuffer) skip(n int) { s.lo += n }

// seek moves to offset p of the file (at or after the current position's
// section start).
func (s *sectionBuffer) seek(p int64) { s.off, s.lo, s.hi = p, 0, 0 }
