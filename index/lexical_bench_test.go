package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ctxsel/ctxsel/fusion"
	"github.com/ctxsel/ctxsel/lexical"
)

// Benchmarks of the lexical side, on synthetic chunks whose terms follow a
// Zipf law (s = 1.07) over a 50,000-term vocabulary, about what a 600-token
// chunk holds once stop words are dropped (250 terms):
//
//	go test ./index -run '^$' -bench 'Hybrid|LexicalIndex' -benchtime 20x -cpu 1
//
// BenchmarkHybrid runs, per size, the dense Search (the baseline, the same
// as BenchmarkScan's search/f32), BM25 alone and the hybrid query, each for
// the top 1000, and reports each as a ratio to the dense query timed in the
// same run (of_dense). BenchmarkLexicalIndex reports chunks/s (and per
// CPU-second) of building and encoding a segment's postings, the same for
// the reference builder (refBuildLexical: the tokenizer and builder before
// lexical.Vocab) timed alternately with it, their ratio (of_reference), and
// the build over bare tokenization (lexical.Terms, of_terms).

const (
	benchVocab    = 50_000
	benchPerChunk = 250
	benchZipfS    = 1.07
)

var benchTermNames = func() []string {
	out := make([]string, benchVocab)
	for i := range out {
		out[i] = fmt.Sprintf("w%d", i)
	}
	return out
}()

// syntheticLexical builds the postings of n chunks of benchPerChunk Zipfian
// terms, in parallel parts merged in row order.
func syntheticLexical(n int, seed uint64) *lexSeg {
	parts := runtime.GOMAXPROCS(0)
	res := make([]*lexSeg, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lo, hi := n*p/parts, n*(p+1)/parts
			r := rand.New(rand.NewPCG(seed, uint64(p)))
			z := rand.NewZipf(r, benchZipfS, 1, benchVocab-1)
			lx := &lexSeg{lens: make([]uint32, 0, hi-lo), posts: map[string]postings{}}
			tf := map[uint64]uint32{}
			for row := lo; row < hi; row++ {
				clear(tf)
				for range benchPerChunk {
					tf[z.Uint64()]++
				}
				lx.lens = append(lx.lens, benchPerChunk)
				for t, f := range tf {
					ps := lx.posts[benchTermNames[t]]
					ps.rows = append(ps.rows, uint32(row))
					ps.tfs = append(ps.tfs, f)
					lx.posts[benchTermNames[t]] = ps
				}
			}
			res[p] = lx
		}()
	}
	wg.Wait()
	all := &lexSeg{lens: make([]uint32, 0, n), posts: map[string]postings{}}
	for _, lx := range res {
		all.lens = append(all.lens, lx.lens...)
		for t, ps := range lx.posts {
			a := all.posts[t]
			a.rows = append(a.rows, ps.rows...)
			a.tfs = append(a.tfs, ps.tfs...)
			all.posts[t] = a
		}
	}
	return all
}

// benchQueries are questions of 4 Zipfian terms, as a user's question
// draws on the same vocabulary as the documents.
func benchQueries(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 99))
	z := rand.NewZipf(r, benchZipfS, 1, benchVocab-1)
	out := make([]string, n)
	for i := range out {
		var ws []string
		for range 4 {
			ws = append(ws, benchTermNames[z.Uint64()])
		}
		out[i] = strings.Join(ws, " ")
	}
	return out
}

func BenchmarkHybrid(b *testing.B) {
	ctx := context.Background()
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			benchMu.Lock()
			clear(benchCache) // the vector benchmarks' data: one size in memory at a time
			benchMu.Unlock()
			runtime.GC()
			start := time.Now()
			flat, queries := clustered(sz.n, 16, benchDim, 42)
			s := *syntheticSnapshot(fromFlat(F32, benchDim, flat))
			b.Logf("generated %d×%d vectors in %v", sz.n, benchDim, time.Since(start).Round(time.Millisecond))
			start = time.Now()
			lx := syntheticLexical(sz.n, 5)
			s.lex = lexView{segs: []*lexSeg{lx}, dead: []int{0}, n: sz.n, total: int64(sz.n) * benchPerChunk}
			postingsN := 0
			for _, p := range lx.posts {
				postingsN += len(p.rows)
			}
			b.Logf("built %d postings of %d terms in %v", postingsN, len(lx.posts), time.Since(start).Round(time.Millisecond))
			texts := benchQueries(len(queries), 17)
			dense := func(i int) error {
				_, err := s.search(ctx, queries[i], 1000, 0)
				return err
			}
			// each query is followed by the dense baseline on the same
			// question, so load on the machine hits both alike
			for _, c := range []struct {
				name string
				f    func(i int) error
			}{
				{"dense", dense},
				{"bm25", func(i int) error { _, err := s.lexSearch(ctx, texts[i], 1000, 0); return err }},
				{"hybrid", func(i int) error {
					_, err := s.hybrid(ctx, queries[i], texts[i], 1000, 0, fusion.ZScore, 0.5)
					return err
				}},
			} {
				b.Run(c.name, func(b *testing.B) {
					var own, base time.Duration
					for i := range b.N {
						q := i % len(queries)
						t0 := time.Now()
						if err := c.f(q); err != nil {
							b.Fatal(err)
						}
						t1 := time.Now()
						if err := dense(q); err != nil {
							b.Fatal(err)
						}
						own, base = own+t1.Sub(t0), base+time.Since(t1)
					}
					b.ReportMetric(own.Seconds()*1000/float64(b.N), "ms/query")
					b.ReportMetric(float64(own)/float64(base), "of_dense")
				})
			}
		})
	}
}

