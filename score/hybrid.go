package score

import (
	"context"
	"fmt"
	"strconv"
	"strings"

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

// ParseHybrid parses a hybrid spec; ok is false when s does not name the
// hybrid scorer at all. Errors describe the bad part.
func ParseHybrid(s string) (spec HybridSpec, ok bool, err error) {
	name, params, _ := strings.Cut(s, ":")
	if name != "hybrid" {
		return HybridSpec{}, false, nil
	}
	spec = DefaultHybrid
	if params == "" {
		return spec, true, nil
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(params, ",") {
		k, v, found := strings.Cut(strings.TrimSpace(kv), "=")
		if !found || v == "" {
			return HybridSpec{}, true, fmt.Errorf("hybrid scorer: %q: want key=value", kv)
		}
		if seen[k] {
			return HybridSpec{}, true, fmt.Errorf("hybrid scorer: %s given twice", k)
		}
		seen[k] = true
		switch k {
		case "alpha":
			a, err := strconv.ParseFloat(v, 64)
			if err != nil || !(a >= 0 && a <= 1) {
				return HybridSpec{}, true, fmt.Errorf("hybrid scorer: alpha=%q: want a number in [0, 1]", v)
			}
			spec.Alpha = a
		case "fusion":
			m, err := fusion.ParseMethod(v)
			if err != nil {
				return HybridSpec{}, true, fmt.Errorf("hybrid scorer: %w", err)
			}
			spec.Method = m
		case "dense":
			if v == "hybrid" || v == "bm25" {
				return HybridSpec{}, true, fmt.Errorf("hybrid scorer: dense=%s: want an embedding scorer", v)
			}
			spec.Dense = v
		default:
			return HybridSpec{}, true, fmt.Errorf("hybrid scorer: unknown parameter %q (known: alpha, fusion, dense)", k)
		}
	}
	return spec, true, nil
}
