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
// Each file is an internal/recordlog log (in the layout above, unchanged
// since before the cache used recordlog: older files are read and appended
// to as they are), which does the reading, repairs and locking.
//
// # Crashes and corruption
//
// An append interrupted by a crash leaves a torn tail: bytes at the end of
// the file that do not decode, with no intact record after them. Open (and
// any later read of the file) truncates such a tail away, keeping a copy
// beside the file ("<name>.cut-<unixnano>", listed in Stats().Quarantined)
// and saying so through Options.Note, and counts the dropped bytes in
// Recovered. A bad record or header followed by an intact record cannot
// come from an interrupted append; it is reported as a *CorruptError
// (errors.Is(err, ErrCorrupt)) naming the file and offset. By default the
// file is then renamed to "<name>.corrupt-<unixnano>" (listed in
// Stats().Quarantined, and reported through Options.Note) and rebuilt from
// every intact record found in it, before and after the damage; only the
// damaged records are lost, and cost a recomputation. A file whose header
// names another model than its name says, or that is not a cache file at
// all, is moved aside whole. With Options.FailOnCorrupt, Open fails with
// the *CorruptError instead. Records are checked (CRC, dimension, finite
// values) before use, so a damaged file never yields a wrong vector.
//
// # Durability
//
// Records are written with one write(2) per Wrap call. They are fsynced
// every Options.SyncEvery records of a file (default DefaultSyncEvery), on
// Sync and on Close; a new file and its directory entry are fsynced when it
// is created.
// A crash can lose records written since the last fsync — never more, and
// never other records — and the loss only costs a recomputation.
//
// # Concurrency
//
// A Store is safe for concurrent use. Several processes may share a
// directory: every scan, truncation and append runs under an exclusive
// flock(2) on dir/LOCK (internal/flock), and before appending a process reads (and adopts)
// whatever other processes appended since it last looked, so records never
// interleave and a torn tail left by a crashed process is cut before anyone
// appends after it. Records another process appended meanwhile are not
// written again. Each process still only sees other processes' vectors
// when it next reads the file (on Open, first use of a model, or its next
// append). On systems without flock (Windows, Plan 9, …) the lock is a no-op
// and a directory must have a single writer process.
//
// # A cache that cannot be written
//
// The cache only saves work, so failing to write it (a full disk, a
// read-only or vanished directory, an I/O error) never fails a call: the
// first such failure is reported once through Options.Note, and the Store
// stops writing for the rest of its life: it answers what it holds in
// memory, and keeps new vectors there too, but writes nothing
// (Stats().WriteError says why). A model whose file cannot be opened at
// all is answered by the embedder alone.
//
// Memory: every cached vector is held in memory (4 bytes per dimension plus
// about 100 bytes of overhead per text).
package cache

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

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
	// Note receives a one-line notice when a file is quarantined or its
	// tail cut away (default: slog.Warn).
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
	// Quarantined lists files renamed aside as corrupt, and the copies of
	// torn tails cut away.
	Quarantined []string
	// WriteError, when set, is why the store stopped writing (it still
	// answers from memory).
	WriteError error
}

// Store is an on-disk embedding cache. Create one with Open.
type Store struct {
	dir  string
	opts Options

	mu     sync.RWMutex
	models map[ns]*model
	closed bool
	// what opening found in files that belong to no model (unreadable
	// headers, misnamed files)
	aside recordlog.Stats
	// writeErr is the write failure that turned writing off
	writeErr error

	hits, misses atomic.Int64
}

// model is one namespace's vectors and its log.
type model struct {
	ns   ns
	log  *recordlog.Log
	dim  int
	vecs map[key][]float32
	slab []float32
	buf  []float32 // decoding scratch
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
	s := &Store{dir: dir, opts: opts, models: map[ns]*model{}}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadAll(); err != nil {
		for _, m := range s.models {
			m.log.Close()
		}
		return nil, err
	}
	return s, nil
}

// logOptions are the options of every log of the store, in kind's format.
func (s *Store) logOptions(kind byte, m *model) recordlog.Options {
	o := recordlog.Options{
		Format:        formatOf(kind),
		LockPath:      filepath.Join(s.dir, LockFileName),
		SyncEvery:     s.opts.SyncEvery,
		MaxPayload:    4 * maxDim,
		FailOnCorrupt: s.opts.FailOnCorrupt,
		Note:          func(msg string) { s.opts.Note("embedding cache: " + msg) },
	}
	if m != nil {
		// one dimension per file: a record of another counts as damage
		o.Valid = func(p []byte) bool { return validVector(p) && (m.dim == 0 || len(p) == 4*m.dim) }
	}
	return o
}

// Dir is the directory the store lives in.
func (s *Store) Dir() string { return s.dir }

// Recovered is how many bytes of torn tails (interrupted appends) were
// truncated away since Open, Open included.
func (s *Store) Recovered() int64 { return s.Stats().RecoveredBytes }

