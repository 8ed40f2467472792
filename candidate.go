// Package ctxsel decides how much, and which, retrieved context to hand an LLM.
//
// A retriever gives candidates (passages with a query similarity score and a
// token count). A Strategy reads the similarity curve those scores form and
// decides where to cut it; Select applies the strategy and the caps and returns
// a Selection that says which passages were chosen and why. Strategies are pure
// functions of the scores and token counts: they do no I/O.
//
// The score-only strategies of the literature (top-k, token budget, Adaptive-k,
// knee, threshold, top-p) live in package cutoff; scorers, embedders and the
// evaluation harness live in their own packages beside this one.
package ctxsel

import (
	"fmt"
	"math"
	"slices"
)

// Candidate is one retrieved passage as a strategy sees it.
type Candidate struct {
	ID     string  `json:"id"`
	Score  float64 `json:"score"`
	Tokens int     `json:"tokens"`
	// Channels are optional component scores behind Score (for a hybrid
	// retriever: the dense and the lexical score, in a fixed order).
	// Score-only strategies ignore them; a selector that reads several
	// curves (a two-channel band policy) needs them. Every candidate of a
	// curve has the same number of channels.
	Channels []float64 `json:"channels,omitempty"`
}

// Curve is a validated set of candidates with their similarity curve. It keeps
// the input order and sorts lazily: most strategies only need the top of the
// ranking, and sorting 100k scores costs more than the whole selection.
//
// Ranks order candidates by score, highest first; equal scores keep input
// order, so every result is deterministic.
type Curve struct {
	cands       []Candidate
	scores      []float64
	totalTokens int
	top         []int // input indices of ranks 0..len(top)-1, in rank order
}

// NewCurve validates candidates and builds their curve. It rejects empty
// input, empty or duplicate ids, NaN or infinite scores and negative token
// counts. The slice is not modified and not retained.
func NewCurve(cands []Candidate) (*Curve, error) {
	if len(cands) == 0 {
		return nil, invalidf("no candidates")
	}
	c := &Curve{cands: make([]Candidate, len(cands)), scores: make([]float64, len(cands))}
	copy(c.cands, cands)
	for i := range c.cands { // not retained: the channels are copied too
		c.cands[i].Channels = slices.Clone(c.cands[i].Channels)
	}
	if i, j, dup := firstDuplicate(cands); dup {
		return nil, &CandidateError{Index: j, ID: cands[j].ID, Field: "id", First: i,
			Msg: fmt.Sprintf("duplicate id %q (also candidate %d)", cands[j].ID, i)}
	}
	for i, cd := range cands {
		if cd.ID == "" {
			return nil, candidateErr(cands, i, "id", "empty id")
		}
		if math.IsNaN(cd.Score) || math.IsInf(cd.Score, 0) {
			return nil, candidateErr(cands, i, "score", "score %v is not a finite number", cd.Score)
		}
		if len(cd.Channels) != len(cands[0].Channels) {
			return nil, candidateErr(cands, i, "channels", "%d score channels, candidate 0 has %d", len(cd.Channels), len(cands[0].Channels))
		}
		for j, v := range cd.Channels {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, candidateErr(cands, i, "channels", "channel %d score %v is not a finite number", j, v)
			}
		}
		if cd.Tokens < 0 {
			return nil, candidateErr(cands, i, "tokens", "negative token count %d", cd.Tokens)
		}
		if c.totalTokens > math.MaxInt-cd.Tokens {
			return nil, candidateErr(cands, i, "tokens", "total token count overflows")
		}
		c.totalTokens += cd.Tokens
		c.scores[i] = cd.Score
	}
	return c, nil
}

// NewScoreCurve builds a curve from bare scores (ids "0", "1", …, no token
// counts): the form benchmarks and score-only callers use.
func NewScoreCurve(scores []float64) (*Curve, error) {
	cands := make([]Candidate, len(scores))
	for i, s := range scores {
		cands[i] = Candidate{ID: fmt.Sprint(i), Score: s}
	}
	return NewCurve(cands)
}

// Len is the number of candidates.
func (c *Curve) Len() int { return len(c.cands) }

// TotalTokens is the token count of all candidates together.
func (c *Curve) TotalTokens() int { return c.totalTokens }

// Scores returns the scores in input order. The caller must not modify it.
func (c *Curve) Scores() []float64 { return c.scores }

// Candidate returns the candidate at input position i.
func (c *Curve) Candidate(i int) Candidate { return c.cands[i] }

// Top returns the input indices of the m best-ranked candidates, in rank
// order (m is clamped to [0, Len]). The caller must not modify it. Work is
// proportional to n plus m·log m, and results are cached and grown by doubling.
func (c *Curve) Top(m int) []int {
	n := len(c.cands)
	m = min(max(m, 0), n)
	if len(c.top) >= m {
		return c.top[:m]
	}
	want := m
	if len(c.top) > 0 {
		want = min(max(m, 2*len(c.top)), n)
	}
	c.top = topIndices(c.scores, want)
	return c.top[:m]
}

// Sorted returns all scores in rank order (highest first).
func (c *Curve) Sorted() []float64 {
	idx := c.Top(c.Len())
	out := make([]float64, len(idx))
	for r, i := range idx {
		out[r] = c.scores[i]
	}
	return out
}

// NumChannels is the number of score channels each candidate carries.
func (c *Curve) NumChannels() int { return len(c.cands[0].Channels) }

// Channel returns channel j's scores in input order (a new slice).
func (c *Curve) Channel(j int) []float64 {
	out := make([]float64, len(c.cands))
	for i, cd := range c.cands {
		out[i] = cd.Channels[j]
	}
	return out
}

// TokensOf returns the token count of the candidate at input position i.
func (c *Curve) TokensOf(i int) int { return c.cands[i].Tokens }