// benchChunkTexts returns n chunk texts of perChunk Zipfian terms with
// stop words (80 % as many) and punctuation, as lexical.Terms meets them.
func benchChunkTexts(n, perChunk int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 3))
	z := rand.NewZipf(r, benchZipfS, 1, benchVocab-1)
	stops := strings.Fields("the of and a to in is was it for on with as by at from that this which were")
	out := make([]string, n)
	var sb strings.Builder
	for i := range out {
		sb.Reset()
		for k := 0; k < perChunk; k++ {
			sb.WriteString(benchTermNames[z.Uint64()])
			sb.WriteByte(' ')
			if r.IntN(10) < 8 {
				sb.WriteString(stops[r.IntN(len(stops))])
				sb.WriteByte(' ')
			}
			if r.IntN(15) == 0 {
				sb.WriteString(". ")
			}
		}
		out[i] = sb.String()
	}
	return out
}

func BenchmarkLexicalIndex(b *testing.B) {
	// 250 terms ≈ a 600-token chunk (the default chunker), 80 ≈ 200 tokens
	for _, per := range []int{benchPerChunk, 80} {
		b.Run(fmt.Sprintf("terms=%d", per), func(b *testing.B) { benchLexicalIndex(b, per) })
	}
}

func benchLexicalIndex(b *testing.B, per int) {
	const n = 20_000
	texts := benchChunkTexts(n, per, 11)
	// one segment of documents of 10 chunks each, as Add writes them
	var docs []segDoc
	for i := 0; i < n; i += 10 {
		var sb strings.Builder
		d := segDoc{ID: fmt.Sprintf("d%d", i)}
		for _, t := range texts[i:min(i+10, n)] {
			lo := sb.Len()
			sb.WriteString(t)
			d.Chunks = append(d.Chunks, [5]int{lo, sb.Len(), 0, 0, 0})
		}
		d.Text = sb.String()
		docs = append(docs, d)
	}
	terms := func() time.Duration {
		t := time.Now()
		for _, x := range texts {
			_ = lexical.Terms(x)
		}
		return time.Since(t)
	}
	// each build is followed by the reference builder's (the tokenizer and
	// builder before lexical.Vocab) on the same docs, so load on the
	// machine hits both alike; of_reference is the ratio of CPU times
	b.Run("postings", func(b *testing.B) {
		var size int
		var wall, cpu, refCPU time.Duration
		b.ResetTimer()
		for range b.N {
			t, c := time.Now(), processCPU()
			size = len(buildLexical(docs).encode())
			wall += time.Since(t)
			c2 := processCPU()
			cpu += c2 - c
			if ref := len(refBuildLexical(docs).encode()); ref != size {
				b.Fatalf("%d bytes, the reference wrote %d", size, ref)
			}
			refCPU += processCPU() - c2
		}
		b.StopTimer()
		per := wall / time.Duration(b.N)
		b.ReportMetric(float64(n)/per.Seconds(), "chunks/s")
		if cpu > 0 && refCPU > 0 {
			// per core whatever else the machine runs (GC threads included)
			b.ReportMetric(float64(n)*float64(b.N)/cpu.Seconds(), "chunks/cpu-s")
			b.ReportMetric(float64(n)*float64(b.N)/refCPU.Seconds(), "ref_chunks/cpu-s")
			b.ReportMetric(float64(cpu)/float64(refCPU), "of_reference")
		}
		b.ReportMetric(float64(size)/n, "bytes/chunk")
		base := min(terms(), terms(), terms())
		b.ReportMetric(float64(per)/float64(base), "of_terms")
	})
}
