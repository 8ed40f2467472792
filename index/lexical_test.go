package index_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ctxsel/ctxsel/fusion"
	"github.com/ctxsel/ctxsel/index"
	"github.com/ctxsel/ctxsel/index/indextest"
)

var (
	liveChunks = indextest.LiveChunks
	wantBM25   = indextest.WantBM25
	checkBM25  = indextest.CheckBM25
)

// zipfText draws n words from a Zipfian vocabulary.
func zipfText(r *rand.Rand, z *rand.Zipf, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "w%d", z.Uint64())
		if r.IntN(12) == 0 {
			b.WriteString(". The")
		}
	}
	return b.String() + "."
}

// TestBM25EqualsLexical: across several segments, replaced and removed
// documents (dead rows in live segments) and a compaction, the index's BM25
// equals lexical.Default.Score over the live chunks.
func TestBM25EqualsLexical(t *testing.T) {
	for _, format := range []string{"f32", "i8"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			s, err := index.OpenDir(dir, index.DirOptions{Create: true, Vectors: format})
			if err != nil {
				t.Fatal(err)
			}
			c := testChunker(t)
			r := rand.New(rand.NewPCG(1, 2))
			z := rand.NewZipf(r, 1.1, 1, 300)
			queries := []string{"w1 w2", "w3 w17 w100 w250", "w0", "The w5 w5 w5 of", "nothing here w299"}
			for round := range 6 {
				var docs []index.Document
				for k := range 4 {
					id := fmt.Sprintf("d%d", (round*4+k)%13) // ids repeat: replacements
					docs = append(docs, makeDoc(t, c, id, zipfText(r, z, 40+r.IntN(120))))
				}
				if err := s.Add(ctx, testConfig(c), docs); err != nil {
					t.Fatal(err)
				}
				if round%2 == 1 {
					if _, err := s.Remove(ctx, []string{fmt.Sprintf("d%d", round)}); err != nil {
						t.Fatal(err)
					}
				}
				for _, q := range queries {
					checkBM25(t, s, q)
				}
			}
			st, _ := s.Stats(ctx)
			if st.DeadChunks == 0 || st.Segments < 2 {
				t.Fatalf("the test did not exercise dead rows across segments: %+v", st)
			}
			// a fresh handle reads the lexical files from disk
			s2, _ := index.OpenDir(dir, index.DirOptions{})
			for _, q := range queries {
				checkBM25(t, s2, q)
			}
			lex, _ := filepath.Glob(filepath.Join(dir, "seg-*.ctxlex"))
			if len(lex) != st.Segments {
				t.Fatalf("%d lexical files for %d segments", len(lex), st.Segments)
			}
		})
	}
}

// TestHybridFusion recomputes the hybrid ranking from the two single
// retrievers: each one's top limit, fused by fusion.Lists.
func TestHybridFusion(t *testing.T) {
	dir := t.TempDir()
	s, _ := index.OpenDir(dir, index.DirOptions{Create: true})
	c := testChunker(t)
	r := rand.New(rand.NewPCG(3, 4))
	z := rand.NewZipf(r, 1.1, 1, 200)
	var docs []index.Document
	for i := range 30 {
		docs = append(docs, makeDoc(t, c, fmt.Sprintf("d%02d", i), zipfText(r, z, 30+r.IntN(80))))
	}
	if err := s.Add(ctx, testConfig(c), docs); err != nil {
		t.Fatal(err)
	}
	live := liveChunks(t, s)
	const q = "w3 w8 w40 w120"
	vec := indextest.HashVector(q)
	allDense, _ := s.Search(ctx, vec, len(live))
	allLex := wantBM25(live, q)
	for _, m := range []fusion.Method{fusion.ZScore, fusion.MinMax, fusion.RRF} {
		for _, alpha := range []float64{0.5, 0.8} {
			const limit = 10
			var dk, lk []string
			var ds, ls []float64
			for _, h := range allDense[:limit] {
				dk, ds = append(dk, h.ID()), append(ds, h.Score)
			}
			for _, h := range allLex[:limit] {
				lk, ls = append(lk, h.ID()), append(ls, h.Score)
			}
			keys, fused, err := fusion.Lists(m, alpha, dk, ds, lk, ls)
			if err != nil {
				t.Fatal(err)
			}
			var want []index.Hit
			for i, id := range keys {
				h := live[id]
				h.Score = fused[i]
				want = append(want, h)
			}
			index.SortHits(want)
			want = want[:limit]
			got, err := s.SearchQuery(ctx, index.Query{Vector: vec, Text: q, Limit: limit, Fusion: m, Alpha: alpha})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != limit {
				t.Fatalf("%s: %d hits", m, len(got))
			}
			for i := range got {
				if got[i].ID() != want[i].ID() || math.Abs(got[i].Score-want[i].Score) > 1e-6 {
					t.Fatalf("%s alpha %v hit %d: %s %v, want %s %v", m, alpha, i, got[i].ID(), got[i].Score, want[i].ID(), want[i].Score)
				}
			}
		}
	}
	// the hybrid's top differs from both single lists here: fusion did
	// something
	h, _ := s.SearchQuery(ctx, index.Query{Vector: vec, Text: q, Limit: 10})
	if slices.Equal(ids(h), ids(allDense[:10])) || slices.Equal(ids(h), ids(allLex[:10])) {
		t.Fatalf("hybrid equals a single retriever: %v", ids(h))
	}
}

