package index

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ctxsel/ctxsel/internal/atomicfile"
	"github.com/ctxsel/ctxsel/internal/flock"
)

// DirOptions configure OpenDir.
type DirOptions struct {
	// Create lets Add make the index when the directory holds none.
	Create bool
	// Vectors is the storage format of a new index: f32 (default), f16, i8.
	Vectors string
	// Workers bounds the goroutines one Search uses; 0 means GOMAXPROCS.
	Workers int
}

// Dir is the embedded index: a directory holding a MANIFEST, immutable
// segment files and a LOCK file.
//
// Writers (Add, Remove) take an exclusive flock on LOCK, write a new segment
// file, fsync it, and then publish it by atomically replacing the manifest;
// an interrupted writer therefore leaves the index as it was or with whole
// batches added, and the next writer deletes the orphaned files. Readers
// never lock: they read a manifest snapshot and the segments it names
// (which are immutable), so any number of readers run while one writer
// adds. Every file is checksummed; damage is reported as ErrCorrupt.
type Dir struct {
	path string
	opts DirOptions

	wmu sync.Mutex // serialises this process's writers (flock does not)

	mu       sync.Mutex
	snap     *snapshot
	snapStat os.FileInfo
	loaded   map[string]*segment // immutable segments by name, reused across snapshots

	// the last manifest read, shared by readers (never modified): parsed
	// once per version of the file
	manMu   sync.Mutex
	man     *manifest
	manStat os.FileInfo
}

var _ Store = (*Dir)(nil)

// OpenDir opens the embedded index in directory path. Without opts.Create a
// directory that holds no index is an error wrapping ErrNotFound.
func OpenDir(path string, opts DirOptions) (*Dir, error) {
	if path == "" {
		return nil, invalidf("empty index directory")
	}
	if _, err := ParseFormat(opts.Vectors); err != nil {
		return nil, err
	}
	if opts.Workers < 0 {
		return nil, invalidf("workers=%d must not be negative", opts.Workers)
	}
	d := &Dir{path: path, opts: opts, loaded: map[string]*segment{}}
	_, _, err := d.sharedManifest()
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		if st, serr := os.Stat(path); serr == nil && !st.IsDir() {
			return nil, fmt.Errorf("index %s: not a directory", path)
		}
		if segs, _ := filepath.Glob(filepath.Join(path, "seg-*"+segSuffix)); len(segs) > 0 {
			switch d.firstCommit() {
			case firstCommitDone:
				return d, nil
			case firstCommitRunning:
				if opts.Create {
					return d, nil // its Add waits for the writer lock
				}
				return nil, fmt.Errorf("%w at %s: another writer is creating it; try again when it is done", ErrNotFound, path)
			}
			return nil, corruptf(path, "segment files but no %s", manifestName)
		}
		if !opts.Create {
			return nil, fmt.Errorf("%w at %s (create one with: ctxsel index add --index %s PATH...)", ErrNotFound, path, path)
		}
	case errors.Is(err, ErrCorrupt):
		return nil, err
	default:
		return nil, fmt.Errorf("index %s: %w", path, err)
	}
	return d, nil
}

// What firstCommit finds of segment files without a manifest.
const (
	firstCommitLeftover = iota // no writer: a crash's leftovers
	firstCommitRunning         // a writer holds the lock: its first commit writes segments before the manifest
	firstCommitDone            // the manifest is there now
)

// firstCommit tells a first commit under way (its writer holds the lock)
// from segments a crashed one left: a writer writes its segments before
// the manifest that names them.
func (d *Dir) firstCommit() int {
	f, err := os.OpenFile(filepath.Join(d.path, lockName), os.O_RDWR, 0)
	if err != nil {
		return firstCommitLeftover // no lock file: no writer ever locked here
	}
	defer f.Close()
	busy, err := flock.TryLock(f)
	switch {
	case err != nil:
		return firstCommitLeftover
	case busy:
		return firstCommitRunning
	}
	defer flock.Unlock(f)
	if _, err := os.Stat(filepath.Join(d.path, manifestName)); err == nil {
		return firstCommitDone
	}
	return firstCommitLeftover
}

// Path is the index directory.
func (d *Dir) Path() string { return d.path }

// Close implements Store. It releases loaded segments.
func (d *Dir) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.snap, d.snapStat, d.loaded = nil, nil, map[string]*segment{}
	return nil
}

// sharedManifest returns the current manifest for reading only: the one
// read last while the file is the same (same file, size and modification
// time), so opening, Stats and the first search parse it once.
func (d *Dir) sharedManifest() (*manifest, os.FileInfo, error) {
	st, err := os.Stat(filepath.Join(d.path, manifestName))
	if err != nil {
		return nil, nil, err
	}
	d.manMu.Lock()
	defer d.manMu.Unlock()
	if d.man != nil && sameFileVersion(st, d.manStat) {
		return d.man, d.manStat, nil
	}
	m, mst, err := readManifest(d.path)
	if err == nil {
		d.man, d.manStat = m, mst
	}
	return m, mst, err
}

