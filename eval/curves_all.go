package eval

import (
	"context"
	"fmt"

	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/score"
	"github.com/ctxsel/ctxsel/token"
)

// CurvesAll is Curves without skipping records that have no gold passage:
// for data measured by answers alone (LaRA).
func CurvesAll(ctx context.Context, recs []dataset.Record, scorer score.Scorer, counter token.Counter, workers int) ([]QuestionCurve, error) {
	if counter == nil {
		c, err := token.New(token.Default)
		if err != nil {
			return nil, fmt.Errorf("curves: %w", err)
		}
		counter = c
	}
	out, err := scoreAll(ctx, recs, scorer, counter, workers, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("curves: %w", err)
	}
	return out, nil
}
