package index

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/ctxsel/ctxsel/fusion"
	"github.com/ctxsel/ctxsel/lexical"
	"github.com/ctxsel/ctxsel/score"
)

// lexView is a snapshot's lexical side: one lexSeg per segment (same order,
// same rows) and the BM25 corpus statistics of the live rows.
type lexView struct {
	segs  []*lexSeg
	dead  []int // per segment, rows not live
	n     int   // live rows
	total int64 // their summed lengths in terms
}

// writeLexical builds and writes the lexical file of the segment si holding
// docs, recording it in si. Called before the manifest naming si is
// published, so postings and vectors commit together.
func (d *Dir) writeLexical(si *segInfo, docs []segDoc) error {
	size, crc, err := writeLexical(filepath.Join(d.path, lexName(si.Name)), buildLexical(docs))
	if err != nil {
		return fmt.Errorf("index %s: write lexical postings: %w", d.path, err)
	}
	si.LexSize, si.LexCRC = size, crc
	return nil
}

// addMissingLexical writes the lexical files of segments written before
// they existed, so an old index gains them on its next commit (readers
// build the postings in memory until then: see loadLexical).
func (d *Dir) addMissingLexical(ctx context.Context, m *manifest) error {
	for i := range m.Segments {
		si := &m.Segments[i]
		if si.LexSize != 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		seg, err := readSegment(filepath.Join(d.path, si.Name), si.Name, si.Size, si.CRC)
		if err != nil {
			return fmt.Errorf("index %s: lexical postings: %w", d.path, err)
		}
		if err := d.writeLexical(si, seg.allDocs()); err != nil {
			return err
		}
	}
	return nil
}

// loadLexical fills s.lex: each segment's lexical file, verified against
// the manifest (reused from the previous snapshot when unchanged), or, for
// a segment written before lexical files existed, postings built in memory
// from its texts. Either way BM25 scores every live chunk; a dense result
// is never passed off as a lexical one.
func (d *Dir) loadLexical(s *snapshot) error {
	prev := map[string]*lexSeg{}
	if d.snap != nil {
		for i, sg := range d.snap.segs {
			if i < len(d.snap.lex.segs) {
				prev[sg.name] = d.snap.lex.segs[i]
			}
		}
	}
	lxs := make([]*lexSeg, len(s.man.Segments))
	err := inParallel(len(lxs), func(i int) error {
		si, seg := s.man.Segments[i], s.segs[i]
		lx := prev[si.Name]
		if lx == nil || lx.size != si.LexSize || lx.crc != si.LexCRC || len(lx.lens) != seg.mat.n {
			if si.LexSize == 0 {
				lx = buildLexical(seg.allDocs())
			} else {
				var err error
				if lx, err = openLexical(filepath.Join(d.path, lexName(si.Name)), si.LexSize, si.LexCRC, seg.mat.n); err != nil {
					return err
				}
			}
		}
		lxs[i] = lx
		return nil
	})
	if err != nil {
		return err
	}
	for i, lx := range lxs {
		s.lex.segs = append(s.lex.segs, lx)
		// the corpus statistics: the file's totals less its dead rows
		dead, deadLen := 0, int64(0)
		for r, live := range s.live[i] {
			if !live {
				dead++
				deadLen += int64(lx.lens[r])
			}
		}
		s.lex.n += len(lx.lens) - dead
		s.lex.total += lx.total - deadLen
		s.lex.dead = append(s.lex.dead, dead)
	}
	return nil
}

// lcand is a row with an exact (float64) score.
type lcand struct {
	score float64
	seg   int32
	row   int32
}

// bm25 scores every live row holding a query term with lexical.Default
// over the live rows as the corpus: the scores lexical.Default.Score gives
// the live chunks' texts. acc holds them by global row (0 = no term), and
// hits lists the rows scored, unordered. Rows are split across workers
// goroutines; each sums a row's terms in query order, as lexical.Score
// does, so the result does not depend on the split.
func (s *snapshot) bm25(ctx context.Context, terms []string, workers int) (acc []float64, hits []lcand, err error) {
	acc = make([]float64, s.rows)
	if s.lex.n == 0 || len(terms) == 0 {
		return acc, nil, nil
	}
	avg := float64(s.lex.total) / float64(s.lex.n)
	// each segment's postings of the query terms, looked up once
	posts := make([][]postings, len(s.lex.segs))
	for si, lx := range s.lex.segs {
		posts[si] = make([]postings, len(terms))
		for ti, t := range terms {
			if posts[si][ti], err = lx.lookup(t); err != nil {
				return nil, nil, err
			}
		}
	}
	idf := make([]float64, len(terms)) // 0: the term occurs in no live row
	for ti := range terms {
		df := 0
		for si := range s.lex.segs {
			rows := posts[si][ti].rows
			if s.lex.dead[si] == 0 {
				df += len(rows)
				continue
			}
			live := s.live[si]
			for _, r := range rows {
				if live[r] {
					df++
				}
			}
		}
		if df > 0 {
			idf[ti] = lexical.IDF(s.lex.n, df)
		}
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, s.rows/minRowsPerWorker))
	parts := make([][]lcand, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := s.rows*w/workers, s.rows*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer catchFault(&errs[w])()
			parts[w], errs[w] = s.bm25Rows(ctx, posts, idf, avg, lo, hi, acc)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, nil, err
		}
	}
	for _, p := range parts {
		hits = append(hits, p...)
	}
	return acc, hits, nil
}

