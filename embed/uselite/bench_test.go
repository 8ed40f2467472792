package uselite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode"
)

// passages returns count deterministic English-like passages of exactly
// tokens tokens each.
func passages(tb testing.TB, count, tokens int) []string {
	tb.Helper()
	m := newModel(tb, Options{Workers: 1})
	var words []string
	for _, p := range m.w.tok.pieces[reservedPieces:] {
		w, ok := strings.CutPrefix(p, "\u2581")
		if ok && len(w) >= 3 && strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) < 0 {
			words = append(words, w)
		}
	}
	rng := rand.New(rand.NewPCG(1, uint64(tokens)))
	out := make([]string, count)
	for i := range out {
		var sb strings.Builder
		n := 0
		for n < tokens {
			prev := sb.Len()
			w := words[rng.IntN(len(words))]
			if sb.Len() > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(w)
			if rng.IntN(12) == 0 {
				sb.WriteByte('.')
			}
			n = len(m.Tokenize(sb.String()))
			if n > tokens { // overshoot: back out, pad with one-token words
				s := sb.String()[:prev]
				sb.Reset()
				sb.WriteString(s)
				for len(m.Tokenize(sb.String())) < tokens {
					sb.WriteString(" a")
				}
				n = len(m.Tokenize(sb.String()))
			}
		}
		if n != tokens {
			tb.Fatalf("passage has %d tokens, want %d", n, tokens)
		}
		out[i] = sb.String()
	}
	return out
}

// rate reports passages per wall-clock second and per CPU-second of the
// whole process; the latter is steadier when other processes share the
// cores. Call start after setup, stop after the loop.
type rate struct {
	b   *testing.B
	cpu time.Duration
}

func startRate(b *testing.B) *rate { return &rate{b: b, cpu: processCPU()} }

func (r *rate) stop(perOp int) {
	n := float64(r.b.N * perOp)
	r.b.ReportMetric(n/r.b.Elapsed().Seconds(), "passages/s")
	if cpu := processCPU() - r.cpu; cpu > 0 {
		r.b.ReportMetric(n/cpu.Seconds(), "passages/cpu-s")
	}
}

func benchNaive(b *testing.B, tokens int) {
	texts := passages(b, 4, tokens)
	nm := loadNaive(b)
	m := newModel(b, Options{Workers: 1})
	b.ReportAllocs()
	r := startRate(b)
	for i := 0; b.Loop(); i++ {
		raw := m.Tokenize(texts[i%len(texts)])
		ids := make([]int32, len(raw))
		for j, id := range raw {
			ids[j] = int32(id)
		}
		nm.embed(ids)
	}
	r.stop(1)
}

func benchFast(b *testing.B, tokens int, impl *gemmImpl) {
	texts := passages(b, 4, tokens)
	m := newModel(b, Options{Workers: 1, Precision: FP32})
	m.impl = impl
	ctx := context.Background()
	b.ReportAllocs()
	r := startRate(b)
	for i := 0; b.Loop(); i++ {
		if _, err := m.Embed(ctx, texts[i%len(texts):i%len(texts)+1]); err != nil {
			b.Fatal(err)
		}
	}
	r.stop(1)
}

// Baseline: the naive forward pass of naive_test.go (plus tokenization).
func BenchmarkNaive85(b *testing.B)  { benchNaive(b, 85) }
func BenchmarkNaive128(b *testing.B) { benchNaive(b, 128) }

// One passage per Embed call, one worker, fastest float32 kernel for this
// CPU (BenchmarkPrecision compares the precisions).
func BenchmarkFast85(b *testing.B)  { benchFast(b, 85, defaultImpl) }
func BenchmarkFast128(b *testing.B) { benchFast(b, 128, defaultImpl) }

// The same with each available kernel, for comparison.
func BenchmarkKernels(b *testing.B) {
	for _, impl := range gemmImpls() {
		for _, tokens := range []int{85, 128} {
			b.Run(fmt.Sprintf("%s/%d", impl.name, tokens), func(b *testing.B) { benchFast(b, tokens, impl) })
		}
	}
}

// EmbedBatch throughput on 32 passages of 85 tokens per call, default
// precision.
func BenchmarkBatch(b *testing.B) {
	texts := passages(b, 32, 85)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			m := newModel(b, Options{Workers: workers})
			ctx := context.Background()
			b.ReportAllocs()
			r := startRate(b)
			for b.Loop() {
				if _, err := m.EmbedBatch(ctx, texts); err != nil {
					b.Fatal(err)
				}
			}
			r.stop(len(texts))
		})
	}
}

// Long input: 1000-token passages in Windows mode (stride 96: 11 windows).
func BenchmarkLongWindows(b *testing.B) {
	texts := passages(b, 2, 1000)
	m := newModel(b, Options{Workers: 1})
	ctx := context.Background()
	b.ReportAllocs()
	r := startRate(b)
	for i := 0; b.Loop(); i++ {
		if _, err := m.Embed(ctx, texts[i%2:i%2+1]); err != nil {
			b.Fatal(err)
		}
	}
	r.stop(1)
}

