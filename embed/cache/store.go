// Package cache keeps embedding vectors on disk so that a text is sent to a
// (slow, paid) embedding backend once per model.
//
//	s, err := cache.Open(dir)
//	...
//	defer s.Close()
//	e := cache.Wrap(backend, s) // an embed.Embedder
//
// Wrap looks each text up by (ModelID, sha256(text)), sends only the misses
// to the wrapped embedder (each distinct text once per call), stores what
// comes back and returns every vector in input order. Queries embedded via
// embed.Queries are cached apart from passages when the wrapped embedder is
// an embed.QueryEmbedder.
//
// # Storage
//
// Each (model, passage/query) pair has one append-only log file in dir,
// named by a hash of the ModelID: a header naming the model, then records
//
//	magic, sha256(text), dimension, float32 little-endian vector, CRC-32C
//
// The CRC covers the whole record. All files are read into memory at Open;
// files for models first seen later (for instance created by another process)
// are read on first use.
//
// # Crashes and corruption
//
// An append interrupted by a crash leaves a torn tail: bytes at the end of
// the file that do not decode, with no intact record after them. Open (and
// any later read of the file) truncates such a tail away and counts the
// dropped bytes in Recovered. A bad record or header followed by an intact
// record cannot come from an interrupted append; it is reported as a
// *CorruptError (errors.Is(err, ErrCorrupt)) naming the file and offset.
// By default the file is then renamed to "<name>.corrupt-<unixnano>"
// (listed in Stats().Quarantined, and reported through Options.Note) and
// rebuilt from every intact record found in it, before and after the
// damage; only the damaged records are lost, and cost a recomputation. With
// Options.FailOnCorrupt, Open fails with the *CorruptError instead. Records are checked (CRC, dimension, finite
// values) before use, so a damaged file never yields a wrong vector.
//
// # Durability
//
// Records are written with one write(2) per Wrap call. They are fsynced
// every Options.SyncEvery records (default DefaultSyncEvery), on Sync and on
// Close; a new file and its directory entry are fsynced when it is created.
// A crash can lose records written since the last fsync — never more, and
// never other records — and the loss only costs a recomputation.
//
// # Concurrency
//
// A Store is safe for concurrent use. Several processes may share a
// directory: every scan, truncation and append runs under an exclusive
// flock(2) on dir/LOCK, and before appending a process reads (and adopts)
// whatever other processes appended since it last looked, so records never
// interleave and a torn tail left by a crashed process is cut before anyone
// appends after it. Records another process appended meanwhile are not
// written again. Each process still only sees other processes' vectors
// when it next reads the file (on Open, first use of a model, or its next
// append). On systems without flock (Windows, Plan 9, …) the lock is a no-op
// and a directory must have a single writer process.
//
// Memory: every cached vector is held in memory (4 bytes per dimension plus
// about 100 bytes of overhead per text).
package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ctxsel/ctxsel/internal/recordlog"
)

// DefaultSyncEvery is how many appended records trigger an fsync when
// Options.SyncEvery is 0.
const DefaultSyncEvery = 256

// LockFileName is the file in a cache directory that writers flock.
const LockFileName = "LOCK"

// ErrClosed is returned by a Store (and its wrappers) after Close.
var ErrClosed = errors.New("cache: store is closed")

// Options tunes a Store.
type Options struct {
	// SyncEvery is how many appended records trigger an fsync of a file:
	// 0 means DefaultSyncEvery, 1 every write, < 0 only on Sync and Close.
	SyncEvery int
	// FailOnCorrupt makes a file damaged in the middle a *CorruptError
	// instead of renaming it aside and rebuilding it from its intact records.
	FailOnCorrupt bool
	// Note receives a one-line notice when a file is quarantined (default:
	// slog.Warn).
	Note func(msg string)
}

// Stats describes a Store.
type Stats struct {
	Models  int // (model, passage/query) namespaces in memory
	Vectors int // vectors in memory
	// Hits and Misses count texts looked up through Wrap (a text repeated
	// within one call counts once per occurrence as a hit or a miss).
	Hits, Misses int64
	// RecoveredBytes is how many bytes of torn tails were truncated away.
	RecoveredBytes int64
	// Quarantined lists files renamed aside as corrupt (Options.Quarantine).
	Quarantined []string
}