// Stats reports the store's contents and counters.
func (s *Store) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := Stats{
		Models:         len(s.models),
		Hits:           s.hits.Load(),
		Misses:         s.misses.Load(),
		RecoveredBytes: s.aside.RecoveredBytes,
		Quarantined:    append([]string(nil), s.aside.Quarantined...),
		WriteError:     s.writeErr,
	}
	for _, m := range s.models {
		st.Vectors += len(m.vecs)
		ls := m.log.Stats()
		st.RecoveredBytes += ls.RecoveredBytes
		st.Quarantined = append(st.Quarantined, ls.Quarantined...)
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
	var errs []error
	for _, m := range s.models {
		if err := m.log.Sync(); err != nil {
			errs = append(errs, fmt.Errorf("cache: %w", err))
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
	var errs []error
	for _, m := range s.models {
		if err := m.log.Close(); err != nil {
			errs = append(errs, fmt.Errorf("cache: %w", err))
		}
	}
	return errors.Join(errs...)
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

// loadAll reads every cache file in the directory: the namespace each
// belongs to is in its header. s.mu is held.
func (s *Store) loadAll() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("cache: %w", err)
	}
	for _, e := range entries {
		if !e.Type().IsRegular() || !isLogName(e.Name()) {
			continue
		}
		path := filepath.Join(s.dir, e.Name())
		id, st, err := recordlog.Identify(path, formats, s.logOptions(kindPassage, nil))
		s.noteAside(st)
		if err != nil {
			return fmt.Errorf("cache: %w", err)
		}
		if id == nil {
			continue // missing, empty, or set aside
		}
		n := ns{kind: kinds[id.Format], id: id.ID}
		if n.fileName() != e.Name() {
			st, err := recordlog.Quarantine(path, fmt.Sprintf("its header names model %q (kind %c), which belongs in %s", n.id, n.kind, n.fileName()),
				s.logOptions(n.kind, nil))
			s.noteAside(st)
			if err != nil {
				return fmt.Errorf("cache: %w", err)
			}
			continue
		}
		if _, err := s.model(n); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) noteAside(st recordlog.Stats) {
	s.aside.RecoveredBytes += st.RecoveredBytes
	s.aside.Quarantined = append(s.aside.Quarantined, st.Quarantined...)
}

// model returns n's model, reading its file on first use. s.mu is held for
// writing.
func (s *Store) model(n ns) (*model, error) {
	if m := s.models[n]; m != nil {
		return m, nil
	}
	m := &model{ns: n, vecs: map[key][]float32{}}
	l, err := recordlog.Open(filepath.Join(s.dir, n.fileName()), n.id, s.logOptions(n.kind, m), m.deliver)
	if err != nil {
		return nil, fmt.Errorf("cache: %w", err)
	}
	m.log = l
	s.models[n] = m
	return m, nil
}

// deliver stores a record the log read or appended (checked by Valid).
func (m *model) deliver(r recordlog.Record) {
	v := decodeVector(r.Payload, m.buf)
	m.buf = v
	if m.dim == 0 {
		m.dim = len(v)
	}
	m.add(r.Key, v)
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

// get returns copies of the vectors stored under keys, nil for misses. A
// model whose file cannot be opened has none (and writing is turned off).
func (s *Store) get(n ns, keys []key) ([][]float32, error) {
	out := make([][]float32, len(keys))
	s.mu.RLock()
	m := s.models[n]
	if m == nil && !s.closed {
		s.mu.RUnlock()
		s.mu.Lock()
		var err error
		closed := s.closed
		if !closed && s.writeErr == nil {
			if m, err = s.model(n); err != nil {
				s.bypass(err)
			}
		}
		s.mu.Unlock()
		if m == nil && !closed {
			return out, nil
		}
		s.mu.RLock()
	}
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	for i, k := range keys {
		if v, ok := m.vecs[k]; ok {
			out[i] = append([]float32(nil), v...)
		}
	}
	return out, nil
}

// put appends the vectors not yet stored. Every vector must have one
// dimension and finite components (embed.CheckVectors). A failure to
// write turns writing off (bypass) instead of failing.
func (s *Store) put(n ns, keys []key, vecs [][]float32) error {
	if len(keys) == 0 {
		return nil
	}
	dim := len(vecs[0])
	if dim > maxDim {
		return fmt.Errorf("cache: dimension %d exceeds the cache's limit of %d", dim, maxDim)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.writeErr != nil {
		s.keep(n, keys, vecs)
		return nil
	}
	m, err := s.model(n)
	if err != nil {
		s.bypass(err)
		return nil
	}
	if m.dim == 0 {
		// the file's dimension may be another process's: read it first
		if err := m.log.Refresh(); err != nil {
			s.bypass(err)
			return nil
		}
	}
	if m.dim != 0 && m.dim != dim {
		return fmt.Errorf("cache: model %q: new vectors have dimension %d, cached ones %d", n.id, dim, m.dim)
	}
	recs := make([]recordlog.Record, 0, len(keys))
	for i, k := range keys {
		if _, ok := m.vecs[k]; !ok {
			recs = append(recs, recordlog.Record{Key: k, Payload: encodeVector(vecs[i])})
		}
	}
	// Other processes may have appended some of these meanwhile: the log
	// reads them first, and writes only what is still missing.
	if _, err := m.log.Append(recs, func(k key) bool { _, ok := m.vecs[k]; return ok }); err != nil {
		s.bypass(err)
		s.keep(n, keys, vecs)
	}
	return nil
}

// keep holds vectors the store could not write, in memory only, when
// their model's file is open. s.mu is held for writing.
func (s *Store) keep(n ns, keys []key, vecs [][]float32) {
	m := s.models[n]
	if m == nil || m.dim != 0 && m.dim != len(vecs[0]) {
		return
	}
	m.dim = len(vecs[0])
	for i, k := range keys {
		m.add(k, vecs[i])
	}
}

// bypass turns writing off after err, saying so once. s.mu is held for
// writing.
func (s *Store) bypass(err error) {
	if s.writeErr != nil {
		return
	}
	s.writeErr = err
	s.opts.Note(fmt.Sprintf("embedding cache %s cannot be written (%v): going on without it; new vectors are computed, not stored", s.dir, err))
}