func BenchmarkTokenize85(b *testing.B) {
	texts := passages(b, 4, 85)
	m := newModel(b, Options{Workers: 1})
	wk := newWorker(m.w, m.impl, FP32)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.w.tok.encode(texts[i%len(texts)], &wk.tok)
	}
}

// BenchmarkLoad decodes the embedded model from scratch (what the first
// New in a process pays).
func BenchmarkLoad(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := loadWeights(modelJSON, vocabJSON, shardsList); err != nil {
			b.Fatal(err)
		}
	}
}

// Short texts (12 tokens, e.g. queries), 64 per EmbedBatch call, one worker.
func BenchmarkShort12(b *testing.B) {
	texts := passages(b, 64, 12)
	m := newModel(b, Options{Workers: 1})
	ctx := context.Background()
	b.ReportAllocs()
	r := startRate(b)
	for b.Loop() {
		if _, err := m.EmbedBatch(ctx, texts); err != nil {
			b.Fatal(err)
		}
	}
	r.stop(len(texts))
}

// BenchmarkPrecision compares the precisions in one run for 85- and
// 600-token passages (600: Windows mode, 6 windows of 128): cores=1 embeds
// one passage per Embed call on one worker, cores=all a batch of 16
// passages per EmbedBatch on GOMAXPROCS workers. Report each as a ratio to
// fp32 of the same run.
func BenchmarkPrecision(b *testing.B) {
	all := runtime.GOMAXPROCS(0)
	for _, tokens := range []int{85, 600} {
		texts := passages(b, 16, tokens)
		for _, cores := range []string{"1", "all"} {
			for _, p := range []Precision{FP32, BF16, Int8} {
				b.Run(fmt.Sprintf("%d/cores=%s/%s", tokens, cores, p), func(b *testing.B) {
					workers, per := 1, 1
					if cores == "all" {
						workers, per = all, len(texts)
					}
					m := newModel(b, Options{Workers: workers, Precision: p})
					ctx := context.Background()
					b.ReportAllocs()
					r := startRate(b)
					for i := 0; b.Loop(); i++ {
						lo := i * per % len(texts)
						if _, err := m.EmbedBatch(ctx, texts[lo:lo+per]); err != nil {
							b.Fatal(err)
						}
					}
					r.stop(per)
				})
			}
		}
	}
}

// BenchmarkGemm8 runs the int8 product of each native kernel on the
// model's dense shapes for a full group of rows (m×k·k×n), caches
// flushed by 4 MB of other writes before each, reporting multiply-adds
// per nanosecond of the process's CPU time.
func BenchmarkGemm8(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, sh := range [][3]int{{32, 256, 32}, {32, 1536, 64}, {256, 512, 512}, {256, 512, 1536}, {256, 1536, 512}, {128, 512, 1536}} {
		m, k, n := sh[0], sh[1], sh[2]
		p := randomPacked(rng, k, n, 1)
		q := quantizeColumns(p)
		u := make([]uint8, m*q.kp)
		for i := range u {
			u[i] = uint8(rng.IntN(256))
		}
		sa := make([]float32, m)
		for i := range sa {
			sa[i] = 0.01
		}
		c := make([]float32, m*n)
		junk := make([]byte, 4<<20)
		for _, impl := range gemmImpls() {
			if impl.int8 == nil {
				continue
			}
			b.Run(fmt.Sprintf("%dx%dx%d/%s", m, k, n, impl.int8.active().name), func(b *testing.B) {
				g := &gemmScratch{impl: impl}
				var cpu time.Duration
				for b.Loop() {
					for i := 0; i < len(junk); i += 64 {
						junk[i]++
					}
					cpu0 := processCPU()
					g.gemm8(m, u, q.kp, sa, q, c, n, false, false)
					cpu += processCPU() - cpu0
				}
				b.ReportMetric(float64(m*k*n)*float64(b.N)/float64(cpu.Nanoseconds()), "MAC/cpu-ns")
			})
		}
	}
}

// BenchmarkGemmBF runs the bf16 product (Layer_0's two projections under
// int8: 256×512 and 256×768) natively and emulated on the float32 kernel.
func BenchmarkGemmBF(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, sh := range [][3]int{{256, 256, 512}, {256, 256, 768}} {
		m, k, n := sh[0], sh[1], sh[2]
		p := randomPacked(rng, k, n, 1)
		bm := bf16Columns(p)
		bm.emu = bm.emulation()
		a := make([]uint16, m*bm.kp)
		for i := range a {
			a[i] = toBF16(float32(rng.NormFloat64()))
		}
		c := make([]float32, m*n)
		for _, impl := range gemmImpls() {
			name := "emulated"
			if impl.bf16 != nil {
				name = impl.bf16.name
			}
			b.Run(fmt.Sprintf("%dx%dx%d/%s/%s", m, k, n, impl.name, name), func(b *testing.B) {
				g := &gemmScratch{impl: impl}
				cpu0 := processCPU()
				for b.Loop() {
					g.gemmBF(m, a, bm.kp, bm, c, n, false)
				}
				b.ReportMetric(float64(m*k*n)*float64(b.N)/float64((processCPU()-cpu0).Nanoseconds()), "MAC/cpu-ns")
			})
		}
	}
}