// Store is an on-disk embedding cache. Create one with Open.
type Store struct {
	dir   string
	opts  Options
	lockf *os.File

	mu          sync.RWMutex
	models      map[ns]*model
	closed      bool
	recovered   int64
	quarantined []string

	hits, misses atomic.Int64
}

type model struct {
	ns   ns
	path string
	f    *os.File // nil until the file is opened
	// end is the offset up to which the file is known intact and loaded;
	// -1 when it must be read from the start.
	end      int64
	dim      int
	vecs     map[key][]float32
	slab     []float32
	unsynced int
	broken   error // a failed append could not be rolled back
}

// Open opens (creating it if needed) the cache in dir, reading every cache
// file there into memory, with default Options.
func Open(dir string) (*Store, error) { return OpenWith(dir, Options{}) }

// OpenWith is Open with options.
func OpenWith(dir string, opts Options) (*Store, error) {
	if dir == "" {
		return nil, errors.New("cache: empty directory name")
	}
	if opts.SyncEvery == 0 {
		opts.SyncEvery = DefaultSyncEvery
	}
	if opts.Note == nil {
		opts.Note = func(msg string) { slog.Warn(msg) }
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	lockf, err := os.OpenFile(filepath.Join(dir, LockFileName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	s := &Store{dir: dir, opts: opts, lockf: lockf, models: map[ns]*model{}}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.withFileLock(s.loadAll); err != nil {
		for _, m := range s.models {
			m.closeFile()
		}
		lockf.Close()
		return nil, err
	}
	return s, nil
}

// Dir is the directory the store lives in.
func (s *Store) Dir() string { return s.dir }

// Recovered is how many bytes of torn tails (interrupted appends) were
// truncated away since Open, Open included.
func (s *Store) Recovered() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.recovered
}

// Stats reports the store's contents and counters.
func (s *Store) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := Stats{
		Models:         len(s.models),
		Hits:           s.hits.Load(),
		Misses:         s.misses.Load(),
		RecoveredBytes: s.recovered,
		Quarantined:    append([]string(nil), s.quarantined...),
	}
	for _, m := range s.models {
		st.Vectors += len(m.vecs)
	}
	return st
}

// Sync fsyncs every file with unsynced records.
func (s *Store) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	return s.syncAll()
}

func (s *Store) syncAll() error {
	var errs []error
	for _, m := range s.models {
		if m.f != nil && m.unsynced > 0 {
			if err := m.f.Sync(); err != nil {
				errs = append(errs, fmt.Errorf("cache: fsync %s: %w", m.path, err))
				continue
			}
			m.unsynced = 0
		}
	}
	return errors.Join(errs...)
}

// Close fsyncs and closes every file. The store cannot be used afterwards.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	errs := []error{s.syncAll()}
	for _, m := range s.models {
		if m.f != nil {
			if err := m.f.Close(); err != nil {
				errs = append(errs, fmt.Errorf("cache: %w", err))
			}
			m.f = nil
		}
	}
	if err := s.lockf.Close(); err != nil {
		errs = append(errs, fmt.Errorf("cache: %w", err))
	}
	return errors.Join(errs...)
}

// withFileLock runs fn holding the directory's inter-process lock.
func (s *Store) withFileLock(fn func() error) error {
	if err := recordlog.LockFile(s.lockf); err != nil {
		return fmt.Errorf("cache: locking %s: %w", s.lockf.Name(), err)
	}
	err := fn()
	if uerr := recordlog.UnlockFile(s.lockf); uerr != nil && err == nil {
		err = fmt.Errorf("cache: unlocking %s: %w", s.lockf.Name(), uerr)
	}
	return err
}

