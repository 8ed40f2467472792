package index

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
)

// snapshot is a consistent view for searching: the segments one manifest
// names, with each row marked live or not.
type snapshot struct {
	man  *manifest
	segs []*segment
	live [][]bool // per segment, per row
	src  map[string]string
	rows int
	lex  lexView // BM25 postings of the same rows (lexical.go)

	// each live document's rows, built on first use (sentences.go)
	rowsOnce sync.Once
	rowsOf   map[string]docRow
}

// Search implements Store: an exact scan of every chunk's vector, split
// across Workers goroutines.
func (d *Dir) Search(ctx context.Context, vec []float32, limit int) (hits []Hit, err error) {
	defer d.afterSearch(&err)
	defer catchFault(&err)()
	if limit <= 0 {
		return nil, invalidf("search limit %d, want at least 1", limit)
	}
	s, err := d.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	if s.rows == 0 {
		return nil, nil
	}
	if len(vec) != s.man.Config.Dim {
		return nil, fmt.Errorf("%w: query vector has dimension %d, the index %d", ErrMismatch, len(vec), s.man.Config.Dim)
	}
	for _, x := range vec {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return nil, invalidf("query vector has a non-finite component")
		}
	}
	return s.search(ctx, Normalize(vec), limit, d.opts.Workers)
}

// Preload starts loading the current snapshot (mapping and verifying the
// files) in the background, so that the first search, which waits for it,
// finds it ready: a one-shot command loads the index while it loads its
// embedding model. Problems are reported by that search.
func (d *Dir) Preload(ctx context.Context) {
	go d.snapshot(context.WithoutCancel(ctx)) //nolint:errcheck // the search reports them
}

// snapshot returns the current view, reloading when the manifest changed.
// Segments are immutable, so those already loaded are reused.
func (d *Dir) snapshot(ctx context.Context) (*snapshot, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st, err := os.Stat(filepath.Join(d.path, manifestName))
		if errors.Is(err, fs.ErrNotExist) {
			return &snapshot{man: &manifest{}}, nil
		}
		if err != nil {
			return nil, fmt.Errorf("index %s: %w", d.path, err)
		}
		if d.snap != nil && sameFileVersion(st, d.snapStat) {
			return d.snap, nil
		}
		m, mst, err := d.sharedManifest()
		if errors.Is(err, fs.ErrNotExist) {
			continue // replaced between stat and open
		}
		if errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("index %s: %w", d.path, err)
		}
		s, err := d.load(ctx, m)
		if errors.Is(err, ErrCorrupt) {
			return nil, err
		}
		if errors.Is(err, fs.ErrNotExist) {
			// a writer compacted the segment away after we read the
			// manifest: read the new one
			lastErr = err
			if m2, _, err2 := readManifest(d.path); err2 == nil && m2.Generation == m.Generation {
				return nil, corruptf(d.path, "the manifest names a missing segment: %v", err)
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("index %s: %w", d.path, err)
		}
		d.snap, d.snapStat = s, mst
		return s, nil
	}
	return nil, fmt.Errorf("index %s: the index kept changing while loading: %w", d.path, lastErr)
}

// load builds a snapshot of m, loading the segments not cached yet.
func (d *Dir) load(ctx context.Context, m *manifest) (*snapshot, error) {
	s := &snapshot{man: m, src: map[string]string{}}
	liveIn := map[string]map[string]bool{} // segment → live doc ids
	for _, e := range m.Docs {
		if e.Segment == "" {
			continue
		}
		if liveIn[e.Segment] == nil {
			liveIn[e.Segment] = map[string]bool{}
		}
		liveIn[e.Segment][e.ID] = true
		if e.Source != "" {
			s.src[e.ID] = e.Source
		}
	}
	// open the segments not loaded yet, in parallel: opening is checking
	// checksums, as fast as the cores read memory
	segs := make([]*segment, len(m.Segments))
	err := inParallel(len(m.Segments), func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		si := m.Segments[i]
		seg := d.loaded[si.Name]
		if seg == nil || seg.size != si.Size || seg.crc != si.CRC {
			var err error
			if seg, err = openSegment(filepath.Join(d.path, si.Name), si.Name, si.Size, si.CRC); err != nil {
				return err
			}
		}
		segs[i] = seg
		return nil
	})
	if err != nil {
		return nil, err
	}
	keep := map[string]*segment{}
	for i, si := range m.Segments {
		seg := segs[i]
		if seg.mat.n > 0 && seg.mat.dim != m.Config.Dim {
			return nil, corruptf(filepath.Join(d.path, si.Name), "dimension %d, the manifest says %d", seg.mat.dim, m.Config.Dim)
		}
		keep[si.Name] = seg
		live := make([]bool, seg.mat.n)
		ids := liveIn[si.Name]
		for r := 0; r < len(live); {
			// a document's rows are consecutive: one lookup per document
			di, on := seg.rowDoc[r], ids[seg.rowDocID(int32(r))]
			for ; r < len(live) && seg.rowDoc[r] == di; r++ {
				live[r] = on
			}
		}
		s.segs = append(s.segs, seg)
		s.live = append(s.live, live)
		s.rows += seg.mat.n
	}
	if err := d.loadLexical(s); err != nil {
		return nil, err
	}
	d.loaded = keep
	return s, nil
}

