package index

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

// Benchmarks of the exact scan. Brute-force scoring is memory-bound, so
// each measurement is followed by a plain copy of the float32 matrix timed in
// the same run (best of 3), and reported against it:
//
//	go test ./index -run '^$' -bench Scan -benchtime 20x
//
// Sub-benchmarks per size: copy (bytes copied per second: each byte read
// once and written once), score/FORMAT (the bare parallel scan, no
// ranking) and search/FORMAT (the whole Search with the top 1000). Metrics:
// MB/s of stored vector bytes read, queries/s, of_copy (MB/s over the copy
// bandwidth), f32eq_of_copy (the float32 matrix size over the query time,
// over the copy bandwidth: how far a compact format beats the float32
// memory bound) and copy_MB/s (the copy measured right after).

const benchDim = 512

var benchSizes = []struct {
	name string
	n    int
}{{"100k", 100_000}, {"1M", 1_000_000}}

type benchData struct {
	queries  [][]float32
	mats     map[Format]matrix
	dst      []float32 // copy target
	snapshot map[Format]*snapshot
}

var (
	benchMu    sync.Mutex
	benchCache = map[int]*benchData{}
)

// clustered returns n unit vectors (row-major, flat) drawn around nc
// random centres, the way real embeddings bunch by topic, and nq queries
// near random centres.
func clustered(n, nq, dim int, seed uint64) (flat []float32, queries [][]float32) {
	r := rand.New(rand.NewPCG(seed, 7))
	const nc = 256
	centres := make([][]float32, nc)
	for i := range centres {
		centres[i] = randUnit(r, dim)
	}
	x := seed | 1 // xorshift noise: rand per component is too slow for 1M×512
	noise := func() float32 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		return float32(x>>40)/(1<<24)*2 - 1
	}
	gen := func(dst, c []float32, spread float32) {
		var ss float64
		for j := range dst {
			v := c[j] + spread*0.1*noise()
			dst[j] = v
			ss += float64(v) * float64(v)
		}
		inv := float32(1 / math.Sqrt(ss))
		for j := range dst {
			dst[j] *= inv
		}
	}
	flat = make([]float32, n*dim)
	for i := range n {
		gen(flat[i*dim:(i+1)*dim], centres[r.IntN(nc)], 1+float32(r.Float64()))
	}
	queries = make([][]float32, nq)
	for i := range queries {
		queries[i] = make([]float32, dim)
		gen(queries[i], centres[r.IntN(nc)], 1.5)
	}
	return flat, queries
}

// fromFlat encodes a flat float32 matrix in format f (F32 shares it).
func fromFlat(f Format, dim int, flat []float32) matrix {
	n := len(flat) / dim
	m := matrix{format: f, dim: dim, n: n}
	switch f {
	case F32:
		m.f32 = flat
	case F16:
		m.f16 = make([]uint16, len(flat))
		for i, x := range flat {
			m.f16[i] = f32ToF16(x)
		}
	case I8:
		m.i8 = make([]int8, 0, len(flat))
		m.scale = make([]float32, n)
		for r := range n {
			q, s := quantizeI8(flat[r*dim : (r+1)*dim])
			m.i8 = append(m.i8, q...)
			m.scale[r] = s
		}
	}
	return m
}

func getBench(b *testing.B, n int) *benchData {
	benchMu.Lock()
	defer benchMu.Unlock()
	if d := benchCache[n]; d != nil {
		return d
	}
	clear(benchCache) // one size in memory at a time
	runtime.GC()
	start := time.Now()
	d := &benchData{mats: map[Format]matrix{}, snapshot: map[Format]*snapshot{}}
	flat, queries := clustered(n, 16, benchDim, 42)
	d.queries = queries
	for _, f := range []Format{F32, F16, I8} {
		d.mats[f] = fromFlat(f, benchDim, flat)
		d.snapshot[f] = syntheticSnapshot(d.mats[f])
	}
	d.dst = make([]float32, len(flat))
	copy(d.dst, flat) // fault the pages in
	b.Logf("generated %d×%d vectors in %v", n, benchDim, time.Since(start).Round(time.Millisecond))
	benchCache[n] = d
	return d
}

// copyBandwidth times a copy of the float32 matrix: bytes copied per
// second, best of 3.
func (d *benchData) copyBandwidth() float64 {
	src := d.mats[F32].f32
	best := time.Duration(1<<63 - 1)
	for range 3 {
		t := time.Now()
		copy(d.dst, src)
		best = min(best, time.Since(t))
	}
	return float64(len(src)*4) / best.Seconds()
}

