package eval

import (
	"context"
	"fmt"

	"github.com/ctxsel/ctxsel/score"
	"github.com/ctxsel/ctxsel/token"
)

// Rescored is a score.ChannelScorer whose curve is a function of another's fused
// curve, channels and token counts: a learned re-ranking (relevance.Model's
// Rescore) measured as a scorer of its own, so its top-k and budget
// frontiers can be compared with the base scorer's. The channels pass
// through unchanged.
type Rescored struct {
	Base    score.ChannelScorer
	Label   string // the scorer's name in reports
	Counter token.Counter
	Rescore func(fused []float64, tokens []int, channels [][]float64) []float64
}

// Name implements score.Scorer.
func (r *Rescored) Name() string { return r.Label }

// Channels implements score.ChannelScorer.
func (r *Rescored) Channels() []string { return r.Base.Channels() }

// Prepare forwards to the base scorer when it prepares.
func (r *Rescored) Prepare(ctx context.Context, passages []string, progress func(done, total int)) error {
	if p, ok := r.Base.(score.Preparer); ok {
		return p.Prepare(ctx, passages, progress)
	}
	return nil
}

// Score implements score.Scorer.
func (r *Rescored) Score(ctx context.Context, query string, passages []string) ([]float64, error) {
	s, _, err := r.ScoreChannels(ctx, query, passages)
	return s, err
}

// ScoreChannels implements score.ChannelScorer.
func (r *Rescored) ScoreChannels(ctx context.Context, query string, passages []string) ([]float64, [][]float64, error) {
	f, ch, err := r.Base.ScoreChannels(ctx, query, passages)
	if err != nil {
		return nil, nil, err
	}
	tokens := make([]int, len(passages))
	for i, p := range passages {
		tokens[i] = r.Counter.Count(p)
	}
	s := r.Rescore(f, tokens, ch)
	if len(s) != len(f) {
		return nil, nil, fmt.Errorf("%s: rescoring returned %d scores for %d passages", r.Label, len(s), len(f))
	}
	return s, ch, nil
}
