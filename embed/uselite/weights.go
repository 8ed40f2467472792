package uselite

import (
	_ "embed" // model files
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
)

// The files below are the npm package's dist/ files, unchanged (see
// model/NOTICE). Shards are embedded as strings so they stay in read-only
// data and are never copied as a whole: the loader decodes each tensor once,
// straight into its final (packed) layout, and the token-embedding table is
// read row by row from the shards at embed time.

//go:embed model/model.json
var modelJSON []byte

//go:embed model/vocab.json
var vocabJSON []byte

//go:embed model/group1-shard1of7
var shard1 string

//go:embed model/group1-shard2of7
var shard2 string

//go:embed model/group1-shard3of7
var shard3 string

//go:embed model/group1-shard4of7
var shard4 string

//go:embed model/group1-shard5of7
var shard5 string

//go:embed model/group1-shard6of7
var shard6 string

//go:embed model/group1-shard7of7
var shard7 string

// Graph names of the tensors the forward pass uses.
const (
	kona      = "module_apply_default/Encoder_en/KonaTransformer/"
	encode    = kona + "Encode/"
	stack     = encode + "TransformerStack/"
	varPrefix = "module/Encoder_en/KonaTransformer/Encode/"

	nameEmbeddings = "module/Embeddings_en"
	nameTiming     = stack + "Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1"
	nameLNEps      = stack + "Layer_1/TransformerLayer/FFN/layer_prepostprocess/layer_norm/Cast/x"
	nameMaxLen     = kona + "ClipToMaxLength/Less/y"
	nameNumHeads   = stack + "Layer_1/TransformerLayer/MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/2"
	nameTanhW      = "module/Encoder_en/hidden_layers/tanh_layer_0/weights"
	nameTanhB      = "module/Encoder_en/hidden_layers/tanh_layer_0/bias"
	nameL2Eps      = "module_apply_default/Encoder_en/hidden_layers/l2_normalize/Maximum/y"
)

func layerNames(l int) map[string]string {
	p := fmt.Sprintf("%sLayer_%d/TransformerLayer/", encode, l)
	s := fmt.Sprintf("%sLayer_%d/TransformerLayer/", stack, l)
	v := fmt.Sprintf("%sLayer_%d/TransformerLayer/", varPrefix, l)
	return map[string]string{
		"ln1s":     p + "layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat",
		"ln1b":     p + "layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat",
		"qkvW":     v + "MultiheadAttention/qkv_transform_single/kernel/part_0",
		"qkvB":     p + "MultiheadAttention/qkv_transform_single/bias/ConcatPartitions/concat",
		"qscale":   s + "MultiheadAttention/mul/y",
		"headDim":  s + "MultiheadAttention/split_heads/split_last_dimension/Reshape/shape/3",
		"outW":     v + "MultiheadAttention/output_transform_single/kernel/part_0",
		"outB":     p + "MultiheadAttention/output_transform_single/bias/ConcatPartitions/concat",
		"denseW":   p + "dense/kernel/ConcatPartitions/concat", // Layer_0 only
		"denseB":   p + "dense/bias/ConcatPartitions/concat",
		"ln2s":     p + "FFN/layer_prepostprocess/layer_norm/layer_norm_scale/ConcatPartitions/concat",
		"ln2b":     p + "FFN/layer_prepostprocess/layer_norm/layer_norm_bias/ConcatPartitions/concat",
		"ff1W":     s + "FFN/conv1/Tensordot/Reshape_1",
		"ff1B":     p + "FFN/conv1/bias/ConcatPartitions/concat",
		"ff2W":     s + "FFN/conv2/Tensordot/Reshape_1",
		"ff2B":     p + "FFN/conv2/bias/ConcatPartitions/concat",
		"combined": s + "MultiheadAttention/combine_heads/combine_last_two_dimensions/Reshape/shape/2",
	}
}

// tensorRef locates one tensor in the concatenated shards.
type tensorRef struct {
	off   int // byte offset
	shape []int
	dtype string
}

func (t tensorRef) size() int {
	n := 1
	for _, d := range t.shape {
		n *= d
	}
	return n
}

// blob is the concatenation of the weight shards, read without copying it.
type blob struct {
	shards []string
	starts []int // starts[i] is the byte offset of shards[i]
	size   int
	refs   map[string]tensorRef
}