// syntheticSnapshot wraps a matrix as a one-segment index, 10 chunks a
// document, every row live.
func syntheticSnapshot(m matrix) *snapshot {
	seg := &segment{name: "bench", mat: m, rowDoc: make([]int32, m.n), rowIdx: make([]int32, m.n)}
	for r := 0; r < m.n; r += 10 {
		k := min(10, m.n-r)
		seg.docs = append(seg.docs, segDoc{ID: fmt.Sprintf("doc%07d", r/10), Chunks: make([][5]int, k)})
		for i := range k {
			seg.rowDoc[r+i] = int32(len(seg.docs) - 1)
			seg.rowIdx[r+i] = int32(i)
		}
	}
	live := make([]bool, m.n)
	for i := range live {
		live[i] = true
	}
	return &snapshot{man: &manifest{Config: Config{Dim: m.dim}}, segs: []*segment{seg}, live: [][]bool{live}, rows: m.n}
}

func matBytes(m matrix) int64 { return int64(m.n) * int64(m.dim) * int64(m.format.elemSize()) }

// BenchmarkScan measures, per size: a plain copy, the bare parallel scan
// and the whole Search with the top 1000 candidates ctxsel asks for.
func BenchmarkScan(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			b.Run("copy", func(b *testing.B) {
				d := getBench(b, sz.n)
				src := d.mats[F32].f32
				b.SetBytes(int64(len(src)) * 4)
				b.ResetTimer()
				for b.Loop() {
					copy(d.dst, src)
				}
			})
			for _, f := range []Format{F32, F16, I8} {
				b.Run("score/"+f.String(), func(b *testing.B) {
					d := getBench(b, sz.n)
					m := d.mats[f]
					w := runtime.GOMAXPROCS(0)
					outs := make([][]float32, w)
					for i := range outs {
						outs[i] = make([]float32, block)
					}
					b.SetBytes(matBytes(m))
					b.ResetTimer()
					k := 0
					for b.Loop() {
						q := d.queries[k%len(d.queries)]
						k++
						var wg sync.WaitGroup
						for i := range w {
							lo, hi := m.n*i/w, m.n*(i+1)/w
							wg.Add(1)
							go func() {
								defer wg.Done()
								for r := lo; r < hi; r += block {
									m.scores(q, r, outs[i][:min(block, hi-r)])
								}
							}()
						}
						wg.Wait()
					}
					report(b, d, m)
				})
			}
			for _, f := range []Format{F32, F16, I8} {
				b.Run("search/"+f.String(), func(b *testing.B) {
					d := getBench(b, sz.n)
					s := d.snapshot[f]
					b.SetBytes(matBytes(d.mats[f]))
					b.ResetTimer()
					k := 0
					for b.Loop() {
						if _, err := s.search(context.Background(), d.queries[k%len(d.queries)], 1000, 0); err != nil {
							b.Fatal(err)
						}
						k++
					}
					report(b, d, d.mats[f])
					if f != F32 {
						for _, at := range []int{10, 1000} {
							b.ReportMetric(recallVsF32(b, d.snapshot[F32], s, d.queries, at), fmt.Sprintf("recall@%d", at))
						}
					}
				})
			}
		})
	}
}

func report(b *testing.B, d *benchData, m matrix) {
	b.StopTimer()
	perOp := b.Elapsed().Seconds() / float64(b.N)
	bw := d.copyBandwidth()
	b.ReportMetric(1/perOp, "queries/s")
	b.ReportMetric(float64(matBytes(m))/perOp/bw, "of_copy")
	b.ReportMetric(float64(matBytes(d.mats[F32]))/perOp/bw, "f32eq_of_copy")
	b.ReportMetric(bw/1e6, "copy_MB/s")
}

// recallVsF32 is the mean overlap of the top k of s with the float32
// snapshot's top k, over the queries.
func recallVsF32(tb testing.TB, exact, s *snapshot, queries [][]float32, k int) float64 {
	tb.Helper()
	var sum float64
	for _, q := range queries {
		want, err := exact.search(context.Background(), q, k, 0)
		if err != nil {
			tb.Fatal(err)
		}
		got, err := s.search(context.Background(), q, k, 0)
		if err != nil {
			tb.Fatal(err)
		}
		in := map[string]bool{}
		for _, h := range want {
			in[h.ID()] = true
		}
		n := 0
		for _, h := range got {
			if in[h.ID()] {
				n++
			}
		}
		sum += float64(n) / float64(len(want))
	}
	return sum / float64(len(queries))
}

