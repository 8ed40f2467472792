package score

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctxsel/ctxsel"
	"github.com/ctxsel/ctxsel/fusion"
)

// The default fusion of a hybrid: z-scores, equal weights (chosen on
// validation data: docs/hybrid.md).
// Index retrieval, evaluation's hybrid scorer and /v1/rerank's "hybrid"
// scoring all use it.
const (
	DefaultAlpha  = 0.5
	DefaultMethod = fusion.ZScore
)

// Hybrid fuses a dense scorer with a lexical one (package fusion): Alpha
// weights the dense curve, 1 − Alpha the lexical one. It is a
// ChannelScorer whose channels are [dense, lexical].
type Hybrid struct {
	Dense, Lexical Scorer
	Method         fusion.Method
	Alpha          float64
}

// NewHybrid fuses dense with a NewBM25 scorer.
func NewHybrid(dense Scorer, method fusion.Method, alpha float64) (*Hybrid, error) {
	if dense == nil {
		return nil, fmt.Errorf("hybrid: no dense scorer")
	}
	if _, err := fusion.Fuse(method, alpha, nil, nil); err != nil {
		return nil, fmt.Errorf("hybrid: %w", err)
	}
	return &Hybrid{Dense: dense, Lexical: NewBM25(), Method: method, Alpha: alpha}, nil
}

// Name implements Scorer: hybrid(DENSE+bm25):alpha=A,fusion=M.
func (h *Hybrid) Name() string {
	return fmt.Sprintf("hybrid(%s+%s):alpha=%g,fusion=%s", h.Dense.Name(), h.Lexical.Name(), h.Alpha, h.Method)
}

// Channels implements ChannelScorer.
func (h *Hybrid) Channels() []string { return []string{h.Dense.Name(), h.Lexical.Name()} }

// Prepare hands the texts to whichever component prepares.
func (h *Hybrid) Prepare(ctx context.Context, texts []string, progress func(done, total int)) error {
	for _, s := range []Scorer{h.Dense, h.Lexical} {
		if p, ok := s.(Preparer); ok {
			if err := p.Prepare(ctx, texts, progress); err != nil {
				return fmt.Errorf("%s: %w", s.Name(), err)
			}
		}
	}
	return nil
}

// Score implements Scorer: the fused curve.
func (h *Hybrid) Score(ctx context.Context, query string, texts []string) ([]float64, error) {
	f, _, err := h.ScoreChannels(ctx, query, texts)
	return f, err
}

// ScoreChannels implements ChannelScorer.
func (h *Hybrid) ScoreChannels(ctx context.Context, query string, texts []string) ([]float64, [][]float64, error) {
	d, err := h.Dense.Score(ctx, query, texts)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", h.Dense.Name(), err)
	}
	l, err := h.Lexical.Score(ctx, query, texts)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", h.Lexical.Name(), err)
	}
	f, err := fusion.Fuse(h.Method, h.Alpha, d, l)
	if err != nil {
		return nil, nil, err
	}
	return f, [][]float64{d, l}, nil
}

// FuseLists is a hybrid's fusion step when each retriever returned its own
// best list (index retrieval): see fusion.Lists. denseKeys and lexKeys name
// the listed items; the result scores their union.
func FuseLists[K comparable](method fusion.Method, alpha float64, denseKeys []K, dense []float64, lexKeys []K, lex []float64) ([]K, []float64, error) {
	return fusion.Lists(method, alpha, denseKeys, dense, lexKeys, lex)
}

// HybridSpec is a parsed hybrid scorer spec:
// hybrid[:alpha=A][,fusion=zscore|minmax|rrf][,dense=NAME].
type HybridSpec struct {
	Dense  string // the dense scorer's name; "" means the caller's default
	Method fusion.Method
	Alpha  float64
}

// DefaultHybrid is what a bare "hybrid" means: DefaultMethod, DefaultAlpha.
var DefaultHybrid = HybridSpec{Method: DefaultMethod, Alpha: DefaultAlpha}

// HybridParams declares the hybrid scorer spec's parameters, new on every
// call.
func HybridParams() []ctxsel.ParamDef {
	return []ctxsel.ParamDef{
		{Name: "alpha", Default: DefaultAlpha, Min: 0, Max: 1, Doc: "weight of the dense scores (1 − alpha weights BM25's)"},
		{Name: "fusion", Kind: ctxsel.WordParam, Words: []string{"zscore", "minmax", "rrf", "z", "relative"}, DefaultWord: string(DefaultMethod),
			Doc: "how the two curves are fused: zscore, minmax (relative is Weaviate's name for it) or rrf (z is zscore)"},
		{Name: "dense", Kind: ctxsel.WordParam, DefaultDoc: "the caller's default embedder", Doc: "the dense scorer: an embedding scorer's name"},
	}
}

// ParseHybrid parses a hybrid spec; ok is false when s does not name the
// hybrid scorer at all. A bad parameter is a *ctxsel.ParamError; every
// error wraps ctxsel.ErrInvalidInput.
func ParseHybrid(s string) (spec HybridSpec, ok bool, err error) {
	if name, _, _ := strings.Cut(s, ":"); name != "hybrid" {
		return HybridSpec{}, false, nil
	}
	defs := HybridParams()
	sp, err := ctxsel.ParseParams(s, "scorer", defs)
	if err != nil {
		return HybridSpec{}, true, err
	}
	sp = ctxsel.WithDefaults(sp, defs)
	spec = HybridSpec{Dense: sp.Words["dense"], Alpha: sp.Params["alpha"]}
	if spec.Method, err = fusion.ParseMethod(sp.Words["fusion"]); err != nil {
		return HybridSpec{}, true, fmt.Errorf("hybrid scorer: %w", err)
	}
	if spec.Dense == "hybrid" || spec.Dense == "bm25" {
		return HybridSpec{}, true, &ctxsel.ParamError{Strategy: "hybrid", What: "scorer", Param: "dense", Msg: "dense=" + spec.Dense + ": want an embedding scorer"}
	}
	return spec, true, nil
}