// sameFileVersion reports whether two stats of a path are of the same
// unchanged file.
func sameFileVersion(a, b os.FileInfo) bool {
	return b != nil && os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}

// manifestNow reads the current manifest for a writer, which may modify
// it; an index not created yet reads as an empty manifest.
func (d *Dir) manifestNow() (*manifest, os.FileInfo, error) {
	return d.manifestOf(readManifest(d.path))
}

// manifestShared is manifestNow for readers (sharedManifest): the result
// must not be modified.
func (d *Dir) manifestShared() (*manifest, os.FileInfo, error) {
	return d.manifestOf(d.sharedManifest())
}

func (d *Dir) manifestOf(m *manifest, st os.FileInfo, err error) (*manifest, os.FileInfo, error) {
	if errors.Is(err, fs.ErrNotExist) {
		f, _ := ParseFormat(d.opts.Vectors)
		return &manifest{Version: manifestFormat, Vectors: f.String(), NextSegment: 1}, nil, nil
	}
	if err != nil && !errors.Is(err, ErrCorrupt) {
		return nil, nil, fmt.Errorf("index %s: %w", d.path, err)
	}
	return m, st, err
}

// List implements Store.
func (d *Dir) List(ctx context.Context) ([]DocInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m, _, err := d.manifestShared()
	if err != nil {
		return nil, err
	}
	out := make([]DocInfo, len(m.Docs))
	for i, e := range m.Docs {
		out[i] = e.DocInfo
	}
	slices.SortFunc(out, func(a, b DocInfo) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// Stats implements Store.
func (d *Dir) Stats(ctx context.Context) (Stats, error) {
	if err := ctx.Err(); err != nil {
		return Stats{}, err
	}
	m, st, err := d.manifestShared()
	if err != nil {
		return Stats{}, err
	}
	s := Stats{Location: d.path, Backend: "dir", Config: m.Config, Vectors: m.Vectors, Docs: len(m.Docs), Segments: len(m.Segments)}
	if st != nil {
		s.DiskBytes = st.Size()
	}
	for _, e := range m.Docs {
		s.Chunks += e.Chunks
		s.Tokens += e.Tokens
	}
	total := 0
	for _, sg := range m.Segments {
		s.DiskBytes += sg.Size + sg.LexSize + sg.SntSize
		s.SentenceBytes += sg.SntSize
		total += sg.Chunks
	}
	s.DeadChunks = total - s.Chunks
	return s, nil
}

// lock takes the writer lock, waiting (and polling) until ctx is done.
func (d *Dir) lock(ctx context.Context) (release func(), err error) {
	d.wmu.Lock()
	defer func() {
		if err != nil {
			d.wmu.Unlock()
		}
	}()
	if err := os.MkdirAll(d.path, 0o755); err != nil {
		return nil, fmt.Errorf("index %s: %w", d.path, err)
	}
	f, err := os.OpenFile(filepath.Join(d.path, lockName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("index %s: lock: %w", d.path, err)
	}
	for {
		busy, err := flock.TryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("index %s: lock: %w", d.path, err)
		}
		if !busy {
			break
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("index %s: waiting for another writer: %w", d.path, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return func() {
		flock.Unlock(f)
		f.Close()
		d.wmu.Unlock()
	}, nil
}

// Add implements Store. One call is one atomic commit.
func (d *Dir) Add(ctx context.Context, cfg Config, docs []Document) error {
	dim, err := CheckDocuments(docs)
	if err != nil {
		return err
	}
	if dim != 0 {
		if cfg.Dim != 0 && cfg.Dim != dim {
			return invalidf("config dimension %d, vectors have %d", cfg.Dim, dim)
		}
		cfg.Dim = dim
	}
	if cfg.Model == "" {
		return invalidf("config without an embedding model")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	release, err := d.lock(ctx)
	if err != nil {
		return err
	}
	defer release()
	m, st, err := d.manifestNow()
	if err != nil {
		return err
	}
	if st == nil {
		// a new index: publish an empty manifest before any segment, so
		// segment files without a manifest always mean damage
		if err := writeManifest(d.path, m); err != nil {
			return fmt.Errorf("index %s: %w", d.path, err)
		}
	}
	if m.Config == (Config{}) {
		m.Config = cfg
	} else {
		// documents without chunks carry no dimension: an index of only
		// such documents takes its dimension from the first vectors
		if err := cfg.Compatible(m.Config); err != nil {
			return fmt.Errorf("index %s: %w", d.path, err)
		}
		if m.Config.Dim == 0 {
			m.Config.Dim = cfg.Dim
		}
	}
	d.collectGarbage(m)
	format, _ := ParseFormat(m.Vectors)

	// the new segment
	keepSentences, sdim := m.Config.SentenceModel != "", sentenceDim(docs)
	var sdocs []segDoc
	var vecs [][]float32
	var snt []sntRow
	now := time.Now().UTC().Truncate(time.Second)
	entries := make([]docEntry, 0, len(docs))
	for _, doc := range docs {
		e := docEntry{DocInfo: DocInfo{ID: doc.ID, Source: doc.Source, SourceHash: doc.SourceHash, Hash: doc.Hash,
			Chunks: len(doc.Chunks), Bytes: len(doc.Text), Added: now}}
		if len(doc.Chunks) > 0 {
			if keepSentences != (doc.Sentences != nil) {
				return invalidf("document %q: the index keeps sentence vectors (%q) for every chunk, the document has %d sets",
					doc.ID, m.Config.SentenceModel, len(doc.Sentences))
			}
			sd := segDoc{ID: doc.ID, Source: doc.Source, Text: doc.Text, Chunks: make([][5]int, len(doc.Chunks))}
			for i, c := range doc.Chunks {
				sd.Chunks[i] = [5]int{c.Start, c.End, c.CharStart, c.CharEnd, c.Tokens}
				e.Tokens += c.Tokens
				vecs = append(vecs, Normalize(doc.Vectors[i]))
				if keepSentences {
					snt = append(snt, newSntRow(format, sdim, doc.Sentences[i]))
				}
			}
			sdocs = append(sdocs, sd)
		}
		entries = append(entries, e)
	}
	var newSegs []segInfo
	if len(vecs) > 0 {
		si, err := d.newSegment(ctx, m, format, m.Config.Dim, sdocs, newMatrix(format, m.Config.Dim, vecs), snt)
		if err != nil {
			return err
		}
		newSegs = append(newSegs, si)
		for i := range entries {
			if entries[i].Chunks > 0 {
				entries[i].Segment = si.Name
			}
		}
	}
	replaced := make(map[string]bool, len(docs))
	for _, doc := range docs {
		replaced[doc.ID] = true
	}
	m.Docs = slices.DeleteFunc(m.Docs, func(e docEntry) bool { return replaced[e.ID] })
	m.Docs = append(m.Docs, entries...)
	m.Segments = append(m.Segments, newSegs...)
	return d.commit(ctx, m)
}

// Remove implements Store.
func (d *Dir) Remove(ctx context.Context, ids []string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if len(ids) == 0 {
		return 0, nil
	}
	release, err := d.lock(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	m, st, err := d.manifestNow()
	if err != nil {
		return 0, err
	}
	if st == nil {
		return 0, nil
	}
	d.collectGarbage(m)
	drop := make(map[string]bool, len(ids))
	for _, id := range ids {
		drop[id] = true
	}
	before := len(m.Docs)
	m.Docs = slices.DeleteFunc(m.Docs, func(e docEntry) bool { return drop[e.ID] })
	n := before - len(m.Docs)
	if n == 0 {
		return 0, nil
	}
	return n, d.commit(ctx, m)
}

// newSegment writes a segment under the next free name, with its lexical
// file and, for an index that keeps them, its sentence file (snt, one row
// per chunk).
func (d *Dir) newSegment(ctx context.Context, m *manifest, f Format, dim int, docs []segDoc, mat matrix, snt []sntRow) (segInfo, error) {
	if err := ctx.Err(); err != nil {
		return segInfo{}, err
	}
	for {
		name := fmt.Sprintf("seg-%06d%s", m.NextSegment, segSuffix)
		m.NextSegment++
		size, crc, err := writeSegment(filepath.Join(d.path, name), f, dim, docs, mat)
		if errors.Is(err, fs.ErrExist) {
			continue // an orphan from a crashed writer we could not delete
		}
		if err != nil {
			return segInfo{}, fmt.Errorf("index %s: write segment: %w", d.path, err)
		}
		si := segInfo{Name: name, Size: size, CRC: crc, Chunks: mat.n, Docs: len(docs)}
		if err := d.writeLexical(&si, docs); err != nil {
			os.Remove(filepath.Join(d.path, name))
			return segInfo{}, err
		}
		if m.Config.SentenceModel != "" {
			// a file left by a crashed writer under this unused name goes
			os.Remove(filepath.Join(d.path, sntName(name)))
			if err := d.writeSentences(&si, f, m.Config.SentenceModel, snt); err != nil {
				os.Remove(filepath.Join(d.path, name))
				os.Remove(filepath.Join(d.path, lexName(name)))
				return segInfo{}, err
			}
		}
		return si, nil
	}
}

// Compaction policy: a segment whose live chunks are fewer than half its
// chunks is rewritten; so are small segments once there are many of them.
const (
	smallSegment = 8 << 20
	maxSmallSegs = 8
)

// commit compacts if needed, publishes m and deletes unreferenced segments.
func (d *Dir) commit(ctx context.Context, m *manifest) error {
	if err := d.compact(ctx, m); err != nil {
		return err
	}
	// drop segments no live document uses
	used := map[string]int{}
	for _, e := range m.Docs {
		used[e.Segment] += e.Chunks
	}
	m.Segments = slices.DeleteFunc(m.Segments, func(s segInfo) bool { return used[s.Name] == 0 })
	if err := d.addMissingLexical(ctx, m); err != nil {
		return err
	}
	if len(m.Docs) == 0 {
		m.Config = Config{}
	}
	m.Generation++
	if err := writeManifest(d.path, m); err != nil {
		return fmt.Errorf("index %s: %w", d.path, err)
	}
	d.collectGarbage(m)
	return nil
}

// compact rewrites half-dead segments, segments written before version 2,
// and small segments when there are more than maxSmallSegs of them, into
// one new segment.
func (d *Dir) compact(ctx context.Context, m *manifest) error {
	live := map[string]int{}
	for _, e := range m.Docs {
		live[e.Segment] += e.Chunks
	}
	var victims []segInfo
	var small []segInfo
	for _, s := range m.Segments {
		switch {
		case live[s.Name] == 0:
			// dropped by commit without rewriting
		case 2*live[s.Name] < s.Chunks:
			victims = append(victims, s)
		case littleEndian && !d.isVersion2(s.Name):
			// written before version 2: rewritten once, so that it is
			// opened in place from now on
			victims = append(victims, s)
		case s.Size < smallSegment:
			small = append(small, s)
		}
	}
	if len(small) > maxSmallSegs {
		victims = append(victims, small...)
	}
	if len(victims) == 0 {
		return nil
	}
	format, _ := ParseFormat(m.Vectors)
	byID := map[string]int{}
	for i, e := range m.Docs {
		byID[e.ID] = i
	}
	var docs []segDoc
	var rows [][]float32
	var snt []sntRow
	var moved []int // indices into m.Docs
	for _, v := range victims {
		seg, err := readSegment(filepath.Join(d.path, v.Name), v.Name, v.Size, v.CRC)
		if err != nil {
			return fmt.Errorf("index %s: compact: %w", d.path, err)
		}
		var sf *sntFile
		if m.Config.SentenceModel != "" {
			if sf, err = d.readSegmentSentences(v); err != nil {
				return fmt.Errorf("index %s: compact: %w", d.path, err)
			}
		}
		r := 0
		for _, sd := range seg.docs {
			i, ok := byID[sd.ID]
			if ok && m.Docs[i].Segment == v.Name {
				docs = append(docs, sd)
				for k := range sd.Chunks {
					rows = append(rows, seg.mat.row(r+k))
					if sf != nil {
						spans, sm, err := sf.row(r + k)
						if err != nil {
							return fmt.Errorf("index %s: compact: %w", d.path, err)
						}
						snt = append(snt, sntRow{spans: spans, mat: sm.clone()})
					}
				}
				moved = append(moved, i)
			}
			r += len(sd.Chunks)
		}
	}
	si, err := d.newSegment(ctx, m, format, m.Config.Dim, docs, newMatrix(format, m.Config.Dim, rows), snt)
	if err != nil {
		return err
	}
	for _, i := range moved {
		m.Docs[i].Segment = si.Name
	}
	m.Segments = append(m.Segments, si)
	return nil
}

// isVersion2 reports whether segment file name is in version 2 (an
// unreadable one counts as version 2: compaction leaves it to the checks).
func (d *Dir) isVersion2(name string) bool {
	v2, err := isSegment2(filepath.Join(d.path, name))
	return v2 || err != nil
}

// collectGarbage deletes segment files (of every kind listedFiles knows)
// that m does not name, and manifests a writer left half written (and
// "MANIFEST.tmp", which writers before atomicfile left). It runs under the writer lock, so no
// writer is creating them; readers with an older snapshot re-read the
// manifest when a segment has gone.
func (d *Dir) collectGarbage(m *manifest) {
	keep := map[string]bool{}
	for _, f := range listedFiles(m) {
		keep[f.Name] = true
	}
	ents, err := os.ReadDir(d.path)
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		if (strings.HasPrefix(n, "seg-") && slices.ContainsFunc(segFileSuffixes, func(s string) bool { return strings.HasSuffix(n, s) }) && !keep[n]) ||
			atomicfile.IsTemp(n, manifestName) || n == manifestName+".tmp" {
			os.Remove(filepath.Join(d.path, n))
		}
	}
}