func newBlob(manifestJSON []byte, shards []string) (*blob, error) {
	var m struct {
		WeightsManifest []struct {
			Paths   []string `json:"paths"`
			Weights []struct {
				Name  string `json:"name"`
				Shape []int  `json:"shape"`
				Dtype string `json:"dtype"`
			} `json:"weights"`
		} `json:"weightsManifest"`
	}
	if err := json.Unmarshal(manifestJSON, &m); err != nil {
		return nil, fmt.Errorf("parse model.json: %w", err)
	}
	if len(m.WeightsManifest) != 1 || len(m.WeightsManifest[0].Paths) != len(shards) {
		return nil, errors.New("model.json: unexpected weight manifest layout")
	}
	b := &blob{shards: shards, refs: make(map[string]tensorRef)}
	for _, s := range shards {
		b.starts = append(b.starts, b.size)
		b.size += len(s)
	}
	off := 0
	for _, w := range m.WeightsManifest[0].Weights {
		if w.Dtype != "float32" && w.Dtype != "int32" {
			return nil, fmt.Errorf("model.json: %s has unsupported dtype %s", w.Name, w.Dtype)
		}
		ref := tensorRef{off: off, shape: w.Shape, dtype: w.Dtype}
		b.refs[w.Name] = ref
		off += 4 * ref.size()
	}
	if off != b.size {
		return nil, fmt.Errorf("model.json: manifest covers %d bytes, shards hold %d", off, b.size)
	}
	return b, nil
}

func (b *blob) ref(name string, dtype string, shape ...int) (tensorRef, error) {
	r, ok := b.refs[name]
	if !ok {
		return r, fmt.Errorf("model.json: no tensor %q", name)
	}
	if r.dtype != dtype {
		return r, fmt.Errorf("model.json: %s is %s, want %s", name, r.dtype, dtype)
	}
	if len(r.shape) != len(shape) {
		return r, fmt.Errorf("model.json: %s has shape %v, want %v", name, r.shape, shape)
	}
	for i := range shape {
		if r.shape[i] != shape[i] {
			return r, fmt.Errorf("model.json: %s has shape %v, want %v", name, r.shape, shape)
		}
	}
	return r, nil
}

// word returns the 4 little-endian bytes at byte offset off.
func (b *blob) word(off int) uint32 {
	i := len(b.starts) - 1
	for b.starts[i] > off {
		i--
	}
	s := b.shards[i]
	o := off - b.starts[i]
	if o+4 <= len(s) {
		return uint32(s[o]) | uint32(s[o+1])<<8 | uint32(s[o+2])<<16 | uint32(s[o+3])<<24
	}
	var v uint32
	for k := 0; k < 4; k++ {
		v |= uint32(b.byteAt(off+k)) << (8 * k)
	}
	return v
}

func (b *blob) byteAt(off int) byte {
	i := len(b.starts) - 1
	for b.starts[i] > off {
		i--
	}
	return b.shards[i][off-b.starts[i]]
}

// floats decodes len(dst) float32s starting at byte offset off.
func (b *blob) floats(off int, dst []float32) {
	for len(dst) > 0 {
		i := len(b.starts) - 1
		for b.starts[i] > off {
			i--
		}
		s := b.shards[i][off-b.starts[i]:]
		n := min(len(s)/4, len(dst))
		if n == 0 { // a float straddles two shards
			dst[0] = math.Float32frombits(b.word(off))
			dst, off = dst[1:], off+4
			continue
		}
		s = s[:4*n]
		d := dst[:n]
		for j := range d {
			q := s[4*j : 4*j+4]
			d[j] = math.Float32frombits(uint32(q[0]) | uint32(q[1])<<8 | uint32(q[2])<<16 | uint32(q[3])<<24)
		}
		dst, off = dst[n:], off+4*n
	}
}

func (b *blob) vector(name string, n int) ([]float32, error) {
	r, err := b.ref(name, "float32", n)
	if err != nil {
		return nil, err
	}
	v := make([]float32, n)
	b.floats(r.off, v)
	return v, nil
}

func (b *blob) scalarF(name string) (float32, error) {
	r, err := b.ref(name, "float32")
	if err != nil {
		return 0, err
	}
	return math.Float32frombits(b.word(r.off)), nil
}

func (b *blob) scalarI(name string) (int, error) {
	r, err := b.ref(name, "int32")
	if err != nil {
		return 0, err
	}
	return int(int32(b.word(r.off))), nil
}

