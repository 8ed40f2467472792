package index

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ctxsel/ctxsel/chunk"
)

// TestOpenTiming times what a fresh process does before its first answer
// on an existing index: open it and run one hybrid query (a random unit
// vector and a text), for the index in CTXSEL_OPEN_INDEX, N times
// (CTXSEL_OPEN_RUNS, default 5), each with a new Dir (nothing cached but
// the operating system's page cache).
func TestOpenTiming(t *testing.T) {
	dir := os.Getenv("CTXSEL_OPEN_INDEX")
	if dir == "" {
		t.Skip("set CTXSEL_OPEN_INDEX=DIR to time opening an index")
	}
	ctx := context.Background()
	runs := 5
	if s := os.Getenv("CTXSEL_OPEN_RUNS"); s != "" {
		if n, err := parseInt(s); err == nil {
			runs = n
		}
	}
	var best, sum time.Duration
	for i := range runs {
		start := time.Now()
		d, err := OpenDir(dir, DirOptions{})
		if err != nil {
			t.Fatal(err)
		}
		st, err := d.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		r := rand.New(rand.NewPCG(uint64(i), 1))
		v := make([]float32, st.Config.Dim)
		var ss float64
		for j := range v {
			v[j] = float32(r.NormFloat64())
			ss += float64(v[j]) * float64(v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(ss))
		}
		opened := time.Since(start)
		hits, err := d.SearchQuery(ctx, Query{Vector: v, Text: "Who is Scrooge's clerk, and what is his name?", Limit: 100})
		if err != nil || len(hits) == 0 {
			t.Fatalf("%d hits, %v", len(hits), err)
		}
		el := time.Since(start)
		sum += el
		if i == 0 || el < best {
			best = el
		}
		t.Logf("run %d: open+stats %v, first hybrid query answered at %v (%d chunks: %.1f µs/chunk)", i, opened, el, st.Chunks, float64(el.Microseconds())/float64(st.Chunks))
		d.Close()
	}
	t.Logf("best %v, mean %v", best, sum/time.Duration(runs))
}

func parseInt(s string) (int, error) {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, os.ErrInvalid
		}
		n = n*10 + int(c-'0')
	}
	return n, nil
}

// BenchmarkOpenFirstQuery times what a fresh process pays on an index of n
// chunks before its first answer: open the directory (manifest), then one
// hybrid query, which maps and verifies every segment and lexical file.
// Each iteration uses a new Dir; the files are in the page cache. Chunks
// are one per document (the manifest's worst case), about 1,500 bytes of
// text each, 512-dimensional float32 vectors; ns/chunk is the per-chunk
// cost that projects the time to larger indexes.
func BenchmarkOpenFirstQuery(b *testing.B) {
	for _, n := range []int{10_000, 20_000} {
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			dir := openBenchIndex(b, n)
			r := rand.New(rand.NewPCG(1, 2))
			q := randUnit(r, benchDim)
			ctx := context.Background()
			for b.Loop() {
				d, err := OpenDir(dir, DirOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if _, err := d.Stats(ctx); err != nil {
					b.Fatal(err)
				}
				hits, err := d.SearchQuery(ctx, Query{Vector: q, Text: "river delta flood sediment w123", Limit: 100})
				if err != nil || len(hits) == 0 {
					b.Fatalf("%d hits, %v", len(hits), err)
				}
				d.Close()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/chunk")
		})
	}
}

// openBenchIndex builds an index of n chunks in a temporary directory.
func openBenchIndex(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	d, err := OpenDir(dir, DirOptions{Create: true})
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(uint64(n), 5))
	z := rand.NewZipf(r, 1.1, 1, 50_000)
	cfg := Config{Model: "bench", Dim: benchDim, Chunker: "c", Encoding: "e"}
	const batch = 2000
	for lo := 0; lo < n; lo += batch {
		var docs []Document
		for i := lo; i < min(n, lo+batch); i++ {
			var sb strings.Builder
			for sb.Len() < 1500 {
				fmt.Fprintf(&sb, "w%d ", z.Uint64())
			}
			text := sb.String()
			id := fmt.Sprintf("doc%07d", i)
			docs = append(docs, Document{ID: id, Hash: id, Source: "/bench/" + id, Text: text,
				Chunks:  []chunk.Chunk{{Doc: id, End: len(text), CharEnd: len(text), Tokens: 300, Text: text}},
				Vectors: [][]float32{randUnit(r, benchDim)}})
		}
		if err := d.Add(context.Background(), cfg, docs); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}