// bm25Rows accumulates the scores of global rows [lo, hi) into acc and
// returns the rows it scored, with their scores.
func (s *snapshot) bm25Rows(ctx context.Context, posts [][]postings, idf []float64, avg float64, lo, hi int, acc []float64) ([]lcand, error) {
	var hits []lcand
	base := 0
	for si, lx := range s.lex.segs {
		n := len(lx.lens)
		a, b := max(lo, base)-base, min(hi, base+n)-base
		if a < b {
			live := s.live[si]
			for ti, p := range posts[si] { // query order, as lexical.Score sums
				if idf[ti] == 0 {
					continue
				}
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				i, _ := slices.BinarySearch(p.rows, uint32(a))
				for ; i < len(p.rows) && int(p.rows[i]) < b; i++ {
					r := p.rows[i]
					if !live[r] {
						continue
					}
					g := base + int(r)
					if acc[g] == 0 {
						hits = append(hits, lcand{seg: int32(si), row: int32(r)})
					}
					acc[g] += lexical.Default.Weight(idf[ti], int(p.tfs[i]), int(lx.lens[r]), avg)
				}
			}
		}
		base += n
	}
	bases := s.bases()
	for i := range hits {
		hits[i].score = acc[bases[hits[i].seg]+int(hits[i].row)]
	}
	return hits, nil
}

// bases are the global row index of each segment's first row.
func (s *snapshot) bases() []int {
	out := make([]int, len(s.segs))
	b := 0
	for i, sg := range s.segs {
		out[i] = b
		b += sg.mat.n
	}
	return out
}

// compareL orders rows best first: score, then document id, then chunk
// index, as every Store does.
func (s *snapshot) compareL(a, b lcand) int {
	if a.score != b.score {
		return cmp.Compare(b.score, a.score)
	}
	sa, sb := s.segs[a.seg], s.segs[b.seg]
	if c := strings.Compare(sa.rowDocID(a.row), sb.rowDocID(b.row)); c != 0 {
		return c
	}
	return cmp.Compare(sa.rowIdx[a.row], sb.rowIdx[b.row])
}

// best returns the limit best of cs, best first (cs is reordered).
func (s *snapshot) best(cs []lcand, limit int) []lcand {
	if len(cs) > 4*limit {
		// keep roughly the top scores before sorting: a floor from a
		// partial selection on scores alone, ties kept
		scores := make([]float64, len(cs))
		for i, c := range cs {
			scores[i] = c.score
		}
		floor := kthLargest(scores, limit)
		cs = slices.DeleteFunc(cs, func(c lcand) bool { return c.score < floor })
	}
	slices.SortFunc(cs, s.compareL)
	return cs[:min(limit, len(cs))]
}

// kthLargest returns the k-th largest of v (1 ≤ k ≤ len(v)), keeping a
// min-heap of the k largest seen.
func kthLargest(v []float64, k int) float64 {
	h := make([]float64, 0, k)
	down := func(i int) {
		for {
			l := 2*i + 1
			if l >= len(h) {
				return
			}
			if r := l + 1; r < len(h) && h[r] < h[l] {
				l = r
			}
			if h[i] <= h[l] {
				return
			}
			h[i], h[l] = h[l], h[i]
			i = l
		}
	}
	for _, x := range v {
		switch {
		case len(h) < k:
			h = append(h, x)
			for i := len(h) - 1; i > 0 && h[(i-1)/2] > h[i]; i = (i - 1) / 2 {
				h[i], h[(i-1)/2] = h[(i-1)/2], h[i]
			}
		case x > h[0]:
			h[0] = x
			down(0)
		}
	}
	return h[0]
}

// lexSearch returns the limit best rows by BM25.
func (s *snapshot) lexSearch(ctx context.Context, text string, limit, workers int) ([]Hit, error) {
	_, hits, err := s.bm25(ctx, lexical.QueryTerms(text), workers)
	if err != nil {
		return nil, err
	}
	return s.hits(s.best(hits, limit)), nil
}

func (s *snapshot) hits(cs []lcand) []Hit {
	out := make([]Hit, len(cs))
	for i, c := range cs {
		out[i] = s.hit(cand{seg: c.seg, row: c.row})
		out[i].Score = c.score
	}
	return out
}

// hybrid fuses two lists, as Weaviate's hybrid query does: the limit best
// rows by cosine and the limit best by BM25. Each list is normalised over
// its own members (score.FuseLists); a row missing from one list takes that
// list's floor; the alpha-weighted sum (alpha on the dense side) ranks the
// union, of which the limit best are returned.
func (s *snapshot) hybrid(ctx context.Context, q []float32, text string, limit, workers int, m fusion.Method, alpha float64) ([]Hit, error) {
	dense, err := s.searchCands(ctx, q, limit, workers)
	if err != nil {
		return nil, err
	}
	_, lex, err := s.bm25(ctx, lexical.QueryTerms(text), workers)
	if err != nil {
		return nil, err
	}
	lex = s.best(lex, limit)
	bases := s.bases()
	ds := make([]float64, len(dense))
	dk := make([]int, len(dense))
	for i, c := range dense {
		ds[i], dk[i] = float64(c.score), bases[c.seg]+int(c.row)
	}
	ls := make([]float64, len(lex))
	lk := make([]int, len(lex))
	for i, c := range lex {
		ls[i], lk[i] = c.score, bases[c.seg]+int(c.row)
	}
	keys, fused, err := score.FuseLists(m, alpha, dk, ds, lk, ls)
	if err != nil {
		return nil, invalidf("%v", err)
	}
	union := make([]lcand, len(keys))
	byKey := make(map[int]lcand, len(dense)+len(lex))
	for _, c := range dense {
		byKey[bases[c.seg]+int(c.row)] = lcand{seg: c.seg, row: c.row}
	}
	for _, c := range lex {
		byKey[bases[c.seg]+int(c.row)] = lcand{seg: c.seg, row: c.row}
	}
	for i, k := range keys {
		union[i] = byKey[k]
		union[i].score = fused[i]
	}
	return s.hits(s.best(union, limit)), nil
}
