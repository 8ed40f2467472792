package ldar

import (
	"context"
	"fmt"
	"math"
)

// Question is one training example: a question's candidate passages with
// their similarity scores, token counts and (for label rewards) gold
// labels, in any order. Text, Question and Answers are optional: an
// LLM-judged reward needs them, the label rewards do not.
type Question struct {
	ID       string    `json:"id"`
	Question string    `json:"question,omitempty"`
	Answers  []string  `json:"answers,omitempty"`
	Scores   []float64 `json:"scores"`
	Tokens   []int     `json:"tokens"`
	Gold     []bool    `json:"gold"`
	Texts    []string  `json:"texts,omitempty"`
	// Channels are the component curves behind Scores (a hybrid's dense
	// and lexical scores), each in the same order; a policy with
	// Config.Channels > 0 reads them.
	Channels [][]float64 `json:"channels,omitempty"`
}

func (q *Question) validate() error {
	n := len(q.Scores)
	if n == 0 {
		return fmt.Errorf("question %q: no scores", q.ID)
	}
	if len(q.Tokens) != n || len(q.Gold) != n {
		return fmt.Errorf("question %q: %d scores, %d token counts, %d gold labels", q.ID, n, len(q.Tokens), len(q.Gold))
	}
	if q.Texts != nil && len(q.Texts) != n {
		return fmt.Errorf("question %q: %d scores, %d texts", q.ID, n, len(q.Texts))
	}
	for j, ch := range q.Channels {
		if len(ch) != n {
			return fmt.Errorf("question %q: channel %d has %d scores for %d passages", q.ID, j, len(ch), n)
		}
		for _, s := range ch {
			if math.IsNaN(s) || math.IsInf(s, 0) {
				return fmt.Errorf("question %q: channel %d score is %v", q.ID, j, s)
			}
		}
	}
	for i, s := range q.Scores {
		if math.IsNaN(s) || math.IsInf(s, 0) {
			return fmt.Errorf("question %q: score %d is %v", q.ID, i, s)
		}
		if q.Tokens[i] < 0 {
			return fmt.Errorf("question %q: negative token count", q.ID)
		}
	}
	return nil
}

// GoldCount is the number of gold passages.
func (q *Question) GoldCount() int {
	n := 0
	for _, g := range q.Gold {
		if g {
			n++
		}
	}
	return n
}

// Band is a selection the policy made on a question.
type Band struct {
	// QL and QU are the sampled (training) or mean (inference) quantiles.
	QL, QU float64
	// Start and End are the selected ranks [Start, End), rank 0 = best.
	Start, End int
	// Indices are the selected passages' input positions, in rank order.
	Indices []int
	// Tokens is their token total; Total the question's.
	Tokens, Total int
}

// Reward scores a band for a question. The trainer maximises its
// expectation. A label reward computes it from gold evidence; the paper's
// reward — an LLM reads the band's passages and a judge scores the answer
// 1 or 0 — plugs in here too. Implementations must be safe for concurrent
// use; an error stops training.
type Reward interface {
	Reward(ctx context.Context, q Question, b Band) (float64, error)
}

// RewardFunc adapts a function to Reward.
type RewardFunc func(ctx context.Context, q Question, b Band) (float64, error)

// Reward calls f.
func (f RewardFunc) Reward(ctx context.Context, q Question, b Band) (float64, error) {
	return f(ctx, q, b)
}

// RecallPrice is the Lagrangian label reward: context recall (gold selected
// / gold) minus Lambda per 1,000 selected tokens. Maximising its mean is
// maximising mean recall at the mean token count it settles at: every λ is
// one point of the frontier, and a policy that beats fixed top-k there
// spends its tokens where the curve says the evidence is uncertain. The
// price is per absolute token (not per fraction of the context) because the
// budget being matched is the mean absolute token count.
type RecallPrice struct {
	Lambda float64
}

// Reward implements Reward.
func (r RecallPrice) Reward(_ context.Context, q Question, b Band) (float64, error) {
	gold := q.GoldCount()
	if gold == 0 {
		return 0, fmt.Errorf("question %q has no gold passage", q.ID)
	}
	hit := 0
	for _, i := range b.Indices {
		if q.Gold[i] {
			hit++
		}
	}
	return float64(hit)/float64(gold) - r.Lambda*float64(b.Tokens)/1000, nil
}

// Picker is Context-Picker's reward (Eq. 6) on gold labels: coverage minus
// Gamma·(|S|−|gold|)/L while |S| ≤ L = |gold| + Margin, and 0 beyond.
// It prices passages, not tokens.
type Picker struct {
	Gamma  float64
	Margin int
}

// Reward implements Reward.
func (r Picker) Reward(_ context.Context, q Question, b Band) (float64, error) {
	gold := q.GoldCount()
	if gold == 0 {
		return 0, fmt.Errorf("question %q has no gold passage", q.ID)
	}
	hit := 0
	for _, i := range b.Indices {
		if q.Gold[i] {
			hit++
		}
	}
	limit := gold + r.Margin
	k := len(b.Indices)
	if k > limit {
		return 0, nil
	}
	return float64(hit)/float64(gold) - r.Gamma*float64(k-gold)/float64(limit), nil
}