// matrix returns the float32 [k][n] tensor name (a [1,1,k,n] convolution
// kernel counts as [k][n]), its first scaleCols columns multiplied by scale,
// as a matrix whose forms are built on demand: lazy leaves the float32
// panels to packed.ensureF32 (a dense layer that a reduced precision may
// never need in float32), otherwise they are decoded now.
func (b *blob) matrix(name string, k, n int, conv bool, scaleCols int, scale float32, lazy bool) (*packed, error) {
	var r tensorRef
	var err error
	if conv {
		r, err = b.ref(name, "float32", 1, 1, k, n)
	} else {
		r, err = b.ref(name, "float32", k, n)
	}
	if err != nil {
		return nil, err
	}
	p := &packed{k: k, n: n, rows: func(each func(i int, row []float32)) {
		row := make([]float32, n)
		for i := 0; i < k; i++ {
			b.floats(r.off+4*i*n, row)
			for j := 0; j < scaleCols; j++ {
				row[j] *= scale
			}
			each(i, row)
		}
	}}
	if !lazy {
		p.ensureF32()
	}
	return p, nil
}

// layerWeights holds one transformer layer, matrices pre-packed for gemm.
type layerWeights struct {
	dIn, heads, headDim int // dIn is both the input and the attention width
	ln1s, ln1b          []float32
	qkv                 *packed // dIn × 3d, query columns pre-scaled by 1/sqrt(headDim)
	qkvB                []float32
	out                 *packed // d × hidden
	outB                []float32
	dense               *packed // dIn × hidden residual projection (nil when dIn == hidden)
	denseB              []float32
	ln2s, ln2b          []float32
	ff1                 *packed // hidden × FFN
	ff1B                []float32
	ff2                 *packed // FFN × hidden
	ff2B                []float32
}

// Model sizes (checked against model.json at load).
const (
	embedDim  = 256  // token-embedding width (Layer_0 input)
	hidden    = 512  // transformer output width
	ffnDim    = 1536 // feed-forward inner width
	vocabRows = 8002 // rows of the token-embedding table
)

// weights is everything the forward pass and tokenizer need; loaded once,
// read-only afterwards, shared by all goroutines.
type weights struct {
	blob    *blob
	embOff  int                           // byte offset of the [vocabRows][embedDim] embedding table
	timing  [MaxTokens * embedDim]float32 // sinusoidal timing signal per position
	lnEps   float32
	l2Eps   float32
	layers  [2]layerWeights
	tanhW   *packed
	tanhB   []float32
	tok     *tokenizer
	loadDur time.Duration

	int8Once sync.Once // the Int8 forms read from int8Weights
}

var (
	loadOnce   sync.Once
	loaded     *weights
	loadErr    error
	shardsList = []string{shard1, shard2, shard3, shard4, shard5, shard6, shard7}
)

// sharedWeights parses the embedded model once per process.
func sharedWeights() (*weights, error) {
	loadOnce.Do(func() {
		start := time.Now()
		loaded, loadErr = loadWeights(modelJSON, vocabJSON, shardsList)
		if loadErr != nil {
			loadErr = fmt.Errorf("uselite: load embedded model: %w", loadErr)
			loaded = nil
			return
		}
		loaded.loadDur = time.Since(start)
	})
	return loaded, loadErr
}

func loadWeights(manifest, vocab []byte, shards []string) (*weights, error) {
	var (
		w      = &weights{}
		tokErr error
		wg     sync.WaitGroup
	)
	wg.Add(1)
	go func() { // the vocabulary parse is independent of the tensors
		defer wg.Done()
		w.tok, tokErr = newTokenizer(vocab)
	}()
	err := w.loadTensors(manifest, shards)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if tokErr != nil {
		return nil, tokErr
	}
	if len(w.tok.pieces) > vocabRows {
		return nil, fmt.Errorf("vocabulary has %d pieces, embedding table %d rows", len(w.tok.pieces), vocabRows)
	}
	return w, nil
}

