package eval

import (
	"context"
	"fmt"

	"github.com/ctxsel/ctxsel/dataset"
	"github.com/ctxsel/ctxsel/score"
	"github.com/ctxsel/ctxsel/token"
)

// QuestionCurve is one question's scored context, in passage (input) order:
// what a learned selector trains on.
type QuestionCurve struct {
	RecordID string    `json:"record_id"`
	Scores   []float64 `json:"scores"`
	Tokens   []int     `json:"tokens"`
	Gold     []bool    `json:"gold"`
	// Channels are the component curves of a score.ChannelScorer (one score
	// list per channel, passage order); nil for a plain scorer.
	Channels [][]float64 `json:"channels,omitempty"`
}

// Curves scores every record's passages against its question and returns the
// curves with token counts and gold labels. Records without gold passages are
// skipped; the second result counts them. Order follows recs.
func Curves(ctx context.Context, recs []dataset.Record, scorer score.Scorer, counter token.Counter, workers int) ([]QuestionCurve, int, error) {
	if counter == nil {
		c, err := token.New(token.Default)
		if err != nil {
			return nil, 0, fmt.Errorf("curves: %w", err)
		}
		counter = c
	}
	var kept []dataset.Record
	for _, r := range recs {
		if r.GoldCount() > 0 {
			kept = append(kept, r)
		}
	}
	out, err := scoreAll(ctx, kept, scorer, counter, workers, nil, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("curves: %w", err)
	}
	return out, len(recs) - len(kept), nil
}

// score is the one scoring path of Curves and Run: the scorer prepares every
// distinct passage once, then workers score the records in parallel and
// count their tokens. The first failure stops the rest.
func scoreAll(ctx context.Context, recs []dataset.Record, scorer score.Scorer, counter token.Counter, workers int, progress, prepareProgress func(done, total int)) ([]QuestionCurve, error) {
	if p, ok := scorer.(score.Preparer); ok {
		if err := p.Prepare(ctx, uniqueTexts(recs), prepareProgress); err != nil {
			return nil, fmt.Errorf("prepare %s: %w", scorer.Name(), err)
		}
	}
	out := make([]QuestionCurve, len(recs))
	err := eachRecord(ctx, recs, workers, progress, func(ctx context.Context, i int) error {
		var err error
		out[i], err = scoreRecord(ctx, recs[i], scorer, counter)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func scoreRecord(ctx context.Context, r dataset.Record, scorer score.Scorer, counter token.Counter) (QuestionCurve, error) {
	texts := make([]string, len(r.Passages))
	q := QuestionCurve{RecordID: r.ID, Tokens: make([]int, len(texts)), Gold: make([]bool, len(texts))}
	for j, p := range r.Passages {
		texts[j], q.Tokens[j], q.Gold[j] = p.Text, counter.Count(p.Text), p.Gold
	}
	var s []float64
	var err error
	if cs, ok := scorer.(score.ChannelScorer); ok {
		s, q.Channels, err = cs.ScoreChannels(ctx, r.Question, texts)
	} else {
		s, err = scorer.Score(ctx, r.Question, texts)
	}
	if err != nil {
		return QuestionCurve{}, fmt.Errorf("score: %w", err)
	}
	if len(s) != len(texts) {
		return QuestionCurve{}, fmt.Errorf("scorer %s returned %d scores for %d passages", scorer.Name(), len(s), len(texts))
	}
	q.Scores = s
	return q, nil
}

func uniqueTexts(recs []dataset.Record) []string {
	var texts []string
	seen := map[string]bool{}
	for _, r := range recs {
		for _, p := range r.Passages {
			if !seen[p.Text] {
				seen[p.Text] = true
				texts = append(texts, p.Text)
			}
		}
	}
	return texts
}