func isLogName(name string) bool {
	hexPart, ok := strings.CutSuffix(name, fileExt)
	if !ok || len(hexPart) != 32 {
		return false
	}
	for _, c := range hexPart {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// loadAll reads every cache file in the directory. s.mu and the file lock
// are held.
func (s *Store) loadAll() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !isLogName(e.Name()) {
			continue
		}
		if err := s.loadPath(filepath.Join(s.dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) loadPath(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("cache: %w", err)
	}
	size := fi.Size()
	n, _, herr := readHeader(f, size)
	if herr != nil {
		if !formatError(herr) {
			f.Close()
			return fmt.Errorf("cache: %s: %w", path, herr)
		}
		p, found, err := findRecord(f, 0, size)
		if err != nil {
			f.Close()
			return fmt.Errorf("cache: reading %s: %w", path, err)
		}
		if found {
			f.Close()
			return s.corrupt(path, &CorruptError{Path: path, Offset: 0,
				Reason: fmt.Sprintf("bad header: %v (intact record follows at offset %d)", herr, p)})
		}
		start := make([]byte, min(size, int64(len(fileMagic))))
		_, _ = f.ReadAt(start, 0)
		if string(start) != fileMagic[:len(start)] {
			// Garbage written over the file: moved aside, noted.
			f.Close()
			return s.corrupt(path, &CorruptError{Path: path, Offset: 0,
				Reason: fmt.Sprintf("bad header: %v, and no intact record", herr)})
		}
		// A torn header: the file was being created and holds no record.
		// It goes, after a copy is kept and the cut noted.
		q, err := recordlog.KeepTail(f, path, 0, size)
		f.Close()
		if err != nil {
			return fmt.Errorf("cache: keeping torn file %s: %w", path, err)
		}
		if err := os.Remove(path); err != nil {
			return fmt.Errorf("cache: removing torn file: %w", err)
		}
		s.recovered += size
		s.quarantined = append(s.quarantined, q)
		s.opts.Note(fmt.Sprintf("embedding cache: %s held only a torn header (an interrupted first write); removed, a copy is in %s", path, filepath.Base(q)))
		return nil
	}
	if n.fileName() != filepath.Base(path) {
		f.Close()
		return s.corrupt(path, &CorruptError{Path: path, Offset: 0,
			Reason: fmt.Sprintf("header names model %q (kind %c), which belongs in %s", n.id, n.kind, n.fileName())})
	}
	m := newModel(n, path)
	m.f = f
	s.models[n] = m
	return s.refreshOrQuarantine(m, false)
}

func newModel(n ns, path string) *model {
	return &model{ns: n, path: path, end: -1, vecs: map[key][]float32{}}
}

func (m *model) closeFile() {
	if m.f != nil {
		m.f.Close()
		m.f = nil
	}
	m.end = -1
}

// add stores a copy of v under k. s.mu is held for writing.
func (m *model) add(k key, v []float32) {
	if old, ok := m.vecs[k]; ok && len(old) == len(v) {
		copy(old, v)
		return
	}
	if len(m.slab) < len(v) {
		m.slab = make([]float32, len(v)*min(256, max(16, len(m.vecs))))
	}
	dst := m.slab[:len(v):len(v)]
	m.slab = m.slab[len(v):]
	copy(dst, v)
	m.vecs[k] = dst
}

// corrupt quarantines path, or returns err with Options.FailOnCorrupt.
func (s *Store) corrupt(path string, err error) error {
	if s.opts.FailOnCorrupt {
		return err
	}
	q := fmt.Sprintf("%s.corrupt-%d", path, time.Now().UnixNano())
	if rerr := os.Rename(path, q); rerr != nil {
		return fmt.Errorf("%w (quarantine failed: %v)", err, rerr)
	}
	s.quarantined = append(s.quarantined, q)
	recordlog.SyncDir(s.dir)
	s.opts.Note(fmt.Sprintf("embedding cache: %v; moved aside to %s and rebuilt from its intact records", err, filepath.Base(q)))
	return nil
}

// refreshOrQuarantine is refresh, except that (unless
// Options.FailOnCorrupt) a corrupt file is renamed aside and replaced by a file holding every intact
// record found in it (before and after the damage) plus those already in m.
func (s *Store) refreshOrQuarantine(m *model, create bool) error {
	err := s.refresh(m, create)
	var ce *CorruptError
	if err == nil || !errors.As(err, &ce) || s.opts.FailOnCorrupt {
		return err
	}
	// Records before the damage are in m already; salvage those after it.
	for ce.next > 0 && m.f != nil {
		fi, serr := m.f.Stat()
		if serr != nil {
			break
		}
		next := ce.next
		_, serr = scanRecords(m.f, m.path, next, fi.Size(), &m.dim, m.add)
		if !errors.As(serr, &ce) || ce.next <= next {
			break
		}
	}
	m.closeFile()
	if err := s.corrupt(m.path, err); err != nil {
		return err
	}
	if len(m.vecs) == 0 {
		return s.refresh(m, create)
	}
	return s.rewrite(m)
}

// rewrite creates m's file afresh with every vector in m. s.mu and the file
// lock are held; m's file does not exist.
func (s *Store) rewrite(m *model) error {
	f, err := os.OpenFile(m.path, os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	buf := encodeHeader(m.ns)
	for k, v := range m.vecs {
		buf = appendRecord(buf, k, v)
	}
	if _, err := f.Write(buf); err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		os.Remove(m.path)
		return fmt.Errorf("cache: rebuilding %s: %w", m.path, err)
	}
	recordlog.SyncDir(s.dir)
	m.f, m.end, m.unsynced = f, int64(len(buf)), 0
	return nil
}

// refresh brings m up to date with its file: it (re)opens the file if it
// was replaced, reads records appended since m.end (everything when m.end
// is -1), and truncates a torn tail. s.mu and the file lock are held.
func (s *Store) refresh(m *model, create bool) error {
	if m.f != nil {
		// Another process may have quarantined or removed the file.
		pi, perr := os.Stat(m.path)
		fi, ferr := m.f.Stat()
		if perr != nil || ferr != nil || !os.SameFile(pi, fi) {
			m.closeFile()
		}
	}
	if m.f == nil {
		flag := os.O_RDWR | os.O_APPEND
		if create {
			flag |= os.O_CREATE
		}
		f, err := os.OpenFile(m.path, flag, 0o644)
		if err != nil {
			if !create && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("cache: %w", err)
		}
		m.f, m.end = f, -1
	}
	fi, err := m.f.Stat()
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	size := fi.Size()
	if size == m.end {
		return nil
	}
	start := m.end
	if m.end < 0 || size < m.end {
		if size == 0 {
			m.end = 0 // the next append writes the header
			return nil
		}
		n, hs, herr := readHeader(m.f, size)
		if herr != nil {
			if !formatError(herr) {
				return fmt.Errorf("cache: %s: %w", m.path, herr)
			}
			p, found, err := findRecord(m.f, 0, size)
			if err != nil {
				return fmt.Errorf("cache: reading %s: %w", m.path, err)
			}
			if found {
				return &CorruptError{Path: m.path, Offset: 0,
					Reason: fmt.Sprintf("bad header: %v (intact record follows at offset %d)", herr, p)}
			}
			return s.truncate(m, 0, size)
		}
		if n != m.ns {
			return &CorruptError{Path: m.path, Offset: 0,
				Reason: fmt.Sprintf("header names model %q (kind %c), want %q (kind %c)", n.id, n.kind, m.ns.id, m.ns.kind)}
		}
		start = hs
	}
	end, err := scanRecords(m.f, m.path, start, size, &m.dim, m.add)
	if err != nil {
		return err
	}
	if end < size {
		return s.truncate(m, end, size)
	}
	m.end = end
	return nil
}

// truncate cuts m's file at end, after keeping a copy of what is cut
// beside it and saying so: a torn tail and a damaged last record look
// alike, and neither is dropped unseen.
func (s *Store) truncate(m *model, end, size int64) error {
	q, err := recordlog.KeepTail(m.f, m.path, end, size)
	if err != nil {
		return fmt.Errorf("cache: keeping the torn tail of %s: %w", m.path, err)
	}
	s.quarantined = append(s.quarantined, q)
	s.opts.Note(fmt.Sprintf("embedding cache: %s ended in %d bytes that are not an intact record (an interrupted write, or damage); cut them away, a copy is in %s",
		m.path, size-end, filepath.Base(q)))
	if err := m.f.Truncate(end); err != nil {
		return fmt.Errorf("cache: dropping torn tail of %s: %w", m.path, err)
	}
	if err := m.f.Sync(); err != nil {
		return fmt.Errorf("cache: fsync %s: %w", m.path, err)
	}
	s.recovered += size - end
	m.end = end
	return nil
}

// model returns n's model, reading its file on first use. s.mu is held for
// writing.
func (s *Store) model(n ns) (*model, error) {
	if m := s.models[n]; m != nil {
		return m, nil
	}
	m := newModel(n, filepath.Join(s.dir, n.fileName()))
	if err := s.withFileLock(func() error { return s.refreshOrQuarantine(m, false) }); err != nil {
		m.closeFile()
		return nil, err
	}
	s.models[n] = m
	return m, nil
}

// get returns copies of the vectors stored under keys, nil for misses.
func (s *Store) get(n ns, keys []key) ([][]float32, error) {
	s.mu.RLock()
	m := s.models[n]
	if m == nil && !s.closed {
		s.mu.RUnlock()
		s.mu.Lock()
		var err error
		if !s.closed {
			m, err = s.model(n)
		}
		s.mu.Unlock()
		if err != nil {
			return nil, err
		}
		s.mu.RLock()
	}
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	out := make([][]float32, len(keys))
	for i, k := range keys {
		if v, ok := m.vecs[k]; ok {
			out[i] = append([]float32(nil), v...)
		}
	}
	return out, nil
}

// put appends the vectors not yet stored. Every vector must have one
// dimension and finite components (embed.CheckVectors).
func (s *Store) put(n ns, keys []key, vecs [][]float32) error {
	if len(keys) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	m, err := s.model(n)
	if err != nil {
		return err
	}
	if m.broken != nil {
		return m.broken
	}
	dim := len(vecs[0])
	if dim > maxDim {
		return fmt.Errorf("cache: dimension %d exceeds the cache's limit of %d", dim, maxDim)
	}
	var (
		buf   []byte
		added []int
	)
	pending := func() {
		buf, added = buf[:0], added[:0]
		seen := map[key]bool{}
		for i, k := range keys {
			if _, ok := m.vecs[k]; ok || seen[k] {
				continue
			}
			seen[k] = true
			buf = appendRecord(buf, k, vecs[i])
			added = append(added, i)
		}
	}
	if pending(); len(added) == 0 {
		return nil
	}
	created := false
	err = s.withFileLock(func() error {
		if err := s.refreshOrQuarantine(m, true); err != nil {
			return err
		}
		if m.dim != 0 && m.dim != dim {
			return fmt.Errorf("cache: model %q: new vectors have dimension %d, cached ones %d", n.id, dim, m.dim)
		}
		// Other processes may have appended some of these meanwhile
		// (refresh adopted them): write only what is still missing.
		if pending(); len(added) == 0 {
			return nil
		}
		created = m.end == 0
		if created {
			buf = append(encodeHeader(n), buf...)
		}
		if _, err := m.f.Write(buf); err != nil {
			// Roll back a partial append so nothing is ever written after it.
			if terr := m.f.Truncate(m.end); terr != nil {
				m.broken = fmt.Errorf("cache: %s: append failed and could not be rolled back (%v): %w", m.path, err, terr)
			}
			return fmt.Errorf("cache: appending to %s: %w", m.path, err)
		}
		m.end += int64(len(buf))
		if created {
			if err := m.f.Sync(); err != nil {
				return fmt.Errorf("cache: fsync %s: %w", m.path, err)
			}
			recordlog.SyncDir(s.dir)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if m.dim == 0 {
		m.dim = dim
	}
	for _, i := range added {
		m.add(keys[i], vecs[i])
	}
	m.unsynced += len(added)
	if created {
		m.unsynced = 0 // fsynced above
	}
	if s.opts.SyncEvery > 0 && m.unsynced >= s.opts.SyncEvery {
		if err := m.f.Sync(); err != nil {
			return fmt.Errorf("cache: fsync %s: %w", m.path, err)
		}
		m.unsynced = 0
	}
	return nil
}