// inParallel runs f(0..n-1) on up to GOMAXPROCS goroutines and returns
// the error of the lowest i that failed.
func inParallel(n int, f func(i int) error) error {
	errs := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, runtime.GOMAXPROCS(0)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				errs[i] = f(i)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// cand is a scored row during a search.
type cand struct {
	score float32
	seg   int32
	row   int32
}

// topK is a bounded min-heap of the best candidates seen (root = worst kept).
type topK struct {
	s     *snapshot
	items []cand
	limit int
}

// better orders candidates: higher score first, then document id and chunk
// index, so results never depend on scan order.
func (s *snapshot) better(a, b cand) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	sa, sb := s.segs[a.seg], s.segs[b.seg]
	da, db := sa.rowDocID(a.row), sb.rowDocID(b.row)
	if da != db {
		return strings.Compare(da, db) < 0
	}
	return sa.rowIdx[a.row] < sb.rowIdx[b.row]
}

// worse reports whether a ranks after b (the heap keeps its worst at the
// root).
func (t *topK) worse(a, b cand) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return t.s.better(b, a)
}

func (t *topK) up(i int) {
	h := t.items
	for i > 0 {
		p := (i - 1) / 2
		if !t.worse(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (t *topK) down(i int) {
	h := t.items
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		w := l
		if r := l + 1; r < len(h) && t.worse(h[r], h[l]) {
			w = r
		}
		if !t.worse(h[w], h[i]) {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

func (t *topK) offer(c cand) {
	if len(t.items) < t.limit {
		t.items = append(t.items, c)
		t.up(len(t.items) - 1)
		return
	}
	if c.score < t.items[0].score || !t.worse(t.items[0], c) {
		return
	}
	t.items[0] = c
	t.down(0)
}

// pop removes and returns the worst kept candidate.
func (t *topK) pop() cand {
	h := t.items
	c := h[0]
	h[0] = h[len(h)-1]
	t.items = h[:len(h)-1]
	if len(t.items) > 0 {
		t.down(0)
	}
	return c
}

// block is how many rows are scored per kernel call (scores stay in L1/L2).
const block = 1024

// minRowsPerWorker keeps tiny indexes on one goroutine.
const minRowsPerWorker = 8192

// search scores every row against the unit query q and returns the best
// limit live rows.
func (s *snapshot) search(ctx context.Context, q []float32, limit, workers int) ([]Hit, error) {
	cs, err := s.searchCands(ctx, q, limit, workers)
	if err != nil {
		return nil, err
	}
	out := make([]Hit, len(cs))
	for i, c := range cs {
		out[i] = s.hit(c)
	}
	return out, nil
}

// searchCands is search's scan: the best limit live rows, best first.
func (s *snapshot) searchCands(ctx context.Context, q []float32, limit, workers int) ([]cand, error) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, s.rows/minRowsPerWorker))
	heaps := make([]*topK, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := s.rows*w/workers, s.rows*(w+1)/workers
		t := &topK{s: s, limit: limit, items: make([]cand, 0, min(limit, hi-lo))}
		heaps[w] = t
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer catchFault(&errs[w])()
			errs[w] = s.scan(ctx, q, lo, hi, t)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	var all []cand
	for _, t := range heaps {
		all = append(all, t.items...)
	}
	// sort best first and keep limit
	merged := &topK{s: s, limit: limit}
	for _, c := range all {
		merged.offer(c)
	}
	out := make([]cand, len(merged.items))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = merged.pop()
	}
	return out, nil
}

// scan scores global rows [lo, hi) into t.
func (s *snapshot) scan(ctx context.Context, q []float32, lo, hi int, t *topK) error {
	buf := make([]float32, block)
	base := 0
	for si, seg := range s.segs {
		n := seg.mat.n
		a, b := max(lo, base)-base, min(hi, base+n)-base
		base += n
		if a >= b {
			continue
		}
		live := s.live[si]
		for r := a; r < b; r += block {
			if err := ctx.Err(); err != nil {
				return err
			}
			m := min(block, b-r)
			out := buf[:m]
			seg.mat.scores(q, r, out)
			var floor float32
			full := len(t.items) == t.limit
			if full {
				floor = t.items[0].score
			}
			for i, sc := range out {
				if full && sc < floor || !live[r+i] {
					continue
				}
				t.offer(cand{score: sc, seg: int32(si), row: int32(r + i)})
				if full = len(t.items) == t.limit; full {
					floor = t.items[0].score
				}
			}
		}
	}
	return nil
}

// hit turns a candidate into a Hit. Its strings are copies: a Hit outlives
// the segment's memory.
func (s *snapshot) hit(c cand) Hit {
	seg := s.segs[c.seg]
	id, text, ch := seg.chunk(c.row)
	h := Hit{Source: s.src[id], Score: float64(c.score)}
	h.Chunk.Doc = strings.Clone(id)
	h.Chunk.Index = int(seg.rowIdx[c.row])
	h.Chunk.Start, h.Chunk.End, h.Chunk.CharStart, h.Chunk.CharEnd, h.Chunk.Tokens = ch[0], ch[1], ch[2], ch[3], ch[4]
	h.Chunk.Text = strings.Clone(text[ch[0]:ch[1]])
	return h
}