func (w *weights) loadTensors(manifest []byte, shards []string) error {
	b, err := newBlob(manifest, shards)
	if err != nil {
		return err
	}
	w.blob = b
	emb, err := b.ref(nameEmbeddings, "float32", vocabRows, embedDim)
	if err != nil {
		return err
	}
	w.embOff = emb.off

	if maxLen, err := b.scalarI(nameMaxLen); err != nil {
		return err
	} else if maxLen != MaxTokens {
		return fmt.Errorf("model clips at %d tokens, want %d", maxLen, MaxTokens)
	}
	heads, err := b.scalarI(nameNumHeads)
	if err != nil {
		return err
	}
	inv, err := b.vector2(nameTiming, 1, embedDim/2)
	if err != nil {
		return err
	}
	for pos := 0; pos < MaxTokens; pos++ {
		row := w.timing[pos*embedDim : (pos+1)*embedDim]
		for i, f := range inv {
			a := float32(pos) * f // float32 product, as in the graph
			row[i] = float32(math.Sin(float64(a)))
			row[embedDim/2+i] = float32(math.Cos(float64(a)))
		}
	}
	if w.lnEps, err = b.scalarF(nameLNEps); err != nil {
		return err
	}
	if w.l2Eps, err = b.scalarF(nameL2Eps); err != nil {
		return err
	}
	for l := range w.layers {
		dIn := embedDim
		if l > 0 {
			dIn = hidden
		}
		if err := w.layers[l].load(b, l, dIn, hidden, heads); err != nil {
			return fmt.Errorf("layer %d: %w", l, err)
		}
	}
	if w.tanhW, err = b.matrix(nameTanhW, hidden, hidden, false, 0, 1, false); err != nil {
		return err
	}
	if w.tanhB, err = b.vector(nameTanhB, hidden); err != nil {
		return err
	}
	return nil
}

func (b *blob) vector2(name string, rows, cols int) ([]float32, error) {
	r, err := b.ref(name, "float32", rows, cols)
	if err != nil {
		return nil, err
	}
	v := make([]float32, rows*cols)
	b.floats(r.off, v)
	return v, nil
}

func (lw *layerWeights) load(b *blob, l, dIn, d, heads int) error {
	names := layerNames(l)
	var err error
	lw.dIn, lw.heads = dIn, heads
	if lw.headDim, err = b.scalarI(names["headDim"]); err != nil {
		return err
	}
	if lw.headDim*heads != dIn {
		return fmt.Errorf("%d heads of %d do not cover width %d", heads, lw.headDim, dIn)
	}
	if combined, err := b.scalarI(names["combined"]); err != nil {
		return err
	} else if combined != dIn {
		return fmt.Errorf("heads combine to %d, want %d", combined, dIn)
	}
	qscale, err := b.scalarF(names["qscale"])
	if err != nil {
		return err
	}
	vec := func(dst *[]float32, key string, n int) {
		if err == nil {
			*dst, err = b.vector(names[key], n)
		}
	}
	mat := func(dst **packed, key string, k, n int, conv bool, scaleCols int, scale float32) {
		if err == nil {
			// Layer_1's last projection runs on the per-sequence mean in
			// float32 whatever the precision; the rest on demand
			lazy := !(l == 1 && key == "ff2W")
			*dst, err = b.matrix(names[key], k, n, conv, scaleCols, scale, lazy)
		}
	}
	vec(&lw.ln1s, "ln1s", dIn)
	vec(&lw.ln1b, "ln1b", dIn)
	// The graph scales the query by qscale after the projection; folding it
	// into the query columns and bias is exact for Layer_0 (1/8) and within
	// float32 rounding for Layer_1.
	mat(&lw.qkv, "qkvW", dIn, 3*dIn, true, dIn, qscale)
	vec(&lw.qkvB, "qkvB", 3*dIn)
	mat(&lw.out, "outW", dIn, d, true, 0, 1)
	vec(&lw.outB, "outB", d)
	if dIn != d {
		mat(&lw.dense, "denseW", dIn, d, false, 0, 1)
		vec(&lw.denseB, "denseB", d)
	}
	vec(&lw.ln2s, "ln2s", d)
	vec(&lw.ln2b, "ln2b", d)
	mat(&lw.ff1, "ff1W", d, ffnDim, false, 0, 1)
	vec(&lw.ff1B, "ff1B", ffnDim)
	mat(&lw.ff2, "ff2W", ffnDim, d, false, 0, 1)
	vec(&lw.ff2B, "ff2B", d)
	if err != nil {
		return err
	}
	for i := 0; i < dIn; i++ {
		lw.qkvB[i] *= qscale
	}
	// Layer_0's residual and query/key/value projections, reading the token
	// embeddings, carry half of int8's error for 8.5 % of its work: Int8
	// runs them in bf16 (docs/embedding.md)
	if l == 0 {
		lw.dense.int8AsBF16, lw.qkv.int8AsBF16 = true, true
	}
	return nil
}

// embeddingRow decodes row id of the token-embedding table into dst.
func (w *weights) embeddingRow(id int32, dst []float32) {
	w.blob.floats(w.embOff+int(id)*embedDim*4, dst[:embedDim])
}