func ids(h []index.Hit) []string {
	out := make([]string, len(h))
	for i, x := range h {
		out[i] = x.ID()
	}
	return out
}

func TestQueryErrors(t *testing.T) {
	s, _ := index.OpenDir(t.TempDir(), index.DirOptions{Create: true})
	fill(t, s, testChunker(t))
	vec := indextest.HashVector("moons")
	for _, q := range []index.Query{
		{Vector: vec, Text: "moons", Limit: 0},
		{Vector: vec, Text: "moons", Limit: 5, Retriever: "sparse"},
		{Vector: vec, Text: "moons", Limit: 5, Alpha: 1.5},
		{Vector: vec, Text: "moons", Limit: 5, Fusion: "max"},
		{Text: "moons", Limit: 5}, // hybrid without a vector
		{Vector: vec, Text: "the of and", Limit: 5, Retriever: index.BM25},
		{Vector: []float32{float32(math.NaN())}, Text: "moons", Limit: 5},
	} {
		if _, err := s.SearchQuery(ctx, q); err == nil {
			t.Errorf("query %+v: no error", q)
		}
	}
	if _, err := s.SearchQuery(ctx, index.Query{Vector: vec[:10], Text: "moons", Limit: 5}); !errors.Is(err, index.ErrMismatch) {
		t.Errorf("short vector: %v", err)
	}
	h, err := s.SearchQuery(ctx, index.Query{Text: "Phobos moons", Limit: 5, Retriever: index.BM25})
	if err != nil || len(h) != 1 || !strings.Contains(h[0].Text, "Phobos") {
		t.Fatalf("bm25 %+v %v", h, err)
	}
}

// TestLexicalCorruption: damage to a lexical file is reported as
// ErrCorrupt and nothing is served from it.
func TestLexicalCorruption(t *testing.T) {
	c := testChunker(t)
	flip := func(t *testing.T, p string, at func(int64) int64) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[at(int64(len(b)))] ^= 0x5a
		os.WriteFile(p, b, 0o644)
	}
	for name, do := range map[string]func(t *testing.T, p string){
		"header byte":   func(t *testing.T, p string) { flip(t, p, func(int64) int64 { return 12 }) },
		"posting byte":  func(t *testing.T, p string) { flip(t, p, func(n int64) int64 { return n / 2 }) },
		"checksum byte": func(t *testing.T, p string) { flip(t, p, func(n int64) int64 { return n - 2 }) },
		"truncated":     func(t *testing.T, p string) { os.Truncate(p, 30) },
		"emptied":       func(t *testing.T, p string) { os.Truncate(p, 0) },
		"deleted":       func(t *testing.T, p string) { os.Remove(p) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			s, _ := index.OpenDir(dir, index.DirOptions{Create: true})
			fill(t, s, c)
			lex, _ := filepath.Glob(filepath.Join(dir, "seg-*.ctxlex"))
			if len(lex) != 1 {
				t.Fatalf("%d lexical files", len(lex))
			}
			do(t, lex[0])
			s2, _ := index.OpenDir(dir, index.DirOptions{})
			for _, r := range []index.Retriever{index.BM25, index.Hybrid, index.Dense} {
				h, err := s2.SearchQuery(ctx, index.Query{Vector: indextest.HashVector("moons"), Text: "moons", Limit: 10, Retriever: r})
				if !errors.Is(err, index.ErrCorrupt) || len(h) != 0 {
					t.Fatalf("%s: want ErrCorrupt and no hits, got %d hits, %v", r, len(h), err)
				}
			}
		})
	}
}

// TestLexicalConcurrentReaders: BM25 readers running while a writer adds
// and removes always see whole documents (every chunk of a document holding
// the query term, or none of it).
func TestLexicalConcurrentReaders(t *testing.T) {
	dir := t.TempDir()
	w, _ := index.OpenDir(dir, index.DirOptions{Create: true})
	c := testChunker(t)
	const perDoc = 5
	mk := func(i int) index.Document {
		var parts []string
		for k := range perDoc {
			parts = append(parts, fmt.Sprintf("Batch%d item%d mentions common word zebra%s.", i, k, strings.Repeat(" filler", 30)))
		}
		return makeDoc(t, c, fmt.Sprintf("doc%03d", i), strings.Join(parts, " "))
	}
	if err := w.Add(ctx, testConfig(c), []index.Document{mk(0)}); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var searches atomic.Int64
	errs := make(chan error, 4)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rd, _ := index.OpenDir(dir, index.DirOptions{})
			for !stop.Load() {
				hits, err := rd.SearchQuery(ctx, index.Query{Text: "zebra", Limit: 10000, Retriever: index.BM25})
				if err != nil {
					errs <- err
					return
				}
				per := map[string]int{}
				for _, h := range hits {
					per[h.Doc]++
				}
				for d, n := range per {
					if n != perDoc {
						errs <- fmt.Errorf("document %s seen with %d of %d chunks", d, n, perDoc)
						return
					}
				}
				searches.Add(1)
			}
		}()
	}
	for i := 1; i <= 25; i++ {
		if err := w.Add(ctx, testConfig(c), []index.Document{mk(i)}); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			w.Remove(ctx, []string{fmt.Sprintf("doc%03d", i-2)})
		}
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkBM25(t, w, "zebra batch3 item2")
	t.Logf("%d concurrent BM25 searches", searches.Load())
}