// TestCompactRecall measures what the compact formats cost: the overlap of
// their top k with float32's on clustered data (the benchmark reports the
// same at 100k and 1M rows).
func TestCompactRecall(t *testing.T) {
	n := 20_000
	if testing.Short() {
		n = 5_000
	}
	flat, queries := clustered(n, 16, benchDim, 9)
	exact := syntheticSnapshot(fromFlat(F32, benchDim, flat))
	min := map[Format]map[int]float64{F16: {10: 0.99, 100: 0.99, 1000: 0.99}, I8: {10: 0.9, 100: 0.93, 1000: 0.95}}
	for _, f := range []Format{F16, I8} {
		s := syntheticSnapshot(fromFlat(f, benchDim, flat))
		for _, k := range []int{10, 100, 1000} {
			r := recallVsF32(t, exact, s, queries, k)
			t.Logf("%s: top-%d overlap with f32 %.4f (%d rows, %d queries)", f, k, r, n, len(queries))
			if r < min[f][k] {
				t.Errorf("%s recall@%d = %.4f, want at least %.2f", f, k, r, min[f][k])
			}
		}
	}
}

// BenchmarkScanBound measures the scan against the memory bound it is held
// to: a parallel read-only sweep over the same bytes, split the same way over
// the same number of goroutines (GOMAXPROCS), that does nothing with them but
// a running sum no compiler can drop. The copy of BenchmarkScan is no bound:
// it runs on one core and writes every byte it reads.
//
//	go test ./index -run '^$' -bench ScanBound -benchtime 20x
//
// Metrics: MB/s of the scan (stored vector bytes), sweep_MB/s (the sweep,
// best of 3, timed right after) and of_sweep (scan over sweep; 1 = the
// scan reads as fast as anything can).
func BenchmarkScanBound(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			for _, f := range []Format{F32, F16, I8} {
				b.Run(f.String(), func(b *testing.B) {
					d := getBench(b, sz.n)
					m := d.mats[f]
					w := runtime.GOMAXPROCS(0)
					outs := make([][]float32, w)
					for i := range outs {
						outs[i] = make([]float32, block)
					}
					b.SetBytes(matBytes(m))
					b.ResetTimer()
					k := 0
					for b.Loop() {
						q := d.queries[k%len(d.queries)]
						k++
						var wg sync.WaitGroup
						for i := range w {
							lo, hi := m.n*i/w, m.n*(i+1)/w
							wg.Add(1)
							go func() {
								defer wg.Done()
								for r := lo; r < hi; r += block {
									m.scores(q, r, outs[i][:min(block, hi-r)])
								}
							}()
						}
						wg.Wait()
					}
					b.StopTimer()
					scan := float64(matBytes(m)) * float64(b.N) / b.Elapsed().Seconds()
					sweep := sweepBandwidth(matrixBytes(m), w)
					b.ReportMetric(sweep/1e6, "sweep_MB/s")
					b.ReportMetric(scan/sweep, "of_sweep")
				})
			}
		})
	}
}

// matrixBytes views a matrix's stored vectors as bytes.
func matrixBytes(m matrix) []byte {
	switch m.format {
	case F16:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(m.f16))), len(m.f16)*2)
	case I8:
		return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(m.i8))), len(m.i8))
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(m.f32))), len(m.f32)*4)
}

var sweepSink atomic.Int64

// sweepBandwidth reads every byte of data once with w goroutines, each over
// its own contiguous share, and returns bytes per second (best of 3). The
// read is bytes.Count of one byte value: the standard library's vectorised
// (AVX2 on amd64) loop, which reads and compares and keeps nothing, so it
// goes as fast as memory delivers.
func sweepBandwidth(data []byte, w int) float64 {
	best := time.Duration(1<<63 - 1)
	for range 3 {
		t := time.Now()
		var wg sync.WaitGroup
		for i := range w {
			part := data[len(data)*i/w : len(data)*(i+1)/w]
			wg.Add(1)
			go func() {
				defer wg.Done()
				sweepSink.Add(int64(bytes.Count(part, []byte{0x5a})))
			}()
		}
		wg.Wait()
		best = min(best, time.Since(t))
	}
	return float64(len(data)) / best.Seconds()
}
