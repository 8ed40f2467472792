package eval

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ctxsel/ctxsel/fusion"
)

// ChannelScorer is a scorer whose score fuses several component curves
// (a dense and a lexical one, say). ScoreChannels returns the fused scores
// and each component's, in Channels() order; Curves and Run keep them in
// QuestionCurve.Channels and hand them to strategies as
// ctxsel.Candidate.Channels, so a selector can read every curve.
type ChannelScorer interface {
	Scorer
	Channels() []string
	ScoreChannels(ctx context.Context, query string, passages []string) (fused []float64, channels [][]float64, err error)
}

// Hybrid fuses a dense scorer with BM25 (package fusion): alpha weights the
// dense curve, 1 − alpha the lexical one. It is a ChannelScorer whose
// channels are [dense, bm25].
type Hybrid struct {
	Dense, Lexical Scorer
	Method         fusion.Method
	Alpha          float64
}

// NewHybrid fuses dense with a fresh BM25 scorer.
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

// Prepare hands the passages to whichever component prepares.
func (h *Hybrid) Prepare(ctx context.Context, passages []string, progress func(done, total int)) error {
	for _, s := range []Scorer{h.Dense, h.Lexical} {
		if p, ok := s.(Preparer); ok {
			if err := p.Prepare(ctx, passages, progress); err != nil {
				return fmt.Errorf("%s: %w", s.Name(), err)
			}
		}
	}
	return nil
}

// Score implements Scorer: the fused curve.
func (h *Hybrid) Score(ctx context.Context, query string, passages []string) ([]float64, error) {
	f, _, err := h.ScoreChannels(ctx, query, passages)
	return f, err
}

// ScoreChannels implements ChannelScorer.
func (h *Hybrid) ScoreChannels(ctx context.Context, query string, passages []string) ([]float64, [][]float64, error) {
	d, err := h.Dense.Score(ctx, query, passages)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", h.Dense.Name(), err)
	}
	l, err := h.Lexical.Score(ctx, query, passages)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", h.Lexical.Name(), err)
	}
	f, err := fusion.Fuse(h.Method, h.Alpha, d, l)
	if err != nil {
		return nil, nil, err
	}
	return f, [][]float64{d, l}, nil
}

// HybridSpec is a parsed hybrid scorer spec:
// hybrid[:alpha=A][,fusion=zscore|minmax|rrf][,dense=NAME].
type HybridSpec struct {
	Dense  string // the dense scorer's name; "" means the caller's default
	Method fusion.Method
	Alpha  float64
}

// DefaultHybrid is what a bare "hybrid" means: z-score fusion, equal
// weights (chosen on validation data: README, "Hybrid scoring and the
// default pipeline").
var DefaultHybrid = HybridSpec{Method: fusion.ZScore, Alpha: 0.5}

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
